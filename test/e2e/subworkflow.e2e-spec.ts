import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

/** Run fields with the SUBWORKFLOW additions: the parent, the depth and the child runs. */
const CHILD = `id status workflowId version input output error parentRunId parentTaskId depth createdAt finishedAt`;
const FIELDS = `${CHILD} tasks { id nodeId status attempt input output error } children { ${CHILD} }`;

const read = (client: WeftClient, id: string) => getRun(client, id, FIELDS);

/** Polls the run (with FIELDS) until `pred` holds (default: it ended); returns it. */
const waitFor = (client: WeftClient, id: string, pred?: (run: any) => boolean, timeoutMs?: number) => waitRun(client, id, pred, timeoutMs, FIELDS);

const cancel = (client: WeftClient, runId: string) =>
  client.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id status } }`, { i: { runId, reason: 'stop' } }).then((r) => r.cancelRun);

describe('SUBWORKFLOW: a node that runs another workflow as a child run', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('subworkflows'));
    // A child that pauses (so the parent can be seen waiting), then doubles its input.
    await publish(client, 'double', {
      nodes: [{ node_id: 'pause', type: 'WAIT', spec: { duration_seconds: 0.6 } }, jsNode('double', 'return { doubled: input.n * 2 };', { n: '{{input.n}}' })],
      edges: [{ from: 'pause', to: 'double' }],
      output: '{{tasks.double.output}}',
    });
    // A child that echoes the input it was started with.
    await publish(client, 'echo', {
      nodes: [jsNode('echo', 'return { got: input.got };', { got: '{{input}}' })],
      edges: [],
      output: '{{tasks.echo.output.got}}',
    });
  });
  afterAll(() => e2e.close());

  it('waits for the child run and continues with its output', async () => {
    await publish(client, 'caller', {
      nodes: [
        { node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: '{{input.child}}', input: { n: '{{input.n}}' } } },
        jsNode('after', 'return { plus_one: input.r.doubled + 1 };', { r: '{{tasks.call.output}}' }),
      ],
      edges: [{ from: 'call', to: 'after' }],
    });
    const runId = await start(client, 'caller', { child: 'double', n: 21 });

    const waiting = await waitFor(client, runId, (r) => r.children.length === 1 && r.children[0].status === 'RUNNING');
    expect(task(waiting, 'call').status).toBe('WAITING');
    expect(task(waiting, 'after')).toBeUndefined();
    expect(waiting.children[0]).toMatchObject({
      workflowId: 'double',
      version: 1,
      parentRunId: runId,
      parentTaskId: task(waiting, 'call').id,
      depth: 1,
      input: { n: 21 },
    });

    const run = await waitFor(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(run).toMatchObject({ parentRunId: null, parentTaskId: null, depth: 0 });
    const child = await read(client, waiting.children[0].id); // the child is a run of the same tenant
    expect(child).toMatchObject({ status: 'SUCCEEDED', output: { doubled: 42 }, parentRunId: runId, depth: 1, children: [] });
    expect(task(run, 'call')).toMatchObject({ status: 'COMPLETED', attempt: 0, output: { doubled: 42 } });
    expect(task(run, 'after').output).toEqual({ plus_one: 43 });
    expect(run.children.map((c: any) => c.id)).toEqual([child.id]);
  });

  it('starts the child on spec.version, else on its default version, with input {} when none is given', async () => {
    expect(
      await publish(client, 'versioned', {
        nodes: [jsNode('v', 'return { v: 1, got: input.got };', { got: '{{input}}' })],
        edges: [],
        output: '{{tasks.v.output}}',
      }),
    ).toBe(1);
    expect(
      await publish(client, 'versioned', {
        nodes: [jsNode('v', 'return { v: 2, got: input.got };', { got: '{{input}}' })],
        edges: [],
        output: '{{tasks.v.output}}',
      }),
    ).toBe(2);
    await publish(client, 'picks-versions', {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        { node_id: 'pinned', type: 'SUBWORKFLOW', spec: { workflow: 'versioned', version: 1, input: { who: 'pinned' } } },
        { node_id: 'latest', type: 'SUBWORKFLOW', spec: { workflow: 'versioned' } },
      ],
      edges: [
        { from: 'f', to: 'pinned' },
        { from: 'f', to: 'latest' },
      ],
    });
    const run = await waitFor(client, await start(client, 'picks-versions'));
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'pinned').output).toEqual({ v: 1, got: { who: 'pinned' } });
    expect(task(run, 'latest').output).toEqual({ v: 2, got: {} });
    expect(run.children.map((c: any) => [c.version, c.input]).sort()).toEqual([
      [1, { who: 'pinned' }],
      [2, {}],
    ]);
  });

  it('retries a failed child with a new child run when the node has attempts left', async () => {
    await publish(client, 'flaky-child', {
      nodes: [{ node_id: 'call', type: 'HTTP', spec: { url: '{{input.url}}', method: 'GET' } }],
      edges: [],
      output: '{{tasks.call.output}}',
    });
    await publish(client, 'retries-child', {
      nodes: [
        {
          node_id: 'sub',
          type: 'SUBWORKFLOW',
          retry: { max_attempts: 2, backoff_seconds: 0.1 },
          spec: { workflow: 'flaky-child', input: { url: '{{config.shop}}/flaky/sub-retry?fail=1' } },
        },
      ],
      edges: [],
    });
    const run = await waitFor(client, await start(client, 'retries-child', {}, { config: { shop: e2e.shop.url } }));

    expect(run.status).toBe('SUCCEEDED');
    expect(run.children).toHaveLength(2);
    const first = run.children.find((c: any) => c.status === 'FAILED');
    const second = run.children.find((c: any) => c.status !== 'FAILED');
    expect(task(await read(client, first.id), 'call').error).toContain('503');
    expect(second).toMatchObject({ status: 'SUCCEEDED', output: { ok: true, calls: 2 } });
    expect(task(run, 'sub')).toMatchObject({ status: 'COMPLETED', attempt: 1, output: { ok: true, calls: 2 } });
    expect(e2e.shop.calls.get('sub-retry')).toBe(2);
  });

  it('fails the node and the parent when the child fails on every attempt, naming the child run and its error', async () => {
    await publish(client, 'out-of-stock', {
      nodes: [jsNode('reserve', 'throw new Error("out of stock: " + input.sku);', { sku: '{{input.sku}}' })],
      edges: [],
    });
    await publish(client, 'buys', {
      nodes: [
        { node_id: 'buy', type: 'SUBWORKFLOW', retry: { max_attempts: 2, backoff_seconds: 0.1 }, spec: { workflow: 'out-of-stock', input: { sku: 'X-9' } } },
        jsNode('after', 'return {};'),
      ],
      edges: [{ from: 'buy', to: 'after' }],
    });
    const run = await waitFor(client, await start(client, 'buys'));

    expect(run.status).toBe('FAILED');
    expect(run.children).toHaveLength(2);
    expect(run.children.map((c: any) => c.status)).toEqual(['FAILED', 'FAILED']);
    const buy = task(run, 'buy');
    expect(buy).toMatchObject({ status: 'FAILED', attempt: 1 });
    // The node's reason names the child run of its last attempt and that run's error.
    const last = run.children.find((c: any) => buy.error.includes(`child run ${c.id} failed`));
    expect(last).toBeDefined();
    expect(buy.error).toContain(last.error);
    // ...which names the cause, the child's failed node and its error, once.
    expect(last.error).toBe('node reserve failed: Error: out of stock: X-9 (handler.js:1:33)');
    expect(buy.error).toBe(`child run ${last.id} failed: node reserve failed: Error: out of stock: X-9 (handler.js:1:33)`);
    expect(run.error).toBe(`node buy failed: child run ${last.id} failed: node reserve failed: Error: out of stock: X-9 (handler.js:1:33)`);
    for (const c of run.children) expect(task(await read(client, c.id), 'reserve').error).toContain('out of stock: X-9');
    expect(task(run, 'after')).toBeUndefined();
  });

  it('starts a new child when the run is retried from a failed SUBWORKFLOW node', async () => {
    await publish(client, 'checks-stock', {
      nodes: [jsNode('reserve', 'if (input.qty > 3) throw new Error("only 3 left"); return { reserved: input.qty };', { qty: '{{input.qty}}' })],
      edges: [],
      output: '{{tasks.reserve.output}}',
    });
    await publish(client, 'orders-stock', {
      nodes: [{ node_id: 'stock', type: 'SUBWORKFLOW', spec: { workflow: 'checks-stock', input: { qty: '{{input.qty}}' } } }],
      edges: [],
    });
    const runId = await start(client, 'orders-stock', { qty: 5 });
    expect((await waitFor(client, runId)).status).toBe('FAILED');

    await client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId, fromNodeId: 'stock', input: { qty: 2 } } });
    const run = await waitFor(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'stock').output).toEqual({ reserved: 2 });
    expect(run.children.map((c: any) => [c.status, c.input])).toEqual(
      expect.arrayContaining([
        ['FAILED', { qty: 5 }],
        ['SUCCEEDED', { qty: 2 }],
      ]),
    );
    expect(run.children).toHaveLength(2);
  });

  it.each([
    ['an unknown workflow', { workflow: 'no-such-flow' }, 'no-such-flow'],
    ['an unknown version', { workflow: 'echo', version: 99 }, 'echo'],
  ])('fails the node on %s without creating a child run', async (_what, spec, named) => {
    await publish(client, 'calls-missing', { nodes: [{ node_id: 'sub', type: 'SUBWORKFLOW', spec }], edges: [] });
    const run = await waitFor(client, await start(client, 'calls-missing'));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'sub').status).toBe('FAILED');
    expect(task(run, 'sub').error).toContain(named);
    expect(run.children).toEqual([]);
  });

  it('fails the node on a deprecated version of the child workflow', async () => {
    await publish(client, 'retired', { nodes: [jsNode('x', 'return {};')], edges: [] });
    await client.request(`mutation { deprecateVersion(workflowId: "retired", version: 1) { version } }`);
    await publish(client, 'calls-retired', { nodes: [{ node_id: 'sub', type: 'SUBWORKFLOW', spec: { workflow: 'retired', version: 1 } }], edges: [] });
    const run = await waitFor(client, await start(client, 'calls-retired'));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'sub').error).toContain('retired');
    expect(task(run, 'sub').error).toContain('deprecated');
    expect(run.children).toEqual([]);
  });

  it('cancels the running children when the parent is cancelled', async () => {
    await publish(client, 'waits-forever', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 120 } }], edges: [] });
    await publish(client, 'parent-of-waiter', { nodes: [{ node_id: 'sub', type: 'SUBWORKFLOW', spec: { workflow: 'waits-forever' } }], edges: [] });
    const runId = await start(client, 'parent-of-waiter');
    const before = await waitFor(client, runId, (r) => r.children[0]?.status === 'RUNNING');
    const childId = before.children[0].id;
    await waitFor(client, childId, (r) => task(r, 'gate')?.status === 'WAITING');

    expect((await cancel(client, runId)).status).toBe('CANCELLED');
    const child = await waitFor(client, childId, (r) => r.status !== 'RUNNING', 5_000);
    expect(child.status).toBe('CANCELLED');
    expect(task(child, 'gate').status).toBe('CANCELLED');
    const parent = await read(client, runId);
    expect(parent.status).toBe('CANCELLED');
    expect(task(parent, 'sub').status).toBe('CANCELLED');
  });

  it('fails the node when its child is cancelled on its own, and the parent with it', async () => {
    await publish(client, 'waits-forever', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 120 } }], edges: [] });
    await publish(client, 'parent-of-cancelled', {
      nodes: [{ node_id: 'sub', type: 'SUBWORKFLOW', spec: { workflow: 'waits-forever' } }, jsNode('after', 'return {};')],
      edges: [{ from: 'sub', to: 'after' }],
    });
    const runId = await start(client, 'parent-of-cancelled');
    const childId = (await waitFor(client, runId, (r) => r.children[0]?.status === 'RUNNING')).children[0].id;
    await waitFor(client, childId, (r) => task(r, 'gate')?.status === 'WAITING');

    expect((await cancel(client, childId)).status).toBe('CANCELLED');
    const run = await waitFor(client, runId, undefined, 5_000);
    expect(run.status).toBe('FAILED');
    expect(task(run, 'sub').status).toBe('FAILED');
    expect(task(run, 'sub').error).toContain(childId);
    expect(task(run, 'sub').error).toContain('cancel');
    expect(task(run, 'after')).toBeUndefined();
  });

  it('waits the retry backoff even when the child fails the moment it starts', async () => {
    // The child's only node cannot resolve its input: the child fails inside its own start.
    await publish(client, 'broken', { nodes: [jsNode('x', 'return {};', { v: '{{input.missing.deep}}' })], edges: [] });
    await publish(client, 'retries-broken', {
      nodes: [{ node_id: 'call', type: 'SUBWORKFLOW', retry: { max_attempts: 2, backoff_seconds: 1 }, spec: { workflow: 'broken' } }],
      edges: [],
    });
    const run = await waitFor(client, await start(client, 'retries-broken'));
    expect(run.status).toBe('FAILED');
    expect(run.children.map((c: any) => c.status)).toEqual(['FAILED', 'FAILED']);
    const [first, second] = run.children;
    expect(Date.parse(second.createdAt) - Date.parse(first.finishedAt)).toBeGreaterThanOrEqual(1000);
  });

  it('stops a workflow that calls itself at depth 10: the deepest node fails and every run in the chain fails', async () => {
    await publish(client, 'forever', {
      nodes: [{ node_id: 'deeper', type: 'SUBWORKFLOW', spec: { workflow: 'forever', input: { level: '{{input.level + 1}}' } } }],
      edges: [],
    });
    const top = await waitFor(client, await start(client, 'forever', { level: 0 }), undefined, 60_000);
    expect(top.status).toBe('FAILED');

    // Walk the chain down from the top run.
    const chain = [top];
    while (chain.at(-1)!.children.length > 0) {
      expect(chain.at(-1)!.children).toHaveLength(1);
      chain.push(await read(client, chain.at(-1)!.children[0].id));
    }
    expect(chain.map((r) => r.depth)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(chain.map((r) => r.input.level)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(chain.map((r) => r.status)).toEqual(Array(11).fill('FAILED'));
    for (let i = 1; i < chain.length; i++) expect(chain[i].parentRunId).toBe(chain[i - 1].id);

    const deepest = task(chain[10], 'deeper');
    expect(deepest.status).toBe('FAILED');
    expect(deepest.error).toMatch(/depth/i);
    expect(deepest.error).toContain('10');
    // The failure travelled up: each parent's node names the child that failed.
    expect(task(chain[9], 'deeper').error).toContain(chain[10].id);
    expect(task(top, 'deeper').error).toContain(chain[1].id);
  });
});

describe('SUBWORKFLOW: a recursive fan-out is bounded (tree of runs, one level per transaction)', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_MAX_RUN_TREE: 20 });
    ({ client } = await e2e.tenant('fan-out'));
  });
  afterAll(() => e2e.close());

  it('stops a workflow that starts itself twice at every level once its tree holds 20 runs, and every run ends', async () => {
    // Unbounded, this tree would hold 2^11 - 1 = 2,047 runs within the depth limit.
    await publish(client, 'fan2', {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        { node_id: 'left', type: 'SUBWORKFLOW', spec: { workflow: 'fan2' } },
        { node_id: 'right', type: 'SUBWORKFLOW', spec: { workflow: 'fan2' } },
      ],
      edges: [
        { from: 'f', to: 'left' },
        { from: 'f', to: 'right' },
      ],
    });
    const top = await waitFor(client, await start(client, 'fan2'), undefined, 60_000);
    expect(top.status).toBe('FAILED');

    // Every run of the tree, walked down from the top; each has ended.
    const tree = [top];
    for (let i = 0; i < tree.length; i++) {
      for (const c of tree[i].children) tree.push(await waitFor(client, c.id, undefined, 60_000));
    }
    expect(tree.length).toBeGreaterThanOrEqual(10);
    expect(tree.length).toBeLessThanOrEqual(20);
    expect(tree.filter((r) => r.status === 'RUNNING')).toEqual([]);
    const refused = tree.flatMap((r) => r.tasks.filter((t: any) => /tree of runs already holds \d+ runs, the limit of 20/.test(t.error ?? '')));
    expect(refused.length).toBeGreaterThan(0);
  });
});

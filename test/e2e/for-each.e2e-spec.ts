import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { TERMINAL, getRun, iterations, jsNode, publish, rejection, start, startE2E, task as node, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/** Run fields with each task's `iteration` (null for a node's own, or aggregate, task). */
const FIELDS = `id status output error tasks { id nodeId status attempt input output error iteration }`;
const ACTIVE = ['PENDING', 'QUEUED', 'RUNNING', 'WAITING'];

const read = (client: WeftClient, id: string) => getRun(client, id, FIELDS);

/** Polls the run (with FIELDS) until `pred` holds (default: it ended); `seen` gets every state read. */
const waitFor = (
  client: WeftClient,
  id: string,
  pred: (run: any) => boolean = (r) => TERMINAL.includes(r.status),
  seen: (run: any) => void = () => {},
  timeoutMs = 50_000,
) =>
  waitRun(
    client,
    id,
    (run) => {
      seen(run);
      return pred(run);
    },
    timeoutMs,
    FIELDS,
  );

/**
 * A local service: `POST /echo` answers its JSON body after `delay_ms` (from the body, default
 * 150); the stub records each request's start and end and the most it held at once.
 */
const echoService = () =>
  stubServer((_req, res, _n, raw) => {
    const body = raw ? JSON.parse(raw) : null;
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)), body?.delay_ms ?? 150);
  });

describe('for_each: one task per element of an array', () => {
  let e2e: E2E;
  let client: WeftClient;
  let echo: Awaited<ReturnType<typeof echoService>>;

  beforeAll(async () => {
    e2e = await startE2E();
    echo = await echoService();
    ({ client } = await e2e.tenant('for-each'));
  });
  afterAll(async () => {
    await echo.close();
    await e2e.close();
  });

  it('runs one task per element and outputs their results in element order, not completion order', async () => {
    await publish(client, 'squares', {
      nodes: [
        {
          ...jsNode('square', 'return new Promise((r) => setTimeout(() => r({ sq: input.v * input.v, i: input.i, n: input.n }), (input.n - input.i) * 250));', {
            v: '{{item}}',
            i: '{{itemIndex}}',
            n: '{{itemCount}}',
          }),
          for_each: '{{input.xs}}',
        },
        jsNode('total', 'return { sum: input.all.reduce((s, o) => s + o.sq, 0), count: input.all.length };', { all: '{{tasks.square.output}}' }),
      ],
      edges: [{ from: 'square', to: 'total' }],
    });
    const run = await waitFor(client, await start(client, 'squares', { xs: [1, 2, 3, 4] }));

    expect(run.status).toBe('SUCCEEDED');
    // The first element finishes last (it sleeps longest), yet comes first.
    const expected = [
      { sq: 1, i: 0, n: 4 },
      { sq: 4, i: 1, n: 4 },
      { sq: 9, i: 2, n: 4 },
      { sq: 16, i: 3, n: 4 },
    ];
    expect(node(run, 'square')).toMatchObject({ status: 'COMPLETED', output: expected });
    expect(iterations(run, 'square').map((t) => [t.iteration, t.status, t.input.v, t.output])).toEqual(expected.map((o, i) => [i, 'COMPLETED', i + 1, o]));
    expect(new Set(iterations(run, 'square').map((t) => t.id)).size).toBe(4);
    expect(node(run, 'total')).toMatchObject({ status: 'COMPLETED', output: { sum: 30, count: 4 } });

    // The history tells the iterations apart: each report carries its element's index.
    const { run: withHistory } = await client.request(`query($id: ID!) { run(id: $id) { history { type nodeId payload } } }`, { id: run.id });
    const reports = withHistory.history.filter((e: any) => e.type === 'NodeCompleted' && e.nodeId === 'square');
    expect(reports.map((e: any) => e.payload.iteration).sort()).toEqual([0, 1, 2, 3]);
  });

  it('names the element with `as` (and `<as>Index`, `<as>Count`) on an HTTP node', async () => {
    echo.reset();
    await publish(client, 'labels', {
      nodes: [
        {
          node_id: 'label',
          type: 'HTTP',
          for_each: '{{input.orders}}',
          as: 'order',
          spec: {
            url: '{{config.base_url}}/echo',
            method: 'POST',
            body: { id: '{{order.id}}', label: 'order {{orderIndex + 1}}/{{orderCount}}: {{order.id}}', delay_ms: 10 },
          },
        },
      ],
      edges: [],
    });
    const run = await waitFor(client, await start(client, 'labels', { orders: [{ id: 'a7' }, { id: 'b8' }] }, { config: { base_url: echo.base } }));
    expect(run.status).toBe('SUCCEEDED');
    expect(node(run, 'label').output).toEqual([
      { id: 'a7', label: 'order 1/2: a7', delay_ms: 10 },
      { id: 'b8', label: 'order 2/2: b8', delay_ms: 10 },
    ]);
    expect(echo.hits).toHaveLength(2);
    expect(run.output).toEqual({ label: node(run, 'label').output }); // a for_each sink's output is the node's, not an iteration's
  });

  it('holds iterations beyond max_concurrency WAITING: with 1, the requests never overlap', async () => {
    echo.reset();
    await publish(client, 'one-at-a-time', {
      nodes: [
        {
          node_id: 'call',
          type: 'HTTP',
          for_each: '{{input.xs}}',
          max_concurrency: 1,
          spec: { url: '{{config.base_url}}/echo', method: 'POST', body: { x: '{{item}}', delay_ms: 200 } },
        },
      ],
      edges: [],
    });
    let mostDispatched = 0;
    let sawWaiting = false;
    const run = await waitFor(client, await start(client, 'one-at-a-time', { xs: [1, 2, 3, 4] }, { config: { base_url: echo.base } }), undefined, (r) => {
      const its = iterations(r, 'call');
      mostDispatched = Math.max(mostDispatched, its.filter((t) => t.status === 'QUEUED' || t.status === 'RUNNING').length);
      if (its.some((t) => t.status === 'WAITING')) sawWaiting = true;
    });

    expect(run.status).toBe('SUCCEEDED');
    expect(node(run, 'call').output.map((o: any) => o.x)).toEqual([1, 2, 3, 4]);
    expect(sawWaiting).toBe(true);
    expect(mostDispatched).toBe(1);
    expect(echo.maxActive).toBe(1);
    const spans = [...echo.hits].sort((a, b) => a.at - b.at);
    expect(spans).toHaveLength(4);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.at).toBeGreaterThanOrEqual(spans[i - 1]!.endedAt);
  });

  it('dispatches at most max_concurrency iterations at a time, and uses them all', async () => {
    echo.reset();
    await publish(client, 'two-at-a-time', {
      nodes: [
        {
          node_id: 'call',
          type: 'HTTP',
          for_each: '{{input.xs}}',
          max_concurrency: 2,
          spec: { url: '{{config.base_url}}/echo', method: 'POST', body: { x: '{{item}}', delay_ms: 300 } },
        },
      ],
      edges: [],
    });
    const run = await waitFor(client, await start(client, 'two-at-a-time', { xs: [1, 2, 3, 4, 5, 6] }, { config: { base_url: echo.base } }));
    expect(run.status).toBe('SUCCEEDED');
    expect(echo.hits).toHaveLength(6);
    expect(echo.maxActive).toBe(2);
    expect(node(run, 'call').output.map((o: any) => o.x)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('merges the iteration outputs field by field with node-level reducers, unlisted fields replaced in element order', async () => {
    await publish(client, 'tally', {
      nodes: [
        {
          ...jsNode(
            'count',
            'return new Promise((r) => setTimeout(() => r({ total: input.n, tags: input.tags, last: input.name, seen: [input.name] }), input.wait));',
            {
              n: '{{line.n}}',
              tags: '{{line.tags}}',
              name: '{{line.name}}',
              wait: '{{(lineCount - lineIndex) * 200}}',
            },
          ),
          for_each: '{{input.lines}}',
          as: 'line',
          reducers: { total: 'add', tags: 'union', seen: 'append' },
        },
        jsNode('report', 'return { summary: (input.m.total ?? 0) + " from " + (input.m.seen ?? []).join(",") };', { m: '{{tasks.count.output}}' }),
      ],
      edges: [{ from: 'count', to: 'report' }],
    });
    const lines = [
      { name: 'a', n: 2, tags: ['x', 'y'] },
      { name: 'b', n: 5, tags: ['y'] },
      { name: 'c', n: 0.5, tags: ['z', 'x'] },
    ];
    const run = await waitFor(client, await start(client, 'tally', { lines }));
    expect(run.status).toBe('SUCCEEDED');
    // 'c' finished first (shortest wait), yet `last` is the last element's: element order.
    expect(node(run, 'count').output).toEqual({ total: 7.5, tags: ['x', 'y', 'z'], last: 'c', seen: ['a', 'b', 'c'] });
    expect(iterations(run, 'count')).toHaveLength(3);
    expect(node(run, 'report').output).toEqual({ summary: '7.5 from a,b,c' });

    const empty = await waitFor(client, await start(client, 'tally', { lines: [] }));
    expect(empty.status).toBe('SUCCEEDED');
    expect(node(empty, 'count')).toMatchObject({ status: 'COMPLETED', output: {} }); // with reducers: {}, not []
    expect(iterations(empty, 'count')).toEqual([]);
    expect(node(empty, 'report').output).toEqual({ summary: '0 from ' });
  });

  it('completes at once with [] on an empty array, creating no iteration, and runs the successors', async () => {
    await publish(client, 'nothing-to-do', {
      nodes: [
        { ...jsNode('each', 'throw new Error("never runs");', { v: '{{item}}' }), for_each: '{{input.xs}}' },
        jsNode('after', 'return { got: input.got };', { got: '{{tasks.each.output}}' }),
      ],
      edges: [{ from: 'each', to: 'after' }],
    });
    const run = await waitFor(client, await start(client, 'nothing-to-do', { xs: [] }));
    expect(run.status).toBe('SUCCEEDED');
    expect(node(run, 'each')).toMatchObject({ status: 'COMPLETED', output: [] });
    expect(iterations(run, 'each')).toEqual([]);
    expect(node(run, 'after')).toMatchObject({ status: 'COMPLETED', output: { got: [] } });
  });

  describe('a for_each that does not give a usable array', () => {
    beforeAll(async () => {
      await publish(client, 'needs-array', {
        nodes: [{ ...jsNode('each', 'return {};', { v: '{{item}}' }), for_each: '{{input.xs}}' }, jsNode('after', 'return {};')],
        edges: [{ from: 'each', to: 'after' }],
      });
    });

    it.each([
      ['an object', { a: 1 }],
      ['a number', 5],
    ])('fails the node at once on %s, naming the node, and the run fails', async (_what, xs) => {
      const run = await waitFor(client, await start(client, 'needs-array', { xs }));
      expect(run.status).toBe('FAILED');
      expect(node(run, 'each').status).toBe('FAILED');
      expect(node(run, 'each').error).toContain('each');
      expect(node(run, 'each').error).toContain('must give an array');
      expect(iterations(run, 'each')).toEqual([]);
      expect(node(run, 'after')).toBeUndefined();
    });

    it('lets an on_error edge handle it: the handler reads the reason and the run succeeds', async () => {
      await publish(client, 'needs-array-handled', {
        nodes: [
          { ...jsNode('each', 'return {};', { v: '{{item}}' }), for_each: '{{input.xs}}' },
          jsNode('after', 'return {};'),
          jsNode('fallback', 'return { because: input.why };', { why: '{{tasks.each.error}}' }),
        ],
        edges: [
          { from: 'each', to: 'after' },
          { from: 'each', to: 'fallback', on_error: true },
        ],
      });
      const run = await waitFor(client, await start(client, 'needs-array-handled', { xs: 'abc' }));
      expect(run.status).toBe('SUCCEEDED');
      expect(node(run, 'each').status).toBe('FAILED');
      expect(node(run, 'after').status).toBe('SKIPPED');
      expect(node(run, 'fallback').output.because).toContain('must give an array');
    });

    it('fails the node when the array has more than 10,000 elements', async () => {
      const run = await waitFor(client, await start(client, 'needs-array', { xs: Array.from({ length: 10_001 }, (_, i) => i) }));
      expect(run.status).toBe('FAILED');
      expect(node(run, 'each').status).toBe('FAILED');
      expect(node(run, 'each').error).toContain('each');
      expect(node(run, 'each').error).toMatch(/10[,_ ]?000/);
      expect(iterations(run, 'each')).toEqual([]);
    });
  });

  it('fails the node when one iteration fails for good: unstarted ones are SKIPPED, running ones finish', async () => {
    await publish(client, 'one-bad-apple', {
      nodes: [
        {
          ...jsNode(
            'check',
            `if (input.x === 'bad') throw new Error('bad element ' + input.i);
             return new Promise((r) => setTimeout(() => r({ ok: input.x }), input.x === 'slow' ? 15000 : 10));`,
            { x: '{{item}}', i: '{{itemIndex}}' },
          ),
          for_each: '{{input.xs}}',
          max_concurrency: 2,
          retry: { max_attempts: 2, backoff_seconds: 0.1 },
        },
        jsNode('after', 'return {};'),
      ],
      edges: [{ from: 'check', to: 'after' }],
    });
    // 'slow' holds its slot for 15 s: far longer than 'fast' and both attempts of 'bad' take
    // beside it, even on a loaded machine, so it is still running when 'bad' fails for good.
    const run = await waitFor(client, await start(client, 'one-bad-apple', { xs: ['slow', 'fast', 'bad', 'later', 'last'] }), undefined, undefined, 100_000);

    expect(run.status).toBe('FAILED');
    expect(iterations(run, 'check').map((t) => [t.iteration, t.status])).toEqual([
      [0, 'COMPLETED'], // was running when 2 failed: it finished
      [1, 'COMPLETED'],
      [2, 'FAILED'],
      [3, 'SKIPPED'],
      [4, 'SKIPPED'],
    ]);
    expect(iterations(run, 'check')[2]).toMatchObject({ attempt: 1, error: expect.stringContaining('bad element 2') });
    expect(node(run, 'check').status).toBe('FAILED');
    expect(node(run, 'check').error).toContain('iteration 2 of 5 failed');
    expect(node(run, 'check').error).toContain('bad element 2');
    expect(node(run, 'after')).toBeUndefined();
  }, 120_000);

  it('retries a failed for_each node from scratch over the new input: no iteration of the old array is left', async () => {
    await publish(client, 'no-negatives', {
      nodes: [
        { ...jsNode('each', 'if (input.v < 0) throw new Error("negative: " + input.v); return { v: input.v };', { v: '{{item}}' }), for_each: '{{input.xs}}' },
      ],
      edges: [],
    });
    const runId = await start(client, 'no-negatives', { xs: [1, -2, 3] });
    const failed = await waitFor(client, runId);
    expect(failed.status).toBe('FAILED');
    expect(node(failed, 'each').error).toContain('iteration 1 of 3 failed');
    expect(node(failed, 'each').error).toContain('negative: -2');

    await client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId, fromNodeId: 'each', input: { xs: [5, 6] } } });
    const run = await waitFor(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(node(run, 'each')).toMatchObject({ status: 'COMPLETED', output: [{ v: 5 }, { v: 6 }] });
    expect(iterations(run, 'each').map((t) => [t.iteration, t.status, t.output])).toEqual([
      [0, 'COMPLETED', { v: 5 }],
      [1, 'COMPLETED', { v: 6 }],
    ]);
  });

  it('cancels the active iterations when the run is cancelled', async () => {
    await publish(client, 'long-haul', {
      nodes: [
        {
          ...jsNode('slow', 'return new Promise((r) => setTimeout(() => r({ done: input.x }), 6000));', { x: '{{item}}' }),
          for_each: '{{input.xs}}',
          max_concurrency: 2,
        },
      ],
      edges: [],
    });
    const runId = await start(client, 'long-haul', { xs: [1, 2, 3] });
    await waitFor(client, runId, (r) => iterations(r, 'slow').filter((t) => t.status === 'RUNNING').length === 2);
    const r = await client.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id status } }`, { i: { runId, reason: 'enough' } });
    expect(r.cancelRun.status).toBe('CANCELLED');

    const run = await read(client, runId);
    expect(run.status).toBe('CANCELLED');
    expect(node(run, 'slow').status).toBe('CANCELLED');
    const its = iterations(run, 'slow');
    expect(its.slice(0, 2).map((t) => t.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(its.filter((t) => ACTIVE.includes(t.status))).toEqual([]);
  });

  describe('publishing refuses a bad for_each with BAD_USER_INPUT naming the path', () => {
    const worker = (extra: Record<string, unknown>) => ({ ...jsNode('w', 'return {};'), ...extra });
    const cases: [string, unknown[], string][] = [
      ['for_each on a SWITCH', [jsNode('a', 'return {};'), { node_id: 's', type: 'SWITCH', for_each: '{{input.xs}}' }], 'nodes[1].for_each'],
      [
        'for_each on a WAIT',
        [jsNode('a', 'return {};'), { node_id: 'p', type: 'WAIT', for_each: '{{input.xs}}', spec: { duration_seconds: 1 } }],
        'nodes[1].for_each',
      ],
      ['a for_each that is not a {{ }} template', [worker({ for_each: 'input.xs' })], 'nodes[0].for_each'],
      ['`as` naming a reserved root', [worker({ for_each: '{{input.xs}}', as: 'input' })], 'nodes[0].as'],
      ['`as` that is not an identifier', [worker({ for_each: '{{input.xs}}', as: 'my item' })], 'nodes[0].as'],
      ['max_concurrency 0', [worker({ for_each: '{{input.xs}}', max_concurrency: 0 })], 'nodes[0].max_concurrency'],
      ['max_concurrency 1.5', [worker({ for_each: '{{input.xs}}', max_concurrency: 1.5 })], 'nodes[0].max_concurrency'],
      ['reducers without for_each', [worker({ reducers: { total: 'add' } })], 'nodes[0].reducers'],
      ['an unknown reducer', [worker({ for_each: '{{input.xs}}', reducers: { total: 'sum' } })], 'nodes[0].reducers.total'],
    ];
    it.each(cases)('%s', async (_what, nodes, path) => {
      const edges = nodes.length === 2 ? [{ from: 'a', to: (nodes[1] as any).node_id }] : [];
      const err = await rejection(publish(client, 'bad-for-each', { nodes, edges }));
      expect(err.code).toBe('BAD_USER_INPUT');
      expect(err.errors[0]!.extensions!.problems).toEqual([expect.objectContaining({ path })]);
    });
  });
});

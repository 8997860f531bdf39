import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { TERMINAL, getRun, jsNode, publish, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/** Run fields with each task's loop iteration. */
const FIELDS = `id status output error tasks { id nodeId status input output error loopIteration }`;

/**
 * A DO_WHILE end to end: real PostgreSQL, Redis, coordinator, scheduler and a js worker. The body
 * counts up from the previous iteration's output; every iteration's tasks stay readable.
 */
describe('DO_WHILE', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('do-while'));
  });
  afterAll(async () => {
    await e2e.close();
  });

  /** start → loop {count → check} → after; the loop repeats while `condition` holds, at most `max` times. */
  const define = (id: string, condition: string, max: number) =>
    publish(client, id, {
      nodes: [
        jsNode('start', 'return { from: input.from };', { from: '{{input.from}}' }),
        {
          node_id: 'loop',
          type: 'DO_WHILE',
          spec: {
            body: {
              nodes: [
                jsNode('count', 'return { n: (input.prev === null ? input.from : input.prev.check.n) + 1, i: input.i };', {
                  prev: '{{tasks.loop.previous}}',
                  from: '{{tasks.start.output.from}}',
                  i: '{{tasks.loop.iteration}}',
                }),
                jsNode('check', 'return { n: input.n, i: input.i };', { n: '{{tasks.count.output.n}}', i: '{{tasks.count.output.i}}' }),
              ],
              edges: [{ from: 'count', to: 'check' }],
            },
            condition,
            max_iterations: max,
          },
        },
        jsNode('after', 'return { last: input.last };', { last: '{{tasks.loop.output}}' }),
      ],
      edges: [
        { from: 'start', to: 'loop' },
        { from: 'loop', to: 'after' },
      ],
    });

  const ended = (id: string) => waitRun(client, id, (r: any) => TERMINAL.includes(r.status), 60_000, FIELDS);
  const byIteration = (run: any, nodeId: string) =>
    run.tasks
      .filter((t: any) => t.nodeId === nodeId)
      .map((t: any) => [t.loopIteration, t.status, t.output])
      .sort((a: any, b: any) => a[0] - b[0]);

  it('runs its body until the condition is false, keeping every iteration, and hands the last output on', async () => {
    await define('count-up', '{{ tasks.check.output.n < 3 }}', 5);
    const run = await ended(await start(client, 'count-up', { from: 0 }));
    expect(run.status).toBe('SUCCEEDED');
    expect(byIteration(run, 'count')).toEqual([
      [0, 'COMPLETED', { n: 1, i: 0 }],
      [1, 'COMPLETED', { n: 2, i: 1 }],
      [2, 'COMPLETED', { n: 3, i: 2 }],
    ]);
    expect(byIteration(run, 'check').map((t: any) => t[0])).toEqual([0, 1, 2]);
    const loop = run.tasks.find((t: any) => t.nodeId === 'loop');
    expect(loop).toMatchObject({ status: 'COMPLETED', loopIteration: 2, output: { check: { n: 3, i: 2 } } });
    expect(run.tasks.filter((t: any) => ['start', 'after'].includes(t.nodeId)).every((t: any) => t.loopIteration === null)).toBe(true);
    expect(run.output).toEqual({ after: { last: { check: { n: 3, i: 2 } } } });
    // The history says which iteration each body report was for.
    const history = (await getRun(client, run.id, 'history(first: 200) { type nodeId payload }')).history;
    for (const node of ['count', 'check']) {
      // check's report ends its iteration: the next one starts in the same event.
      expect(history.filter((e: any) => e.type === 'NodeCompleted' && e.nodeId === node).map((e: any) => e.payload.loopIteration)).toEqual([0, 1, 2]);
    }
  });

  it('ends early when the condition is false after the first iteration', async () => {
    const run = await ended(await start(client, 'count-up', { from: 10 }));
    expect(run.status).toBe('SUCCEEDED');
    expect(byIteration(run, 'count')).toEqual([[0, 'COMPLETED', { n: 11, i: 0 }]]);
    expect(run.output).toEqual({ after: { last: { check: { n: 11, i: 0 } } } });
  });

  it('fails at max_iterations with the condition still true, every iteration visible, and runs again from the loop on a retry', async () => {
    await define('count-forever', '{{ tasks.check.output.n > 0 }}', 3);
    const id = await start(client, 'count-forever', { from: 0 });
    const run = await ended(id);
    expect(run.status).toBe('FAILED');
    expect(run.error).toBe('node loop failed: DO_WHILE loop reached max_iterations 3 with its condition still true');
    expect(byIteration(run, 'count').map((t: any) => t.slice(0, 2))).toEqual([
      [0, 'COMPLETED'],
      [1, 'COMPLETED'],
      [2, 'COMPLETED'],
    ]);
    expect(run.tasks.some((t: any) => t.nodeId === 'after')).toBe(false);
    // A failed loop has no output; its input is the previous iteration's output.
    expect(run.tasks.find((t: any) => t.nodeId === 'loop')).toMatchObject({ loopIteration: 2, output: null, input: { check: { n: 2, i: 1 } } });

    const refused = await client.request(`mutation { retryRun(input: {runId: "${id}", fromNodeId: "count"}) { id } }`).catch((e: unknown) => e);
    expect(String((refused as Error).message)).toMatch(/node count is in the body of DO_WHILE loop: retry from loop/);

    const before = new Set(run.tasks.map((t: any) => t.id));
    await client.request(`mutation { retryRun(input: {runId: "${id}", fromNodeId: "loop"}) { id } }`);
    const fresh = (r: any) => r.tasks.filter((t: any) => t.nodeId === 'count' && !before.has(t.id));
    const again = await waitRun(client, id, (r: any) => r.status === 'FAILED' && fresh(r).length === 3, 60_000, FIELDS);
    // The retry started the loop at iteration 0 again: the old iterations' tasks are gone.
    expect(again.tasks.filter((t: any) => before.has(t.id)).map((t: any) => t.nodeId)).toEqual(['start']);
    expect(byIteration(again, 'count').map((t: any) => [t[0], t[2].n])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    const history = await getRun(client, id, 'history(first: 200) { type actions }');
    expect(JSON.stringify(history)).toContain('NextLoopIteration');
  });
  it('redacts a sensitive body node in every iteration, in the API and the history', async () => {
    await publish(client, 'secret-loop', {
      nodes: [
        {
          node_id: 'loop',
          type: 'DO_WHILE',
          spec: {
            body: { nodes: [{ ...jsNode('vault', 'return { token: "s3cr3t", i: input.i };', { i: '{{tasks.loop.iteration}}' }), sensitive: true }], edges: [] },
            condition: '{{ tasks.loop.iteration < 1 }}',
            max_iterations: 3,
          },
        },
      ],
      edges: [],
    });
    const id = await start(client, 'secret-loop');
    const run = await ended(id);
    expect(run.status).toBe('SUCCEEDED');
    expect(byIteration(run, 'vault')).toEqual([
      [0, 'COMPLETED', null],
      [1, 'COMPLETED', null],
    ]);
    const history = await getRun(client, id, 'history(first: 200) { type payload actions }');
    expect(JSON.stringify(history)).not.toContain('s3cr3t');
    expect(run.output).toEqual({ loop: { vault: '[redacted: sensitive node]' } });
  });
  it('runs a for_each and a WAIT in its body anew in each iteration', async () => {
    await publish(client, 'fan-loop', {
      nodes: [
        {
          node_id: 'loop',
          type: 'DO_WHILE',
          spec: {
            body: {
              nodes: [
                { ...jsNode('each', 'return { v: input.v * 10 };', { v: '{{item}}' }), for_each: '{{[tasks.loop.iteration, tasks.loop.iteration + 1]}}' },
                { node_id: 'nap', type: 'WAIT', spec: { duration_seconds: 1 } },
              ],
              edges: [{ from: 'each', to: 'nap' }],
            },
            condition: '{{ tasks.loop.iteration < 1 }}',
            max_iterations: 2,
            output: '{{ tasks.each.output }}',
          },
        },
      ],
      edges: [],
    });
    const run = await ended(await start(client, 'fan-loop'));
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toEqual({ loop: [{ v: 10 }, { v: 20 }] });
    expect(byIteration(run, 'nap').map((t: any) => t.slice(0, 2))).toEqual([
      [0, 'COMPLETED'],
      [1, 'COMPLETED'],
    ]);
    // Each loop iteration has the aggregate task and one task per element.
    expect(byIteration(run, 'each').map((t: any) => t[0])).toEqual([0, 0, 0, 1, 1, 1]);
  });
  it('fails cleanly when a body node cannot start in the first iteration, and ends a control-only loop in the event that reached it', async () => {
    await publish(client, 'bad-first', {
      nodes: [
        {
          node_id: 'loop',
          type: 'DO_WHILE',
          spec: { body: { nodes: [jsNode('step', 'return {};', { x: '{{ input.missing.deeper }}' })], edges: [] }, condition: '{{ true }}', max_iterations: 3 },
        },
      ],
      edges: [],
    });
    const bad = await ended(await start(client, 'bad-first'));
    expect(bad.status).toBe('FAILED');
    expect(bad.error).toMatch(/^node loop failed: iteration 1: node step failed: CEL resolution for node step: /);

    await publish(client, 'inline-loop', {
      nodes: [
        {
          node_id: 'loop',
          type: 'DO_WHILE',
          spec: { body: { nodes: [{ node_id: 'f', type: 'FORK' }], edges: [] }, condition: '{{ tasks.loop.iteration < 2 }}', max_iterations: 5 },
        },
      ],
      edges: [],
    });
    const inline = await ended(await start(client, 'inline-loop'));
    expect(inline.status).toBe('SUCCEEDED');
    expect(byIteration(inline, 'f').map((t: any) => t.slice(0, 2))).toEqual([
      [0, 'COMPLETED'],
      [1, 'COMPLETED'],
      [2, 'COMPLETED'],
    ]);
    expect(inline.output).toEqual({ loop: { f: {} } });
  });
});

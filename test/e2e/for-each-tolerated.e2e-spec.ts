import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { TERMINAL, iterations, jsNode, publish, rejection, start, startE2E, task as node, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/** Run fields with each task's iteration, attempt, granted attempt limit and failed iterations. */
const FIELDS = `id status output error tasks { id nodeId status attempt attemptLimit output error iteration failedIterations }`;

const RETRY = `mutation($i: RetryRunInput!) { retryRun(input: $i) { id status } }`;

/** Polls the run (with FIELDS) until it ended. */
const ended = (client: WeftClient, id: string) => waitRun(client, id, (r) => TERMINAL.includes(r.status), 50_000, FIELDS);

describe('for_each tolerated_failures and retries of the failed iterations, over GraphQL with real workers', () => {
  let e2e: E2E;
  let client: WeftClient;
  /** The `x` values the service answers 500 for. */
  const failing = new Set<number>();
  let service: Awaited<ReturnType<typeof stubServer>>;

  beforeAll(async () => {
    e2e = await startE2E();
    service = await stubServer((_req, res, _n, raw) => {
      const x = (JSON.parse(raw) as { x: number }).x;
      if (failing.has(x)) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `no ${x}` }));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ x }));
    });
    ({ client } = await e2e.tenant('for-each-tolerated'));
    await publish(client, 'tolerant', {
      nodes: [
        {
          node_id: 'call',
          type: 'HTTP',
          for_each: '{{input.xs}}',
          max_concurrency: 1,
          tolerated_failures: 1,
          spec: { url: '{{config.base_url}}/item', method: 'POST', body: { x: '{{item}}' } },
        },
        jsNode('report', 'return { got: input.got, failed: input.failed };', { got: '{{tasks.call.output}}', failed: '{{tasks.call.failedIterations}}' }),
      ],
      edges: [{ from: 'call', to: 'report' }],
    });
  });
  afterAll(async () => {
    await service.close();
    await e2e.close();
  });

  it('completes with a tolerated failure in place as null; successors and the API see failedIterations', async () => {
    failing.clear();
    failing.add(2);
    const run = await ended(client, await start(client, 'tolerant', { xs: [1, 2, 3] }, { config: { base_url: service.base } }));
    expect(run.status).toBe('SUCCEEDED');
    expect(node(run, 'call')).toMatchObject({ status: 'COMPLETED', output: [{ x: 1 }, null, { x: 3 }], failedIterations: [1] });
    expect(iterations(run, 'call').map((t) => [t.status, t.failedIterations])).toEqual([
      ['COMPLETED', null],
      ['FAILED', null],
      ['COMPLETED', null],
    ]);
    expect(node(run, 'report')).toMatchObject({ output: { got: [{ x: 1 }, null, { x: 3 }], failed: [1] }, failedIterations: null });
  });

  it('one failure more skips what has not started and fails the run; failedIterationsOnly then runs only those again', async () => {
    failing.clear();
    for (const x of [2, 3]) failing.add(x);
    const id = await start(client, 'tolerant', { xs: [1, 2, 3, 4] }, { config: { base_url: service.base } });
    const run = await ended(client, id);
    expect(run.status).toBe('FAILED');
    expect(iterations(run, 'call').map((t) => t.status)).toEqual(['COMPLETED', 'FAILED', 'FAILED', 'SKIPPED']);
    expect(node(run, 'call').error).toMatch(/^2 of 4 iterations failed, more than tolerated_failures 1 allows: iteration 1: /);
    expect(node(run, 'call').failedIterations).toEqual([1, 2]);
    const before = iterations(run, 'call');

    // Not a for_each node: refused, naming it; nothing changes.
    const refused = await rejection(client.request(RETRY, { i: { runId: id, fromNodeId: 'report', failedIterationsOnly: true } }));
    expect(refused.code).toBe('BAD_USER_INPUT');
    expect(refused.message).toContain('node report has no for_each');

    failing.clear();
    service.reset();
    await client.request(RETRY, { i: { runId: id, fromNodeId: 'call', failedIterationsOnly: true } });
    const again = await ended(client, id);
    expect(again.status).toBe('SUCCEEDED');
    // Only the failed and skipped elements were asked for again, one at a time (max_concurrency 1).
    expect(service.hits.map((h) => JSON.parse(h.body).x)).toEqual([2, 3, 4]);
    expect(service.maxActive).toBe(1);
    const its = iterations(again, 'call');
    expect(its.map((t) => t.id)).toEqual(before.map((t) => t.id));
    // Each one run again may make its node's max_attempts (1) more: 2 in all.
    expect(before.map((t) => t.attemptLimit)).toEqual([null, null, null, null]);
    expect(its.map((t) => [t.status, t.attempt, t.attemptLimit])).toEqual([
      ['COMPLETED', 0, null],
      ['COMPLETED', 1, 2],
      ['COMPLETED', 1, 2],
      ['COMPLETED', 1, 2],
    ]);
    expect(node(again, 'call')).toMatchObject({ output: [{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }], failedIterations: [] });
    expect(node(again, 'report').output).toEqual({ got: [{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }], failed: [] });

    // Nothing failed any more: refused.
    const none = await rejection(client.request(RETRY, { i: { runId: id, fromNodeId: 'call', failedIterationsOnly: true } }));
    expect(none.code).toBe('BAD_USER_INPUT');
    expect(none.message).toContain('has no failed, skipped or cancelled iteration');
  });
});

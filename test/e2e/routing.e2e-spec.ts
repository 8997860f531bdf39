import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

describe('routing end to end: fork/join, switch, retries, concurrency', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('routing'));
  });
  afterAll(() => e2e.close());

  it('joins a fork only after both branches, the longer one having two nodes', async () => {
    await publish(client, 'fork-join', {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        jsNode('a1', 'return {a: 1};'),
        jsNode('a2', 'return {a: input.prev.a + 1};', { prev: '{{tasks.a1.output}}' }),
        jsNode('b1', 'return {b: 10};'),
        jsNode('join', 'return {sum: input.a + input.b};', { a: '{{tasks.a2.output.a}}', b: '{{tasks.b1.output.b}}' }),
      ],
      edges: [
        { from: 'f', to: 'a1' },
        { from: 'a1', to: 'a2' },
        { from: 'f', to: 'b1' },
        { from: 'a2', to: 'join' },
        { from: 'b1', to: 'join' },
      ],
    });
    const run = await waitRun(client, await start(client, 'fork-join'));
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'join').output).toEqual({ sum: 12 });
    expect(run.output).toEqual({ join: { sum: 12 } });
  });

  it('skips the untaken SWITCH branch and re-converges on the merge node', async () => {
    await publish(client, 'switch', {
      nodes: [
        jsNode('p', 'return {n: input.n};', { n: '{{input.n}}' }),
        { node_id: 's', type: 'SWITCH' },
        jsNode('hi', 'return {side: "hi"};'),
        jsNode('lo', 'return {side: "lo"};'),
        jsNode('lo2', 'return {side: "lo2"};'),
        jsNode('merge', 'return {merged: true};'),
      ],
      edges: [
        { from: 'p', to: 's' },
        { from: 's', to: 'hi', condition: '{{tasks.p.output.n > 1}}' },
        { from: 's', to: 'lo', condition: '{{tasks.p.output.n <= 1}}' },
        { from: 'lo', to: 'lo2' },
        { from: 'hi', to: 'merge' },
        { from: 'lo2', to: 'merge' },
      ],
    });
    const high = await waitRun(client, await start(client, 'switch', { n: 5 }));
    expect(high.status).toBe('SUCCEEDED');
    expect(statuses(high)).toMatchObject({ hi: 'COMPLETED', lo: 'SKIPPED', lo2: 'SKIPPED', merge: 'COMPLETED' });

    const low = await waitRun(client, await start(client, 'switch', { n: 0 }));
    expect(statuses(low)).toMatchObject({ hi: 'SKIPPED', lo: 'COMPLETED', lo2: 'COMPLETED', merge: 'COMPLETED' });
  });

  it('retries a flaky HTTP endpoint with backoff until it answers', async () => {
    await publish(client, 'flaky', {
      nodes: [
        {
          node_id: 'call',
          type: 'HTTP',
          retry: { max_attempts: 3, backoff_seconds: 0.2 },
          spec: { url: `${e2e.shop.url}/flaky/{{input.key}}?fail=2`, method: 'GET' },
        },
      ],
      edges: [],
    });
    const runId = await start(client, 'flaky', { key: 'ok-third-time' });
    const run = await waitRun(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'call')).toMatchObject({ status: 'COMPLETED', attempt: 2, output: { ok: true, calls: 3 } });
    expect(e2e.shop.calls.get('ok-third-time')).toBe(3);

    const events = (await client.request(`query($id: ID!) { run(id: $id) { history { type attempt actions } } }`, { id: runId })).run.history;
    const failures = events.filter((e: any) => e.type === 'NodeFailed');
    expect(failures.map((e: any) => e.attempt)).toEqual([0, 1]);
    const finishedAt = new Date(run.finishedAt).getTime();
    const createdAt = new Date(run.createdAt).getTime();
    expect(finishedAt - createdAt).toBeGreaterThanOrEqual(600); // 0.2 s + 0.4 s of backoff
  });

  it('fails the run for good when every attempt fails, naming the status', async () => {
    await publish(client, 'always-fails', {
      nodes: [{ node_id: 'call', type: 'HTTP', retry: { max_attempts: 2, backoff_seconds: 0.1 }, spec: { url: `${e2e.shop.url}/flaky/x?fail=99` } }],
      edges: [],
    });
    const run = await waitRun(client, await start(client, 'always-fails'));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'call')).toMatchObject({ status: 'FAILED', attempt: 1 });
    expect(task(run, 'call').error).toContain('503');
  });

  it('runs 50 runs of a 5-node workflow at once, all succeeding', async () => {
    const get = (id: string, path: string) => ({ node_id: id, type: 'HTTP', spec: { url: `${e2e.shop.url}/orders/${path}` } });
    await publish(client, 'five', {
      nodes: [
        get('a', '{{input.v}}'),
        { node_id: 'f', type: 'FORK' },
        get('b', '{{tasks.a.output.order_id}}b'),
        get('c', '{{tasks.a.output.order_id}}c'),
        get('d', '{{tasks.b.output.order_id}}-{{tasks.c.output.order_id}}'),
      ],
      edges: [
        { from: 'a', to: 'f' },
        { from: 'f', to: 'b' },
        { from: 'f', to: 'c' },
        { from: 'b', to: 'd' },
        { from: 'c', to: 'd' },
      ],
    });
    const ids = await Promise.all(Array.from({ length: 50 }, (_, v) => start(client, 'five', { v })));
    const runs = await Promise.all(ids.map((id) => waitRun(client, id, undefined, 120_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(50).fill('SUCCEEDED'));
    runs.forEach((r, v) => expect(task(r, 'd').output.order_id).toBe(`${v}b-${v}c`));
  });
});

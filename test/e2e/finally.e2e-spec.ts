import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * A local HTTP service the finally steps call: it records each request's path and JSON body,
 * answers `/fail` with 500, and holds `/hold` requests until `release()` (so a test sees the run
 * while its finally step runs).
 */
async function receiver() {
  const calls: { path: string; body: any }[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls.push({ path: req.url ?? '/', body: body ? JSON.parse(body) : null });
      if (req.url === '/hold') held.push(res);
      else res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    release: () => held.splice(0).forEach((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** A finally step posting the decided outcome to `path` of the receiver. */
const notify = (base: string, path: string) => ({
  node_id: 'notify',
  type: 'HTTP',
  spec: { url: `${base}${path}`, method: 'POST', body: { status: '{{ run.status }}', error: '{{ run.error }}', id: '{{ run.id }}' } },
});

const cancel = (client: WeftClient, runId: string) =>
  client.request(`mutation { cancelRun(input: {runId: "${runId}"}) { id status error } }`).then((r) => r.cancelRun);

/** The definition's finally step over the API with real workers: after a success, a failure and a cancel. */
describe('finally step end to end', () => {
  let e2e: E2E;
  let client: WeftClient;
  let service: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    service = await receiver();
    e2e = await startE2E();
    ({ client } = await e2e.tenant('finally'));
    await publish(client, 'ok-then-notify', { nodes: [jsNode('a', 'return {n: 1};')], edges: [], finally: notify(service.base, '/hold') });
    await publish(client, 'fail-then-notify', { nodes: [jsNode('a', 'throw new Error("nope");')], edges: [], finally: notify(service.base, '/done') });
    await publish(client, 'ok-then-broken', { nodes: [jsNode('a', 'return {n: 1};')], edges: [], finally: notify(service.base, '/fail') });
    await publish(client, 'child-with-finally', { nodes: [jsNode('c', 'return {v: 2};')], edges: [], finally: notify(service.base, '/hold') });
    await publish(client, 'parent', { nodes: [{ node_id: 'sub', type: 'SUBWORKFLOW', spec: { workflow: 'child-with-finally' } }], edges: [] });
    await publish(client, 'gated', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }],
      edges: [],
      finally: notify(service.base, '/done'),
    });
    await publish(client, 'gated-hold', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }],
      edges: [],
      finally: notify(service.base, '/hold'),
    });
  }, 120_000);
  afterAll(async () => {
    service.release();
    await e2e.close();
    await service.close();
  });

  const callFor = (runId: string) => service.calls.find((c) => c.body?.id === runId);

  it('runs after a success with run.status SUCCEEDED; the run stays RUNNING until it ends, then succeeds', async () => {
    const runId = await start(client, 'ok-then-notify');
    const during = await waitRun(client, runId, (r) => task(r, 'notify')?.status === 'RUNNING');
    expect(during.status).toBe('RUNNING');
    expect(task(during, 'a').status).toBe('COMPLETED');
    expect(callFor(runId)?.body).toEqual({ status: 'SUCCEEDED', error: null, id: runId });
    service.release();
    const run = await waitRun(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toEqual({ a: { n: 1 } });
    expect(statuses(run)).toEqual({ a: 'COMPLETED', notify: 'COMPLETED' });
    const { run: drawn } = await client.request(`query($id: ID!) { run(id: $id) { mermaid graph { nodes { id status } edges { from to label } } } }`, {
      id: runId,
    });
    expect(drawn.mermaid).toMatch(/\(\["notify<br\/>finally · HTTP<br\/>COMPLETED"\]\)/);
    expect(drawn.graph.nodes).toContainEqual({ id: 'notify', status: 'COMPLETED' });
    expect(drawn.graph.edges).toContainEqual({ from: 'a', to: 'notify', label: 'finally' });
  });

  it('runs after a failure with run.error, and the run keeps its failure', async () => {
    const runId = await start(client, 'fail-then-notify');
    const run = await waitRun(client, runId);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(/^node a failed: .*nope/);
    expect(callFor(runId)?.body).toEqual({ status: 'FAILED', error: run.error, id: runId });
    expect(task(run, 'notify').status).toBe('COMPLETED');
  });

  it('turns a success into FAILED when it fails for good', async () => {
    const run = await waitRun(client, await start(client, 'ok-then-broken'));
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(/^finally node notify failed: .*500/);
    expect(run.output).toBeNull();
  });

  it('runs after a cancel with run.status CANCELLED, and the run ends CANCELLED', async () => {
    const runId = await start(client, 'gated');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');
    await cancel(client, runId);
    const run = await waitRun(client, runId);
    expect(run.status).toBe('CANCELLED');
    expect(run.error).toBe('cancelled');
    expect(statuses(run)).toEqual({ gate: 'CANCELLED', notify: 'COMPLETED' });
    expect(callFor(runId)?.body).toEqual({ status: 'CANCELLED', error: 'cancelled', id: runId });
  });

  it('stops at a second cancel while it runs', async () => {
    const runId = await start(client, 'gated-hold');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');
    expect((await cancel(client, runId)).status).toBe('RUNNING');
    await waitRun(client, runId, (r) => task(r, 'notify')?.status === 'RUNNING');
    expect(await cancel(client, runId)).toMatchObject({ status: 'CANCELLED', error: 'cancelled; finally node notify was cancelled: cancelled' });
    const run = await waitRun(client, runId);
    expect(statuses(run)).toEqual({ gate: 'CANCELLED', notify: 'CANCELLED' });
  });

  it("lets a SUBWORKFLOW parent see its child's status only after the child's finally step", async () => {
    const parentId = await start(client, 'parent');
    const fields = `id status tasks { nodeId status iteration output } children { id status tasks { nodeId status iteration } }`;
    const waiting = await waitRun(client, parentId, (r) => r.children[0] && task(r.children[0], 'notify')?.status === 'RUNNING', 50_000, fields);
    expect(waiting.children[0].status).toBe('RUNNING');
    expect(waiting.status).toBe('RUNNING');
    expect(task(waiting, 'sub').status).toBe('WAITING');
    service.release();
    const done = await waitRun(client, parentId, undefined, 50_000, fields);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.children[0].status).toBe('SUCCEEDED');
    expect(task(done, 'sub').output).toEqual({ c: { v: 2 } });
  });
});

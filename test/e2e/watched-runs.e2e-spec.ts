import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { WeftClient } from '@weft/client';
import { RunUpdatesService } from '@weft/api';
import { RUN_UPDATED_CHANNEL, RedisRunUpdatePublisher, loadConfig } from '@weft/platform';
import type { RunUpdate } from '@weft/engine';
import { TERMINAL, getRun, publish, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/**
 * Live updates of watched runs on a whole platform: a run nobody watches publishes only its end;
 * a watched run's updates carry what changed, which the API applies to the state its
 * subscribers share instead of reading the run; a subscriber's last payload is what a fresh
 * `run(id)` query with the same selection answers, for a chain, a for_each, a node that fails
 * after retries and a cancelled run; a subscriber that joins mid-run sees every later change.
 */
const TASK =
  'id nodeId nodeType status attempt input output error branches wakeAt awaitedSignal iteration queue waitReason waitDetail createdAt updatedAt finishedAt';
const FIELDS = `id status seq workflowId version input config output error waitReason waitDetail createdAt updatedAt finishedAt
  tasks(first: 100) { ${TASK} } history(first: 100) { seq type at nodeId attempt payload actions error ignored } mermaid
  graph { nodes { id status } edges { from to state } }`;
/** The CLI's watch selection (WATCH_FIELDS), with its page of 100. */
const WATCH = `id status workflowId version input output error waitReason waitDetail createdAt finishedAt
  tasks(first: 100) { id nodeId status attempt output error awaitedSignal iteration waitReason waitDetail }`;

let e2e: E2E;
let client: WeftClient;
let tenantId: string;
let stub: Awaited<ReturnType<typeof stubServer>>;
let redis: Redis;
const published: RunUpdate[] = [];

const http = (id: string, path: string, extra: Record<string, unknown> = {}) => ({ node_id: id, type: 'HTTP', spec: { url: `${stub.base}${path}` }, ...extra });
const chain = (ids: string[]) => ids.slice(1).map((to, i) => ({ from: ids[i]!, to }));
const updates = () => e2e.app.get(RunUpdatesService).stats;

/** Follows run `runId` over runUpdated with `fields` until it ends; resolves every payload. */
function follow(runId: string, fields = FIELDS): { payloads: any[]; done: Promise<any[]> } {
  const payloads: any[] = [];
  const sub = client.subscribe(`subscription($id: ID!) { runUpdated(runId: $id) { ${fields} } }`, { id: runId }, (d: any) => {
    payloads.push(d.runUpdated);
    return !TERMINAL.includes(d.runUpdated.status);
  });
  return { payloads, done: sub.done.then(() => payloads) };
}

/**
 * Payloads arrive in seq order (a claim changes a task without an event: the same seq again);
 * the last is what a fresh query answers.
 */
async function expectFaithful(runId: string, payloads: any[], fields = FIELDS): Promise<void> {
  const seqs = payloads.map((p) => p.seq).filter((s) => s !== undefined);
  for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThanOrEqual(seqs[i - 1]);
  const fresh = await getRun(client, runId, fields);
  expect(JSON.stringify(payloads.at(-1))).toBe(JSON.stringify(fresh));
}

/** The run now waits: its last payload reaches what a fresh query answers (polled: a read in flight may still land). */
async function expectSettled(runId: string, payloads: any[]): Promise<void> {
  let fresh = '';
  const same = async () => JSON.stringify(payloads.at(-1)) === (fresh = JSON.stringify(await getRun(client, runId, FIELDS)));
  for (const end = Date.now() + 30_000; !(await same()) && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  expect(JSON.stringify(payloads.at(-1))).toBe(fresh);
}

beforeAll(async () => {
  e2e = await startE2E();
  stub = await stubServer((req, res, n, body) => {
    if (req.url?.startsWith('/fail')) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
    const answer = () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ path: req.url, n, body: body || null, zeta: 1, a: { y: [1, 2], b: 'x' } }));
    if (req.url?.startsWith('/slow')) setTimeout(answer, 30);
    else answer();
  });
  ({ client, tenantId } = await e2e.tenant('watched'));
  redis = new Redis(loadConfig({}, {}).redisUrl);
  redis.on('message', (_c: string, m: string) => published.push(...(JSON.parse(m) as RunUpdate[]).filter((u) => u.tenantId === tenantId)));
  await redis.subscribe(RUN_UPDATED_CHANNEL);
  // The publisher publishes everything until it heard the API's watches (its hello's grace): wait it out.
  const publisher = e2e.app.get(RedisRunUpdatePublisher);
  await waitUntil(() => !publisher.watching(tenantId, '00000000-0000-4000-8000-000000000000'));
});
afterAll(async () => {
  redis?.disconnect();
  await stub?.close();
  await e2e?.close();
});

async function waitUntil(cond: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !cond();) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('runs nobody watches', () => {
  it('publish their end only', async () => {
    await publish(client, 'quiet', { nodes: [http('a', '/a'), http('b', '/b'), http('c', '/c')], edges: chain(['a', 'b', 'c']) });
    const runId = await start(client, 'quiet');
    await waitRun(client, runId);
    await waitUntil(() => published.some((u) => u.runId === runId));
    const mine = published.filter((u) => u.runId === runId);
    expect(mine.map((u) => u.status)).toEqual(['SUCCEEDED']);
    expect(mine[0]!.change).toBeUndefined();
  });
});

describe('a watched run', () => {
  it('is followed through a chain without a read of the run per step, the last payload equal to a fresh query', async () => {
    const ids = ['gate', ...Array.from({ length: 8 }, (_, i) => `s${i}`)];
    await publish(client, 'chain', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }, ...ids.slice(1).map((id) => http(id, `/${id}`))],
      edges: chain(ids),
    });
    const runId = await start(client, 'chain', { n: 1 });
    await waitRun(client, runId, (r) => r.tasks.some((t: any) => t.nodeId === 'gate' && t.status === 'WAITING'));
    const before = updates();
    const watch = follow(runId);
    await waitUntil(() => watch.payloads.length > 0);
    await client.request(`mutation { sendSignal(input: {runId: "${runId}", name: "go", payload: {k: 1}}) { delivered } }`);
    const payloads = await watch.done;
    await expectFaithful(runId, payloads);
    const after = updates();
    // The first read (made once the watch's announcement came back, so nothing needs catching
    // up), and a read for an update that carries no change (a claim, a queued attempt), which also
    // covers the changes that arrive while it runs; never one per step (the chain applies 10
    // events). How many changes a read covers depends on the machine's load (under load, fair
    // dispatch admits more of the chain's attempts outside their own commit, each such update
    // read again): at most half the events need a read, and at least one is applied without one.
    expect(after.runLoads - before.runLoads).toBeLessThanOrEqual(5);
    expect(after.runPatches - before.runPatches).toBeGreaterThanOrEqual(1);
    // Joined mid-run: the payloads after the first cover every later event (history is whole).
    expect(payloads.at(-1).history.map((h: any) => h.seq)).toEqual(Array.from({ length: payloads.at(-1).seq }, (_, i) => i + 1));
  });

  it('is joined while its steps run: every later change arrives in order, the last payload equal to a fresh query', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);
    await publish(client, 'moving', { nodes: ids.map((id) => http(id, `/slow/${id}`)), edges: chain(ids) });
    const runId = await start(client, 'moving');
    await waitRun(client, runId, (r) => r.tasks.length >= 4, 30_000, 'id status tasks { id }');
    const payloads = await follow(runId).done;
    expect(payloads[0].seq).toBeGreaterThanOrEqual(4);
    expect(payloads.length).toBeGreaterThan(2);
    await expectFaithful(runId, payloads);
    expect(payloads.at(-1).history.map((h: any) => h.seq)).toEqual(Array.from({ length: payloads.at(-1).seq }, (_, i) => i + 1));
  });

  it('is followed from QUEUED for a concurrency slot to its end; a waiting state equals a fresh query', async () => {
    await publish(client, 'single', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }, http('after', '/after')],
      edges: chain(['gate', 'after']),
      concurrency: { limit: 1 },
    });
    const first = await start(client, 'single');
    await waitRun(client, first, (r) => r.tasks.some((t: any) => t.status === 'WAITING'));
    const queued = await start(client, 'single');
    const watch = follow(queued);
    await waitUntil(() => watch.payloads.length > 0);
    expect(watch.payloads[0].status).toBe('QUEUED');
    await client.request(`mutation { sendSignal(input: {runId: "${first}", name: "go"}) { delivered } }`);
    // Promoted when the first run ends (in the first run's transaction), then waiting at its gate.
    await waitUntil(() => watch.payloads.some((p) => p.tasks.some((t: any) => t.nodeId === 'gate' && t.status === 'WAITING')));
    await expectSettled(queued, watch.payloads);
    await client.request(`mutation { sendSignal(input: {runId: "${queued}", name: "go"}) { delivered } }`);
    await expectFaithful(queued, await watch.done);
  });

  it('is followed through a SUBWORKFLOW node, its child runs included', async () => {
    await publish(client, 'kid', { nodes: [http('k1', '/k1'), http('k2', '/k2')], edges: chain(['k1', 'k2']) });
    await publish(client, 'parent', {
      nodes: [http('pre', '/pre'), { node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: 'kid' } }, http('post', '/post')],
      edges: chain(['pre', 'call', 'post']),
    });
    const runId = await start(client, 'parent');
    const fields = `${FIELDS} children { id status parentTaskId workflowId }`;
    const payloads = await follow(runId, fields).done;
    expect(payloads.at(-1).children).toHaveLength(1);
    await expectFaithful(runId, payloads, fields);
  });

  it('is followed through a for_each with the CLI watch selection', async () => {
    await publish(client, 'fan', {
      nodes: [{ ...http('each', '/item/{{item}}'), for_each: '{{input.xs}}' }, http('sink', '/sink')],
      edges: [{ from: 'each', to: 'sink' }],
    });
    const runId = await start(client, 'fan', { xs: [1, 2, 3, 4] });
    const payloads = await follow(runId, WATCH).done;
    await expectFaithful(runId, payloads, WATCH);
    const full = follow(runId);
    await expectFaithful(runId, await full.done);
  });

  it('is followed through a node that fails after retries', async () => {
    await publish(client, 'flaky', {
      nodes: [http('ok', '/ok'), http('bad', '/fail', { retry: { max_attempts: 3, backoff_seconds: 0.05 } })],
      edges: chain(['ok', 'bad']),
    });
    const runId = await start(client, 'flaky');
    const payloads = await follow(runId).done;
    expect(payloads.at(-1).status).toBe('FAILED');
    expect(payloads.at(-1).tasks.find((t: any) => t.nodeId === 'bad').attempt).toBe(2);
    await expectFaithful(runId, payloads);
  });

  it('is followed until it is cancelled', async () => {
    await publish(client, 'parked', {
      nodes: [
        http('first', '/first'),
        { node_id: 'wait', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 600 } },
        { node_id: 'nap', type: 'WAIT', spec: { duration_seconds: 600 } },
      ],
      edges: [
        { from: 'first', to: 'wait' },
        { from: 'first', to: 'nap' },
      ],
    });
    const runId = await start(client, 'parked');
    const watch = follow(runId);
    await waitUntil(() => watch.payloads.some((p) => p.tasks.some((t: any) => t.nodeId === 'wait' && t.status === 'WAITING')));
    await expectSettled(runId, watch.payloads);
    await client.request(`mutation { cancelRun(input: {runId: "${runId}", reason: "enough"}) { id } }`);
    const payloads = await watch.done;
    expect(payloads.at(-1).status).toBe('CANCELLED');
    await expectFaithful(runId, payloads);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RunStatus, type RunUpdate } from '@weft/engine';
import { RUN_UPDATED_CHANNEL, RUN_WATCHES_CHANNEL, RedisRunUpdatePublisher, RunWatchAnnouncer, RunWatchSet } from '@weft/platform';

/**
 * The watch registry on a real Redis: API processes announce what their subscribers watch, a
 * publisher learns it (also when it starts after the announcement), publishes updates that do not
 * end a run only for watched runs, forgets a watch whose lease ran out, and stays bounded.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const closers: (() => unknown)[] = [];
let sub: Redis;
let pub: Redis;
const received: RunUpdate[] = [];
const tenantId = randomUUID();

beforeAll(async () => {
  sub = new Redis(REDIS_URL);
  pub = new Redis(REDIS_URL);
  sub.on('message', (_c: string, msg: string) => received.push(...(JSON.parse(msg) as RunUpdate[]).filter((u) => u.tenantId === tenantId)));
  await sub.subscribe(RUN_UPDATED_CHANNEL);
});
afterAll(async () => {
  for (const close of closers) await close();
  sub?.disconnect();
  pub?.disconnect();
});

/** Polls `cond` every 10 ms, up to 30 s (room for a loaded machine); fails with `what` when it never holds. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 30_000; !cond();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A started watch set that knows nothing yet past its hello (no grace). */
async function watchSet(limits: Partial<{ maxEntries: number; maxRunsPerTenant: number }> = {}): Promise<RunWatchSet> {
  const set = new RunWatchSet(REDIS_URL, { maxEntries: 10_000, maxRunsPerTenant: 1_000, graceMs: 0, ...limits });
  closers.push(() => set.close());
  await set.start();
  return set;
}

function announcer(leaseMs?: number, renewMs?: number): RunWatchAnnouncer {
  const a = new RunWatchAnnouncer(REDIS_URL, leaseMs, renewMs);
  closers.push(() => a.close());
  return a;
}

describe('the run-update publisher with a watch registry', () => {
  it('publishes nothing but the end of a run nobody watches, and everything of a watched run', async () => {
    received.length = 0;
    const set = await watchSet();
    const p = new RedisRunUpdatePublisher(REDIS_URL, undefined, 0, set);
    closers.push(() => p.close());
    const [quiet, watched] = [randomUUID(), randomUUID()];
    const a = announcer();
    await a.add({ tenantId, runId: watched });
    await until(() => set.watching(tenantId, watched), 'the watch to be learnt');

    await p.publish({ tenantId, runId: quiet, status: RunStatus.Running, seq: 1 });
    await p.publish({ tenantId, runId: quiet, status: RunStatus.Running });
    await p.publish({ tenantId, runId: watched, status: RunStatus.Running, seq: 1 });
    await p.publish({ tenantId, runId: quiet, status: RunStatus.Succeeded, seq: 2 });
    await until(() => received.some((u) => u.runId === quiet), 'the end of the quiet run');
    await p.flush();
    await until(() => received.length >= 2, 'both updates');
    expect(received).toEqual([
      { tenantId, runId: watched, status: 'RUNNING', seq: 1 },
      { tenantId, runId: quiet, status: 'SUCCEEDED', seq: 2 },
    ]);
    expect(p.skipped).toBe(2);
  });

  it('counts every run of a tenant as watched while the tenant feed is watched', async () => {
    const set = await watchSet();
    const a = announcer();
    const other = randomUUID();
    const release = await a.add({ tenantId: other });
    await until(() => set.watching(other, randomUUID()), 'the tenant watch to be learnt');
    expect(set.watchingRun(other, randomUUID())).toBe(false); // a feed needs no changes carried
    release();
    await until(() => !set.watching(other, randomUUID()), 'the unwatch to be learnt');
  });

  it('learns the watches announced before it started (its hello is answered)', async () => {
    const a = announcer();
    const runId = randomUUID();
    await a.add({ tenantId, runId });
    const set = await watchSet();
    await until(() => set.watching(tenantId, runId), 'the answer to the hello');
    expect(set.watching(tenantId, randomUUID())).toBe(false);
  });

  it('forgets a watch whose lease was not renewed', async () => {
    const set = await watchSet();
    const a = announcer(300, 60_000);
    const runId = randomUUID();
    await a.add({ tenantId, runId });
    await until(() => set.watching(tenantId, runId), 'the watch to be learnt');
    await until(() => !set.watching(tenantId, runId), 'the lease to end');
  });

  it('keeps a watch whose lease is renewed', async () => {
    const set = await watchSet();
    const a = announcer(300, 50);
    const runId = randomUUID();
    await a.add({ tenantId, runId });
    await until(() => set.watching(tenantId, runId), 'the watch to be learnt');
    // Ten renewals later (observed on the channel), the watch still holds.
    let renewals = 0;
    const spy = new Redis(REDIS_URL);
    closers.push(() => spy.disconnect());
    spy.on('message', (_c: string, m: string) => m.includes(runId) && renewals++);
    await spy.subscribe(RUN_WATCHES_CHANNEL);
    await until(() => renewals >= 10, 'ten renewals');
    expect(set.watching(tenantId, runId)).toBe(true);
  });

  it('keeps a watch two API processes hold when one of them ends it', async () => {
    const set = await watchSet();
    const [a, b] = [announcer(), announcer()];
    const runId = randomUUID();
    const echoes: string[] = [];
    b.onEcho = (w) => echoes.push(w.runId ?? '*');
    const releaseA = await a.add({ tenantId, runId });
    await b.add({ tenantId, runId });
    await until(() => set.watching(tenantId, runId) && echoes.length === 1, 'both watches');
    releaseA();
    // b announces it again (and catches up once its announcement comes back)
    await until(() => echoes.length === 2 && set.watching(tenantId, runId), "b's second announcement");
  });

  it('tells the announcer when its first announcement of a watch came back', async () => {
    const a = announcer();
    const echoed: string[] = [];
    a.onEcho = (w) => echoed.push(w.runId ?? '*');
    const runId = randomUUID();
    await a.add({ tenantId, runId });
    await a.add({ tenantId, runId });
    await until(() => echoed.length > 0, 'the echo');
    expect(echoed).toEqual([runId]);
    expect(a.size).toBe(1);
  });

  it('is bounded: past its caps a tenant, then every run, counts as watched', async () => {
    const set = await watchSet({ maxEntries: 6, maxRunsPerTenant: 3 });
    const watch = (t: string, runIds: string[]) =>
      JSON.stringify({ type: 'watch', from: 'test', leaseMs: 60_000, watches: runIds.map((runId) => ({ tenantId: t, runId })) });
    const [hostile, quiet] = [randomUUID(), randomUUID()];
    const runs = Array.from({ length: 50 }, () => randomUUID());
    set.receive(watch(hostile, runs));
    expect(set.size).toBeLessThanOrEqual(6);
    expect(set.watching(hostile, randomUUID())).toBe(true); // the whole tenant, past its cap
    expect(set.watching(quiet, randomUUID())).toBe(false);

    for (let i = 0; i < 20; i++) set.receive(watch(randomUUID(), [randomUUID()]));
    expect(set.size).toBeLessThanOrEqual(6);
    expect(set.watching(quiet, randomUUID())).toBe(true); // full: everything is published
  });

  it('publishes everything while it cannot know the watches yet', async () => {
    const set = new RunWatchSet(REDIS_URL, { maxEntries: 10, maxRunsPerTenant: 10, graceMs: 60_000 });
    closers.push(() => set.close());
    expect(set.watching(tenantId, randomUUID())).toBe(true); // not started
    await set.start();
    expect(set.watching(tenantId, randomUUID())).toBe(true); // within the grace after its hello
  });

  it('sends the changes of a watched run in seq order, and one bare update once anything else is gathered', async () => {
    received.length = 0;
    const set = await watchSet();
    const p = new RedisRunUpdatePublisher(REDIS_URL, undefined, 100, set);
    closers.push(() => p.close());
    const [a, b] = [randomUUID(), randomUUID()];
    const ann = announcer();
    await ann.add({ tenantId, runId: a });
    await ann.add({ tenantId, runId: b });
    await until(() => set.watching(tenantId, a) && set.watching(tenantId, b), 'the watches');
    const change = (seq: number) => ({
      seq,
      at: new Date().toISOString(),
      run: {},
      tasks: [],
      event: { type: 'X', nodeId: null, attempt: null, payload: {}, actions: [], ignored: null, error: null },
    });
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 1, change: change(1) });
    await p.publish({ tenantId, runId: a, status: RunStatus.Running, seq: 2, change: change(2) });
    await p.publish({ tenantId, runId: b, status: RunStatus.Running, seq: 1, change: change(1) });
    await p.publish({ tenantId, runId: b, status: RunStatus.Running }); // a claim: b's watchers must read
    await p.publish({ tenantId, runId: b, status: RunStatus.Running, seq: 2, change: change(2) });
    await p.flush();
    await until(() => received.length >= 3, 'the message');
    expect(received.map((u) => `${u.runId === a ? 'a' : 'b'}@${u.seq}${u.change ? '+' : ''}`)).toEqual(['a@1+', 'a@2+', 'b@2']);
  });
});

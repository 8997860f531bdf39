import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, withTenant } from '@weft/persistence';
import type { TaskJob, WorkflowNode } from '@weft/engine';
import { RunCoordinator, type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, MemoryLogger, RecordingPublisher } from '../support/builders.js';

/**
 * Fair dispatch: worker attempts wait in their queue's backlog and are admitted, a window of
 * jobs at a time, in weighted fair order between tenants, then priority and the oldest run within
 * one; node concurrency and rate limits hold attempts in the backlog. Real PostgreSQL, recording
 * queues, hand-moved clock. Each test has a queue of its own, so the window is the test's.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 10 });
});
afterAll(async () => {
  await db?.drop();
});

let queueSeq = 0;
/** A queue no other test uses. */
const freshQueue = () => `fair-${process.pid}-${++queueSeq}`;

/** Tenants sharing one hand-moved clock and one recording queue, each with a coordinator of its own, admitting `window` jobs at most. */
async function tenants(n: number, window: number, opts: RunCoordinatorOptions = {}) {
  const first = await coordinatorHarness(db.ds, { dispatchWindowFloor: window, ...opts });
  const rest = [];
  for (let i = 1; i < n; i++) {
    rest.push(await coordinatorHarness(db.ds, { dispatchWindowFloor: window, now: first.clock.now, ...opts }));
  }
  const all = [first, ...rest];
  // One queue, as workers see it: every harness's enqueues land in the first one's list, in order.
  for (const h of rest) h.dispatcher.jobs.push = (...jobs: TaskJob[]) => first.dispatcher.jobs.push(...jobs);
  return all;
}

/** Starts `count` runs of `definition` for harness `h`, with `priority` when given. */
async function startMany(h: Awaited<ReturnType<typeof coordinatorHarness>>, definition: ReturnType<typeof def>, count: number, priority?: number) {
  const { workflowId } = await h.publish(definition);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await h.coordinator.runs.startRun(h.tenantId, { workflowId, ...(priority ? { priority } : {}) })).runId);
  return ids;
}

/** A worker taking the next `n` jobs in order: each claimed (which frees its place in the window) and completed. */
async function work(h: Awaited<ReturnType<typeof coordinatorHarness>>, all: Awaited<ReturnType<typeof tenants>>, n: number, from = 0): Promise<number> {
  let i = from;
  for (; i < from + n && i < h.dispatcher.jobs.length; i++) {
    const job = h.dispatcher.jobs[i]!;
    const owner = all.find((x) => x.tenantId === job.tenantId)!;
    const token = await owner.coordinator.leases.markRunning(job.tenantId, job.taskId, job.attempt);
    await owner.coordinator.runs.reportCompleted(job.tenantId, {
      runId: job.runId,
      taskId: job.taskId,
      nodeId: job.nodeId,
      attempt: job.attempt,
      output: {},
      leaseToken: token!,
    });
  }
  return i;
}

describe('fair order between tenants', () => {
  it("admits a quiet tenant's attempt at once, ahead of another tenant's whole backlog, then shares the freed places", async () => {
    const queue = freshQueue();
    const [a, b] = await tenants(2, 2);
    const one = def([http('x', undefined, { queue })]);
    const floods = await startMany(a!, one, 20);
    const jobs = a!.dispatcher.jobs;
    expect(jobs.map((j) => j.runId)).toEqual(floods.slice(0, 2));
    // The window is full, but B comes back from idle: its first attempt is admitted at once, its
    // job ahead of A's waiting ones (A's first went ahead too, when A came from idle).
    const quiet = await startMany(b!, one, 3);
    await waitForJobs(a!, 3);
    expect(jobs[2]!.runId).toBe(quiet[0]);
    expect([...a!.dispatcher.ahead, ...b!.dispatcher.ahead].sort()).toEqual([jobs[0]!.taskId, jobs[2]!.taskId].sort());
    // B's next ones are not back from idle: they wait in the backlog, QUEUED with no job.
    expect((await b!.tasks(quiet[1]!)).x).toMatchObject({ status: 'QUEUED' });

    // Each place a worker's claim frees goes to A and B in turn, not to A's backlog first. (B's
    // job went over the window: the first claim frees no place.)
    const claim = (j: TaskJob) => a!.coordinator.leases.markRunning(j.tenantId, j.taskId, 0);
    for (let i = 0; i < 3; i++) await claim(jobs[i]!);
    await waitForJobs(a!, 5);
    for (let i = 3; i < 5; i++) await claim(jobs[i]!);
    await waitForJobs(a!, 7);
    const owners = jobs.slice(3, 7).map((j) => (j.tenantId === b!.tenantId ? 'B' : 'A'));
    expect(owners.filter((o) => o === 'B')).toHaveLength(2);
    expect(owners.filter((o) => o === 'A')).toHaveLength(2);
    expect(a!.dispatcher.ahead.length + b!.dispatcher.ahead.length).toBe(2);
  });

  it('gives a tenant of weight 3 three places for each place of a tenant of weight 1', async () => {
    const queue = freshQueue();
    const [a, c] = await tenants(2, 1);
    await db.owner.query(`UPDATE tenants SET dispatch_weight = 3 WHERE id = $1`, [c!.tenantId]);
    const one = def([http('x', undefined, { queue })]);
    await startMany(a!, one, 12);
    await startMany(c!, one, 12);
    let done = 0;
    for (let round = 0; round < 16; round++) {
      done = await work(a!, [a!, c!], 1, done);
      await waitForJobs(a!, done + 1);
    }
    // After the first admission (A's, alone at the time), 16 more: 3 of C for every one of A.
    const next16 = a!.dispatcher.jobs.slice(1, 17).map((j) => (j.tenantId === c!.tenantId ? 'C' : 'A'));
    expect(next16.filter((t) => t === 'C')).toHaveLength(12);
    expect(next16.filter((t) => t === 'A')).toHaveLength(4);
  });

  it('within a tenant, starts priority 1 before an older backlog of priority 5', async () => {
    const queue = freshQueue();
    const [a] = await tenants(1, 1);
    const one = def([http('x', undefined, { queue })]);
    const low = await startMany(a!, one, 5, 5);
    const [urgent] = await startMany(a!, one, 1, 1);
    await work(a!, [a!], 1, 0);
    await waitForJobs(a!, 2);
    expect(a!.dispatcher.jobs.map((j) => j.runId).slice(0, 2)).toEqual([low[0], urgent]);
  });
});

describe('eager dispatch', () => {
  it('takes the next attempt at once when no other tenant waits, and leaves it to fair order when one does', async () => {
    const queue = freshQueue();
    const [a, b] = await tenants(2, 1);
    const chain = def([http('x', undefined, { queue }), http('y', undefined, { queue })], [edge('x', 'y')]);
    const [alone] = await startMany(a!, chain, 1);
    const x = a!.dispatcher.last('x');
    const token = (await a!.coordinator.leases.markRunning(a!.tenantId, x.taskId, 0))!;
    const taken = await a!.coordinator.runs.reportCompleted(a!.tenantId, {
      runId: alone!,
      taskId: x.taskId,
      nodeId: 'x',
      attempt: 0,
      output: {},
      leaseToken: token,
      takeFrom: queue,
    });
    expect(taken.taken?.job.nodeId).toBe('y');
    await a!.coordinator.runs.reportCompleted(a!.tenantId, {
      runId: alone!,
      taskId: taken.taken!.job.taskId,
      nodeId: 'y',
      attempt: 0,
      output: {},
      leaseToken: taken.taken!.leaseToken,
    });

    // A second run of A is running x, a third one's job fills the window, and B's attempt waits in the backlog.
    const [second] = await startMany(a!, chain, 1);
    const x2 = a!.dispatcher.last('x');
    const token2 = (await a!.coordinator.leases.markRunning(a!.tenantId, x2.taskId, 0))!;
    const [third] = await startMany(a!, chain, 1);
    const x3 = a!.dispatcher.last('x');
    expect(x3.runId).toBe(third);
    await startMany(a!, chain, 4); // A's backlog: the window is full
    // B's first attempt goes ahead at once (B was idle); its second waits in the backlog.
    const [, waiting] = await startMany(b!, def([http('z', undefined, { queue })]), 2);
    expect((await b!.tasks(waiting!)).z).toMatchObject({ status: 'QUEUED' });
    const refused = await a!.coordinator.runs.reportCompleted(a!.tenantId, {
      runId: second!,
      taskId: x2.taskId,
      nodeId: 'x',
      attempt: 0,
      output: {},
      leaseToken: token2,
      takeFrom: queue,
    });
    expect(refused.taken).toBeUndefined();
    expect((await a!.tasks(second!)).y).toMatchObject({ status: 'QUEUED' });
    // When the window has room again (the claims below free places one by one), B's attempt is
    // among the next two admitted, not after A's backlog of five.
    const before = a!.dispatcher.jobs.length;
    const zFirst = a!.dispatcher.jobs.find((j) => j.tenantId === b!.tenantId)!;
    await b!.coordinator.leases.markRunning(b!.tenantId, zFirst.taskId, 0);
    await a!.coordinator.leases.markRunning(a!.tenantId, x3.taskId, 0);
    await waitForJobs(a!, before + 1);
    await a!.coordinator.leases.markRunning(a!.tenantId, a!.dispatcher.jobs[before]!.taskId, 0);
    await waitForJobs(a!, before + 2);
    expect(a!.dispatcher.jobs.slice(before, before + 2).map((j) => j.runId)).toContain(waiting);
  });
});

describe("a tenant's pile of held rows", () => {
  it('is looked at a bounded part per pass, at its share, so another tenant is admitted at once', async () => {
    const queue = freshQueue();
    const [a, b] = await tenants(2, 100);
    const held = def([
      http('call', { url: 'http://example.test/{{ item }}' }, {
        queue,
        for_each: '{{ input.items }}',
        concurrency: { key: 'one', limit: 1 },
      } as Partial<WorkflowNode>),
    ]);
    const { workflowId } = await b!.publish(held);
    const { runId } = await b!.coordinator.runs.startRun(b!.tenantId, { workflowId, input: { items: Array.from({ length: 1000 }, (_, i) => i) } });
    // One admitted; of the 999 others, one pass held at most its budget and left the rest ready.
    const [counts] = (await db.owner.query(
      `SELECT count(*) FILTER (WHERE hold_reason IS NOT NULL)::int AS held, count(*) FILTER (WHERE hold_reason IS NULL AND enqueued_at IS NULL)::int AS ready
         FROM outbox WHERE run_id = $1`,
      [runId],
    )) as { held: number; ready: number }[];
    expect(counts!.held).toBeGreaterThan(0);
    expect(counts!.held).toBeLessThanOrEqual(400);
    expect(counts!.held + counts!.ready).toBe(999);
    // A's attempt is admitted by its own start's pass: B's holds were charged to B's share.
    const [quick] = await startMany(a!, def([http('x', undefined, { queue })]), 1);
    expect(a!.dispatcher.jobs.some((j) => j.runId === quick)).toBe(true);
  });
});

describe('node limits', () => {
  const fanOut = (queue: string, limits: Partial<WorkflowNode>) =>
    def([http('call', { url: 'http://example.test/{{ item }}' }, { queue, for_each: '{{ input.items }}', ...limits } as Partial<WorkflowNode>)]);

  it('a concurrency limit holds the attempts over it, and each end admits the next, across coordinators', async () => {
    const queue = freshQueue();
    const h = await coordinatorHarness(db.ds, { dispatchWindowFloor: 100 });
    const other = new RunCoordinator(db.ds, h.dispatcher, new RecordingPublisher(), { now: h.clock.now, logger: new MemoryLogger(), dispatchWindowFloor: 100 });
    const { workflowId } = await h.publish(fanOut(queue, { concurrency: { key: 'partner', limit: 2 } } as Partial<WorkflowNode>));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { items: [1, 2, 3, 4, 5] } });
    expect(h.dispatcher.forNode('call')).toHaveLength(2);
    const held = await holds(h.tenantId, runId);
    expect(held.map((r) => r.hold_reason)).toEqual(['CONCURRENCY_LIMIT', 'CONCURRENCY_LIMIT', 'CONCURRENCY_LIMIT']);
    expect(held[0]!.hold_detail).toBe('concurrency limit 2 reached for key "partner" (2 active)');

    // Attempts end through another coordinator (another process): each end admits exactly one more.
    for (let done = 0; done < 5; done++) {
      const job = h.dispatcher.forNode('call')[done]!;
      await other.runs.reportCompleted(h.tenantId, { runId, taskId: job.taskId, nodeId: 'call', attempt: 0, output: { done } });
      expect(await activeSlots(h.tenantId, 'partner')).toBeLessThanOrEqual(2);
      expect(h.dispatcher.forNode('call')).toHaveLength(Math.min(5, done + 3));
    }
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });

  it('a rate limit starts at most `limit` attempts per window by the database clock, and goes on after a restart', async () => {
    const queue = freshQueue();
    const h = await coordinatorHarness(db.ds, { dispatchWindowFloor: 100 });
    const { workflowId } = await h.publish(fanOut(queue, { rate_limit: { key: 'api', limit: 2, per_seconds: 10 } } as Partial<WorkflowNode>));
    const t0 = h.clock.now().getTime();
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { items: [1, 2, 3, 4, 5] } });
    const calls = () => h.dispatcher.jobs.filter((j) => j.runId === runId);
    expect(calls()).toHaveLength(2);
    let held = await holds(h.tenantId, runId);
    expect(held).toHaveLength(3);
    // Two admitted attempts no worker took yet: they are the window's next starts.
    expect(held[0]).toMatchObject({ hold_reason: 'RATE_LIMIT', hold_detail: 'rate limit "api" 2 per 10 s, 2 admitted attempts not started yet' });
    expect(held[0]!.held_until.getTime()).toBe(t0 + 5_000);
    // A worker starts them (its claims record the starts) a second later.
    h.clock.advance(1_000);
    const claim = async (j: TaskJob) => h.coordinator.leases.markRunning(h.tenantId, j.taskId, j.attempt);
    for (const j of calls()) await claim(j);
    h.clock.advance(4_000);
    await h.coordinator.outbox.relay(100);
    held = await holds(h.tenantId, runId);
    expect(held[0]!.held_until.getTime()).toBe(t0 + 11_000);
    expect(held[0]!.hold_detail).toBe(`rate limit "api" 2 per 10 s, next start ${new Date(t0 + 11_000).toISOString().slice(11)}`);

    h.clock.advance(5_999);
    await h.coordinator.outbox.relay(100);
    expect(calls()).toHaveLength(2);
    // A new process (a restart): the window is the database's, not the old process's memory.
    const restarted = new RunCoordinator(db.ds, h.dispatcher, new RecordingPublisher(), {
      now: h.clock.now,
      logger: new MemoryLogger(),
      dispatchWindowFloor: 100,
    });
    h.clock.advance(1);
    await restarted.outbox.relay(100);
    expect(calls()).toHaveLength(4);
    // Admitted, not started: the last one waits for them to start and for the window to pass them.
    h.clock.advance(20_000);
    await restarted.outbox.relay(100);
    expect(calls()).toHaveLength(4);
    for (const j of calls().slice(2)) await claim(j);
    h.clock.advance(9_999);
    await restarted.outbox.relay(100);
    expect(calls()).toHaveLength(4);
    h.clock.advance(1);
    await restarted.outbox.relay(100);
    // Admitted by this poll or by the pass the claims asked for, whichever ran first.
    await until(() => calls().length === 5);
    expect(calls()).toHaveLength(5);
  });
});

/** Polls until the first harness's queue has recorded `n` jobs (admission after a claim runs in the background). */
async function waitForJobs(h: Awaited<ReturnType<typeof coordinatorHarness>>, n: number): Promise<void> {
  for (let i = 0; i < 400 && h.dispatcher.jobs.length < n; i++) await new Promise((r) => setTimeout(r, 25));
  expect(h.dispatcher.jobs.length).toBeGreaterThanOrEqual(n);
}

/** Polls `done` until it holds (background passes), at most 10 s. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
}

/** The held backlog rows of run `runId`, in backlog order. */
async function holds(tenantId: string, runId: string) {
  const r = await withTenant(db.ds, tenantId, (m) =>
    sql<{ hold_reason: string; hold_detail: string; held_until: Date }>(
      m,
      `SELECT hold_reason, hold_detail, held_until FROM outbox WHERE tenant_id = $1 AND run_id = $2 AND hold_reason IS NOT NULL ORDER BY id`,
      [tenantId, runId],
    ),
  );
  return r.rows;
}

/** The attempts holding a slot of node key `key` (dispatched or running). */
async function activeSlots(tenantId: string, key: string): Promise<number> {
  const [row] = (await db.owner.query(
    `SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND flow_concurrency_key = $2 AND status IN ('PENDING', 'RUNNING')`,
    [tenantId, key],
  )) as { n: number }[];
  return row!.n;
}

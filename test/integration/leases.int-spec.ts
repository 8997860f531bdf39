import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { RunRepository, sql, withTenant } from '@weft/persistence';
import { jobId } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, type WeftConfig } from '@weft/platform';
import { Scheduler } from '@weft/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, ManualClock, MemoryLogger, publishWorkflow, RecordingPublisher } from '../support/builders.js';

/**
 * Task leases in PostgreSQL: the lease a dispatch gives, the worker's
 * claim and heartbeats, fencing of reports by lease token, and the scheduler's lease sweep that
 * re-dispatches tasks whose job is gone — on the real PostgreSQL and a real Bull queue under a
 * key prefix of its own (no other process consumes its jobs). Time is a hand-moved clock. The
 * sweep works across tenants, so each test has a database of its own.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `itest-leases-${randomBytes(4).toString('hex')}`;
const QUEUE = 'leases';
const DISPATCH_LEASE = 30_000;
const RUN_LEASE = 15_000;

let queues: BullTaskQueues;
const dbs: TestDatabase[] = [];

beforeAll(async () => {
  queues = new BullTaskQueues(REDIS_URL, PREFIX);
});
afterAll(async () => {
  await queues
    ?.queue(QUEUE)
    .obliterate({ force: true })
    .catch(() => undefined);
  await queues?.close();
  await Promise.all(dbs.map((d) => d.drop()));
});

async function setup() {
  const db = await createTestDatabase({ poolSize: 4 });
  dbs.push(db);
  await queues.queue(QUEUE).obliterate({ force: true });
  const { tenantId } = await createTenant(db.ds);
  const clock = new ManualClock(new Date());
  const logger = new MemoryLogger();
  // No worker claims these jobs: admit every attempt, however many wait for a worker.
  const opts = { now: clock.now, logger, dispatchLeaseMs: DISPATCH_LEASE, runLeaseMs: RUN_LEASE, dispatchWindowFloor: 1_000_000 };
  const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), opts);
  const node = http('a', { url: 'http://example.test/a' }, { queue: QUEUE, retry: { max_attempts: 2, backoff_seconds: 120 } });
  const { workflowId } = await publishWorkflow(db.ds, tenantId, def([node], []));
  const runs = new RunRepository(db.ds);
  const h = {
    db,
    tenantId,
    clock,
    logger,
    coordinator,
    opts,
    q: queues.queue(QUEUE),
    async start() {
      const { runId } = await coordinator.runs.startRun(tenantId, { workflowId });
      return { runId, taskId: (await h.task(runId)).id };
    },
    async task(runId: string) {
      const r = await withTenant(db.ds, tenantId, (m) =>
        sql<{ id: string; status: string; attempt: number; lease_token: string | null; lease_expires_at: Date | null }>(
          m,
          `SELECT id, status, attempt, lease_token, lease_expires_at FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = 'a'`,
          [tenantId, runId],
        ),
      );
      return r.rows[0]!;
    },
    async history(runId: string) {
      return (await runs.eventsOfRun(tenantId, runId)).map((e) => ({ type: e.type, attempt: e.attempt, ignored: e.ignored }));
    },
    lease(taskId: string, attempt: number, leaseToken: string) {
      return { tenantId, taskId, attempt, leaseToken };
    },
  };
  return h;
}

describe('a worker task lease', () => {
  it('is given by the dispatch (not_before + dispatch lease), claimed by markRunning (now + run lease) and extended by heartbeats', async () => {
    const h = await setup();
    const t = await h.start();
    const started = h.clock.now().getTime();
    expect(await h.task(t.runId)).toMatchObject({ status: 'PENDING', lease_token: null, lease_expires_at: new Date(started + DISPATCH_LEASE) });

    h.clock.advance(2_000);
    const token = await h.coordinator.leases.markRunning(h.tenantId, t.taskId, 0);
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    expect(await h.task(t.runId)).toMatchObject({ status: 'RUNNING', lease_token: token, lease_expires_at: new Date(started + 2_000 + RUN_LEASE) });

    h.clock.advance(5_000);
    expect(await h.coordinator.leases.heartbeat([h.lease(t.taskId, 0, token!)])).toEqual(new Set());
    expect((await h.task(t.runId)).lease_expires_at).toEqual(new Date(started + 7_000 + RUN_LEASE));
  });

  it('heartbeats name the leases lost: superseded by a new claim, task cancelled, malformed', async () => {
    const h = await setup();
    const a = await h.start();
    const b = await h.start();
    const first = (await h.coordinator.leases.markRunning(h.tenantId, a.taskId, 0))!;
    const second = (await h.coordinator.leases.markRunning(h.tenantId, a.taskId, 0))!; // a redelivery claims again
    const other = (await h.coordinator.leases.markRunning(h.tenantId, b.taskId, 0))!;
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: b.runId });
    const lost = await h.coordinator.leases.heartbeat([
      h.lease(a.taskId, 0, first),
      h.lease(a.taskId, 0, second),
      h.lease(b.taskId, 0, other),
      { tenantId: 'x', taskId: 'y', attempt: 0, leaseToken: 'z' },
    ]);
    expect([...lost].sort()).toEqual([first, other, 'z'].sort());
    expect(await h.coordinator.leases.heartbeat([h.lease(a.taskId, 0, second)])).toEqual(new Set());
  });
});

describe('fencing by lease token', () => {
  it('ignores a late report of a superseded execution, records why in the history, and accepts the current one', async () => {
    const h = await setup();
    const t = await h.start();
    const old = (await h.coordinator.leases.markRunning(h.tenantId, t.taskId, 0))!;
    const current = (await h.coordinator.leases.markRunning(h.tenantId, t.taskId, 0))!; // Bull redelivered the job

    const late = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId: t.runId,
      taskId: t.taskId,
      nodeId: 'a',
      attempt: 0,
      output: { from: 'old' },
      leaseToken: old,
    });
    expect(late).toEqual({ ignored: "stale lease: attempt 0 of node a was re-dispatched; this execution's lease was superseded" });
    const failed = await h.coordinator.runs.reportFailed(h.tenantId, {
      runId: t.runId,
      taskId: t.taskId,
      nodeId: 'a',
      attempt: 0,
      error: 'x',
      leaseToken: old,
    });
    expect(failed.ignored).toMatch(/^stale lease/);
    expect(await h.task(t.runId)).toMatchObject({ status: 'RUNNING', attempt: 0, lease_token: current });

    expect(
      await h.coordinator.runs.reportCompleted(h.tenantId, {
        runId: t.runId,
        taskId: t.taskId,
        nodeId: 'a',
        attempt: 0,
        output: { from: 'current' },
        leaseToken: current,
      }),
    ).toEqual({});
    expect(await h.history(t.runId)).toEqual([
      { type: 'RunStarted', attempt: null, ignored: null },
      { type: 'NodeCompleted', attempt: 0, ignored: late.ignored },
      { type: 'NodeFailed', attempt: 0, ignored: failed.ignored },
      { type: 'NodeCompleted', attempt: 0, ignored: null },
    ]);
    const run = await new RunRepository(h.db.ds).findRun(h.tenantId, t.runId);
    expect(run).toMatchObject({ status: 'SUCCEEDED', output: { a: { from: 'current' } } });
  });

  it('a report without a token is fenced by its attempt only (tools and tests)', async () => {
    const h = await setup();
    const t = await h.start();
    await h.coordinator.leases.markRunning(h.tenantId, t.taskId, 0);
    expect(await h.coordinator.runs.reportCompleted(h.tenantId, { runId: t.runId, taskId: t.taskId, nodeId: 'a', attempt: 0, output: {} })).toEqual({});
  });
});

describe('the lease sweep', () => {
  it('puts PENDING and RUNNING tasks whose lease expired and whose job is gone back in the backlog, admitted again under the same job id; leaves live jobs and finished tasks alone', async () => {
    const h = await setup();
    const lost = await h.start(); // PENDING, job deleted
    const running = await h.start(); // RUNNING, the worker died and its job vanished
    const live = await h.start(); // job still waiting on the queue
    const finished = await h.start(); // completed, job gone
    const oldToken = (await h.coordinator.leases.markRunning(h.tenantId, running.taskId, 0))!;
    await h.coordinator.leases.markRunning(h.tenantId, finished.taskId, 0);
    await h.coordinator.runs.reportCompleted(h.tenantId, { runId: finished.runId, taskId: finished.taskId, nodeId: 'a', attempt: 0, output: {} });
    for (const t of [lost, running, finished]) await (await h.q.getJob(jobId(t.taskId, 0)))!.remove();
    const liveJob = await h.q.getJob(jobId(live.taskId, 0));
    expect(liveJob).not.toBeNull();

    // Before the leases end nothing is probed: the running task's lease ends first (15 s).
    h.clock.advance(RUN_LEASE - 1_000);
    expect(await h.coordinator.lostTasks.sweep(100, queues)).toBe(0);
    h.clock.advance(2_000);
    expect(await h.coordinator.lostTasks.sweep(100, queues)).toBe(1);
    expect((await h.q.getJob(jobId(running.taskId, 0)))?.data).toMatchObject({ taskId: running.taskId, attempt: 0, queue: QUEUE });
    // The dead execution's lease is revoked (its late report is ignored), and the attempt was admitted again.
    expect(await h.task(running.runId)).toMatchObject({ status: 'PENDING', lease_token: null });
    const stale = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId: running.runId,
      taskId: running.taskId,
      nodeId: 'a',
      attempt: 0,
      output: {},
      leaseToken: oldToken,
    });
    expect(stale.ignored).toMatch(/^stale lease: attempt 0 of node a was re-dispatched/);

    h.clock.advance(DISPATCH_LEASE - RUN_LEASE);
    expect(await h.coordinator.lostTasks.sweep(100, queues)).toBe(1);
    expect((await h.q.getJob(jobId(lost.taskId, 0)))?.data).toMatchObject({
      tenantId: h.tenantId,
      runId: lost.runId,
      taskId: lost.taskId,
      nodeId: 'a',
      attempt: 0,
      input: { url: 'http://example.test/a' },
    });
    expect((await h.q.getJob(jobId(live.taskId, 0)))?.timestamp).toBe(liveJob!.timestamp);
    expect(await h.q.getJob(jobId(finished.taskId, 0))).toBeNull();
    expect(h.logger.warnings.filter((w) => w.includes("back in the queue's backlog"))).toHaveLength(2);

    // A live job's lease was pushed a dispatch lease ahead: not probed at every poll.
    const pushed = (await h.task(live.runId)).lease_expires_at!.getTime();
    expect(pushed).toBe(h.clock.now().getTime() + DISPATCH_LEASE);
    expect(await h.coordinator.lostTasks.sweep(100, queues)).toBe(0);
    // The re-dispatched RUNNING attempt is claimed again by whoever takes the job.
    expect(await h.coordinator.leases.markRunning(h.tenantId, running.taskId, 0)).toEqual(expect.any(String));
    await h.q.obliterate({ force: true });
  });

  it("holds a retry's backoff in the backlog, with no job and no lease; the scheduler's poll admits it when due", async () => {
    const h = await setup();
    const t = await h.start();
    await h.coordinator.runs.reportFailed(h.tenantId, { runId: t.runId, taskId: t.taskId, nodeId: 'a', attempt: 0, error: 'HTTP 503' });
    expect(await h.q.getJob(jobId(t.taskId, 1))).toBeNull();
    expect(await h.task(t.runId)).toMatchObject({ status: 'QUEUED', attempt: 1, lease_token: null, lease_expires_at: null });
    const scheduler = Scheduler.create(h.coordinator, { schedulerIntervalMs: 1_000 } as WeftConfig, queues);

    h.clock.advance(119_000);
    expect(await scheduler.pollOnce()).toMatchObject({ relayed: 0, redispatched: 0 });
    expect(await h.q.getJob(jobId(t.taskId, 1))).toBeNull();

    h.clock.advance(1_000); // not_before
    expect(await scheduler.pollOnce()).toMatchObject({ relayed: 1, redispatched: 0 });
    const due = await h.q.getJob(jobId(t.taskId, 1));
    expect(due?.data).toMatchObject({ taskId: t.taskId, attempt: 1 });
    expect(await due!.isDelayed()).toBe(false);
    expect(await h.task(t.runId)).toMatchObject({ status: 'PENDING', attempt: 1, lease_expires_at: new Date(h.clock.now().getTime() + DISPATCH_LEASE) });
    await h.q.obliterate({ force: true });
  });

  it('removes a finished job left behind so the attempt can be enqueued again', async () => {
    const h = await setup();
    const t = await h.start();
    // A job Bull failed but kept (as if removeOnFail were off).
    const original = await h.q.getJob(jobId(t.taskId, 0));
    await original!.remove();
    await h.q.add(original!.data, { jobId: jobId(t.taskId, 0), attempts: 1, removeOnFail: false });
    const active = await h.q.getNextJob();
    expect(active?.id).toBe(jobId(t.taskId, 0));
    await active!.moveToFailed({ message: 'job stalled more than allowable limit' }, true);
    expect(await active!.getState()).toBe('failed');
    await active!.releaseLock(); // as after Bull's stalled check: nobody holds the job
    expect(await queues.hasJob(QUEUE, jobId(t.taskId, 0))).toBe(false);
    expect(await h.q.getJob(jobId(t.taskId, 0))).toBeNull();

    h.clock.advance(DISPATCH_LEASE + 1_000);
    expect(await h.coordinator.lostTasks.sweep(100, queues)).toBe(1);
    expect(await queues.hasJob(QUEUE, jobId(t.taskId, 0))).toBe(true);
    await h.q.obliterate({ force: true });
  });

  it('two scheduler replicas sweeping at once re-dispatch each lost task once', async () => {
    const h = await setup();
    const tasks = await Promise.all(Array.from({ length: 20 }, () => h.start()));
    await h.q.obliterate({ force: true });
    h.clock.advance(DISPATCH_LEASE + 1_000);
    const enqueued: string[] = [];
    const recording = { enqueue: async (jobs: { taskId: string; attempt: number }[]) => void enqueued.push(...jobs.map((j) => jobId(j.taskId, j.attempt))) };
    const replica = () => new RunCoordinator(h.db.ds, recording as never, new RecordingPublisher(), h.opts);
    const missing = { hasJob: async () => false };
    const counts = await Promise.all([replica().lostTasks.sweep(7, missing), replica().lostTasks.sweep(7, missing), replica().lostTasks.sweep(7, missing)]);
    const more = await Promise.all([replica().lostTasks.sweep(7, missing), replica().lostTasks.sweep(7, missing)]);
    expect([...counts, ...more].reduce((a, b) => a + b, 0)).toBe(20);
    expect(enqueued.sort()).toEqual(tasks.map((t) => jobId(t.taskId, 0)).sort());
  });
});

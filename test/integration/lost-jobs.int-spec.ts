import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { sql, withTenant } from '@weft/persistence';
import { RunCoordinator, jobId } from '@weft/engine';
import { BullTaskQueues, type WeftConfig } from '@weft/platform';
import { SchedulerPoller } from '../../apps/scheduler/src/pollers/scheduler.poller.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, ManualClock, MemoryLogger, publishWorkflow, RecordingPublisher } from '../support/builders.js';

/**
 * The scheduler's sweep of tasks whose Bull job vanished (DESIGN §4), on the real PostgreSQL and
 * a real Bull queue under a prefix of its own, so no other process consumes its jobs.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `itest-lost-${randomBytes(4).toString('hex')}`;
const QUEUE = 'lost';
const THRESHOLD = 60_000;

let db: TestDatabase;
let queues: BullTaskQueues;

beforeAll(async () => {
  db = await createTestDatabase();
  queues = new BullTaskQueues(REDIS_URL, PREFIX);
});
afterAll(async () => {
  await queues?.queue(QUEUE).obliterate({ force: true }).catch(() => undefined);
  await queues?.close();
  await db?.drop();
});

async function setup() {
  const { tenantId } = await createTenant(db.ds);
  const clock = new ManualClock(new Date());
  const logger = new MemoryLogger();
  const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { now: clock.now, logger, lostTaskAfterMs: THRESHOLD });
  const node = http('a', { url: 'http://example.test/a' }, { queue: QUEUE, retry: { max_attempts: 2, backoff_seconds: 120 } });
  const { workflowId } = await publishWorkflow(db.ds, tenantId, def([node], []));
  const start = async () => {
    const { runId } = await coordinator.startRun(tenantId, { workflowId });
    const r = await withTenant(db.ds, tenantId, (m) =>
      sql<{ id: string }>(m, `SELECT id FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = 'a'`, [tenantId, runId]),
    );
    return { runId, taskId: r.rows[0]!.id };
  };
  return { tenantId, clock, logger, coordinator, start };
}

describe('re-dispatching tasks whose Bull job vanished', () => {
  it('re-enqueues lost PENDING and RUNNING tasks, leaves live jobs and finished tasks alone', async () => {
    const { tenantId, clock, logger, coordinator, start } = await setup();
    const q = queues.queue(QUEUE);

    const lost = await start(); // PENDING, job deleted
    const running = await start(); // RUNNING (worker died), job deleted
    const live = await start(); // job still on the queue
    const finished = await start(); // completed, job gone
    expect(await coordinator.markRunning(tenantId, running.taskId, 0)).toBe(true);
    expect(await coordinator.markRunning(tenantId, finished.taskId, 0)).toBe(true);
    await coordinator.reportCompleted(tenantId, { runId: finished.runId, taskId: finished.taskId, nodeId: 'a', attempt: 0, output: {} });
    for (const t of [lost, running, finished]) await (await q.getJob(jobId(t.taskId, 0)))!.remove();
    const liveJob = await q.getJob(jobId(live.taskId, 0));
    expect(liveJob).not.toBeNull();

    // Before the threshold nothing is probed.
    clock.advance(THRESHOLD - 1_000);
    expect(await coordinator.sweepLostTasks(100, queues)).toBe(0);
    expect(await q.getJob(jobId(lost.taskId, 0))).toBeNull();

    clock.advance(2_000);
    expect(await coordinator.sweepLostTasks(100, queues)).toBe(2);
    const again = await q.getJob(jobId(lost.taskId, 0));
    expect(again?.data).toMatchObject({ tenantId, runId: lost.runId, taskId: lost.taskId, nodeId: 'a', attempt: 0, queue: QUEUE, input: { url: 'http://example.test/a' } });
    expect(await q.getJob(jobId(running.taskId, 0))).not.toBeNull();
    expect(await q.getJob(jobId(finished.taskId, 0))).toBeNull();
    expect((await q.getJob(jobId(live.taskId, 0)))?.timestamp).toBe(liveJob!.timestamp);
    expect(logger.warnings.filter((w) => w.includes('re-dispatched'))).toHaveLength(2);
    // The re-dispatched RUNNING attempt is executed again (fenced by its attempt).
    expect(await coordinator.markRunning(tenantId, running.taskId, 0)).toBe(true);

    // Claimed tasks are hidden until the threshold passes again; a re-added job is then found.
    expect(await coordinator.sweepLostTasks(100, queues)).toBe(0);
    clock.advance(THRESHOLD + 1_000);
    expect(await coordinator.sweepLostTasks(100, queues)).toBe(0);
    await q.obliterate({ force: true });
  });

  it('waits for a delayed retry until its not_before plus the threshold; the poller sweeps', async () => {
    const { tenantId, clock, coordinator, start } = await setup();
    const q = queues.queue(QUEUE);
    const t = await start();
    await coordinator.reportFailed(tenantId, { runId: t.runId, taskId: t.taskId, nodeId: 'a', attempt: 0, error: 'HTTP 503' });
    const retry = await q.getJob(jobId(t.taskId, 1));
    expect(await retry!.isDelayed()).toBe(true);
    await retry!.remove();

    clock.advance(THRESHOLD + 1_000); // past the task's last change, not past not_before (+120 s) + threshold
    expect(await coordinator.sweepLostTasks(100, queues)).toBe(0);

    clock.advance(120_000);
    const poller = new SchedulerPoller(coordinator, { schedulerIntervalMs: 1_000 } as WeftConfig, queues);
    expect(await poller.pollOnce()).toEqual({ timers: 0, relayed: 0, redispatched: 1 });
    expect((await q.getJob(jobId(t.taskId, 1)))?.data).toMatchObject({ taskId: t.taskId, attempt: 1 });
    await q.obliterate({ force: true });
  });

  it('removes a finished job left behind so the attempt can be enqueued again', async () => {
    const { clock, coordinator, start } = await setup();
    const q = queues.queue(QUEUE);
    const t = await start();
    // A job Bull failed but kept (as if removeOnFail were off).
    const original = await q.getJob(jobId(t.taskId, 0));
    await original!.remove();
    await q.add(original!.data, { jobId: jobId(t.taskId, 0), attempts: 1, removeOnFail: false });
    const active = await q.getNextJob();
    expect(active?.id).toBe(jobId(t.taskId, 0));
    await active!.moveToFailed({ message: 'job stalled more than allowable limit' }, true);
    expect(await active!.getState()).toBe('failed');
    await active!.releaseLock(); // as after Bull's stalled check: nobody holds the job
    expect(await queues.hasJob(QUEUE, jobId(t.taskId, 0))).toBe(false);
    expect(await q.getJob(jobId(t.taskId, 0))).toBeNull();

    clock.advance(THRESHOLD + 1_000);
    expect(await coordinator.sweepLostTasks(100, queues)).toBe(1);
    expect(await queues.hasJob(QUEUE, jobId(t.taskId, 0))).toBe(true);
    await q.obliterate({ force: true });
  });
});

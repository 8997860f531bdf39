import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { RunRepository, claimDueTimers, sql, withTenant } from '@weft/persistence';
import { type TaskDispatcher, type TaskJob, type WorkflowDefinition } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, MemoryLogger, publishWorkflow, RecordingPublisher, wait, waitFor } from '../support/builders.js';
import { sleep } from '../support/faults.js';

/**
 * Time is the database's: a coordinator built without a test clock — as in
 * production — running in a process whose own clock is five hours off computes WAIT wake-ups,
 * retry `not_before`, WAIT_FOR_EVENT timeouts, lease expiries and every timestamp from
 * PostgreSQL's clock, and its scheduler passes compare with PostgreSQL's `now()`. The process
 * clock is skewed by faking `Date` only (timers stay real).
 */

const HOUR = 3_600_000;
const RUN_LEASE = 15_000;
const DISPATCH_LEASE = 30_000;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(() => {
  jest.useRealTimers();
});
afterAll(async () => {
  await db?.drop();
});

/** Fakes only `Date`: the process clock runs `offsetMs` off the real time, timers stay real. */
function skewProcessClock(offsetMs: number): void {
  jest.useFakeTimers({
    now: Date.now() + offsetMs,
    advanceTimers: true,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}

/** A dispatcher that records each enqueue with the `now` it was given (the delay's reference). */
class ClockRecordingDispatcher implements TaskDispatcher {
  readonly calls: { jobs: TaskJob[]; now: Date | undefined }[] = [];
  failing = false;
  async enqueue(jobs: TaskJob[], now?: Date): Promise<void> {
    if (this.failing) throw new Error('redis unavailable');
    this.calls.push({ jobs, now });
  }
}

async function dbNow(): Promise<number> {
  const [row] = (await db.ds.query('SELECT clock_timestamp() AS now')) as { now: Date }[];
  return row!.now.getTime();
}

async function setup() {
  const { tenantId } = await createTenant(db.ds);
  const dispatcher = new ClockRecordingDispatcher();
  // No `now` option: the production path.
  const coordinator = new RunCoordinator(db.ds, dispatcher, new RecordingPublisher(), {
    logger: new MemoryLogger(),
    runLeaseMs: RUN_LEASE,
    dispatchLeaseMs: DISPATCH_LEASE,
  });
  const runs = new RunRepository(db.ds);
  const h = {
    tenantId,
    dispatcher,
    coordinator,
    async start(definition: WorkflowDefinition) {
      const { workflowId } = await publishWorkflow(db.ds, tenantId, definition);
      return (await coordinator.runs.startRun(tenantId, { workflowId })).runId;
    },
    async task(runId: string, nodeId: string) {
      const r = await withTenant(db.ds, tenantId, (m) =>
        sql<{
          id: string;
          attempt: number;
          wake_at: Date | null;
          lease_expires_at: Date | null;
          created_at: Date;
          not_before: Date | null;
          held_until: Date | null;
        }>(
          m,
          `SELECT t.id, t.attempt, t.wake_at, t.lease_expires_at, t.created_at, o.not_before, o.held_until
             FROM tasks t LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt
            WHERE t.tenant_id = $1 AND t.run_id = $2 AND t.node_id = $3`,
          [tenantId, runId, nodeId],
        ),
      );
      return r.rows[0]!;
    },
    async run(runId: string) {
      return (await runs.findRun(tenantId, runId))!;
    },
  };
  return h;
}

/** `actual` (ms) is `expected` (ms) give or take two seconds. */
function near(actual: number | undefined, expected: number): void {
  expect(Math.abs((actual ?? NaN) - expected)).toBeLessThan(2_000);
}

describe.each([
  ['five hours ahead', 5 * HOUR],
  ['five hours behind', -5 * HOUR],
])('a coordinator whose process clock is %s', (_label, offset) => {
  it('computes WAIT wake-ups, retry not_before, timeouts, leases and timestamps from the database clock', async () => {
    const h = await setup();
    skewProcessClock(offset);
    const before = await dbNow();
    expect(Math.abs(Date.now() - before)).toBeGreaterThan(4 * HOUR); // the skew is in effect

    const waiting = await h.start(def([wait('w', 60)]));
    near((await h.task(waiting, 'w')).wake_at?.getTime(), before + 60_000);
    near((await h.run(waiting)).createdAt.getTime(), before);

    const timeout = await h.start(def([waitFor('e', 'approve', 120)]));
    near((await h.task(timeout, 'e')).wake_at?.getTime(), before + 120_000);

    const retried = await h.start(def([http('a', undefined, { retry: { max_attempts: 2, backoff_seconds: 30 } })]));
    const first = await h.task(retried, 'a');
    near(first.lease_expires_at?.getTime(), before + DISPATCH_LEASE); // admitted at once
    const job = h.dispatcher.calls.at(-1)!;
    near(job.now?.getTime(), before); // the enqueue's delay is measured from the database's now
    const token = await h.coordinator.leases.markRunning(h.tenantId, first.id, 0);
    near((await h.task(retried, 'a')).lease_expires_at?.getTime(), before + RUN_LEASE);
    expect(await h.coordinator.leases.heartbeat([{ tenantId: h.tenantId, taskId: first.id, attempt: 0, leaseToken: token! }])).toEqual(new Set());
    near((await h.task(retried, 'a')).lease_expires_at?.getTime(), before + RUN_LEASE);

    await h.coordinator.runs.reportFailed(h.tenantId, { runId: retried, taskId: first.id, nodeId: 'a', attempt: 0, error: 'HTTP 503', leaseToken: token! });
    const retry = await h.task(retried, 'a');
    expect(retry.attempt).toBe(1);
    near(retry.not_before?.getTime(), before + 30_000);
    // Held in the backlog until then by the database's clock: no lease, no job yet.
    near(retry.held_until?.getTime(), before + 30_000);
    expect(retry.lease_expires_at).toBeNull();
    expect(h.dispatcher.calls.at(-1)!.jobs[0]).toMatchObject({ attempt: 0 });
    expect(await h.coordinator.outbox.relay(100)).toBe(0);
  });

  it('fires a timer, sweeps a lease and admits a held retry only when due by the database clock', async () => {
    const h = await setup();
    // Written while the clock was right: a timer due in one second, a fresh lease, a retry held
    // for a second of backoff. Then the scheduler's process clock goes off.
    const waiting = await h.start(def([wait('w', 1)]));
    const retried = await h.start(def([http('a', undefined, { retry: { max_attempts: 2, backoff_seconds: 1 } })]));
    const first = await h.task(retried, 'a');
    await h.coordinator.runs.reportFailed(h.tenantId, { runId: retried, taskId: first.id, nodeId: 'a', attempt: 0, error: 'HTTP 503' });
    const probe = { hasJob: async () => false };
    skewProcessClock(offset);

    expect(await h.coordinator.timers.fireDue(100)).toBe(0);
    expect(await h.coordinator.lostTasks.sweep(100, probe)).toBe(0);
    expect(await h.coordinator.outbox.relay(100)).toBe(0);
    const retriedJobs = () => h.dispatcher.calls.flatMap((c) => c.jobs).filter((j) => j.runId === retried && j.attempt === 1);
    expect(retriedJobs()).toEqual([]);
    // The claim functions themselves take NULL as the database's now().
    expect(await claimDueTimers(db.ds, null, 100, 60_000)).toEqual([]);

    await sleep(1_200);
    // Admitted by this poll, or a moment before by the process's timer for the hold's end.
    await h.coordinator.outbox.relay(100);
    expect(retriedJobs()).toHaveLength(1);
    expect(await h.coordinator.timers.fireDue(100)).toBe(1);
    expect((await h.run(waiting)).status).toBe('SUCCEEDED');
    expect(await h.coordinator.lostTasks.sweep(100, probe)).toBe(0); // its lease runs 30 s
  });
});

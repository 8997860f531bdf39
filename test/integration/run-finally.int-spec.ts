import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FinallyStep, WorkflowDefinition } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http, MemoryLogger, waitFor } from '../support/builders.js';

/**
 * A definition's finally step on real PostgreSQL: the decided outcome is kept on the run row
 * while the step runs, survives a new coordinator (a process restart), and is cleared when the
 * run finishes; a timed-out run's step is not stopped by its deadline; a cancel of a paused run
 * dispatches the step unheld.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

const cleanup: FinallyStep = { node_id: 'cleanup', type: 'HTTP', spec: { url: 'http://example.test/cleanup', body: { status: '{{ run.status }}' } } };
const withFinally = (d: WorkflowDefinition): WorkflowDefinition => ({ ...d, finally: cleanup });

/** Fires what is due until nothing is (timers and deadlines). */
async function fireAll(h: Harness): Promise<void> {
  while ((await h.coordinator.timers.fireDue(100)) > 0);
}

describe('a finally step', () => {
  it('keeps the decided outcome on the run row while it runs, across a restart, and clears it at the end', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(withFinally(def([http('a')])));
    await h.complete('a', { n: 1 });

    const deciding = await h.run(runId);
    expect(deciding).toMatchObject({ status: 'RUNNING', decidedStatus: 'SUCCEEDED', decidedError: null, decidedOutput: { a: { n: 1 } }, output: null });
    expect(await h.statuses(runId)).toEqual({ a: 'COMPLETED', cleanup: 'PENDING' });
    expect(h.dispatcher.last('cleanup').input).toEqual({ url: 'http://example.test/cleanup', body: { status: 'SUCCEEDED' } });

    // A new coordinator over the same database: nothing of the run is in its memory.
    const restarted = new RunCoordinator(db.ds, h.dispatcher, h.publisher, { now: h.clock.now, logger: new MemoryLogger(), dispatchWindowFloor: 1_000_000 });
    const job = h.dispatcher.last('cleanup');
    await restarted.runs.reportCompleted(h.tenantId, { runId, taskId: job.taskId, nodeId: 'cleanup', attempt: job.attempt, output: {} });
    expect(await h.run(runId)).toMatchObject({
      status: 'SUCCEEDED',
      output: { a: { n: 1 } },
      error: null,
      decidedStatus: null,
      decidedError: null,
      decidedOutput: null,
    });
    const types = (await h.events(runId)).flatMap((e) => (e.actions as Array<{ type: string }>).map((a) => a.type));
    expect(types.filter((t) => t === 'DecideRun' || t === 'FinishRun')).toEqual(['DecideRun', 'FinishRun']);
  });

  it('runs after a time-out, which clears the deadline, and a later deadline poll does not stop it', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start({ ...withFinally(def([waitFor('gate', 'go')])), timeout_seconds: 2 });
    h.clock.advance(2_000);
    await fireAll(h);
    expect(await h.run(runId)).toMatchObject({
      status: 'RUNNING',
      decidedStatus: 'TIMED_OUT',
      decidedError: 'run exceeded timeout_seconds 2',
      deadlineAt: null,
    });
    expect(await h.statuses(runId)).toEqual({ gate: 'CANCELLED', cleanup: 'PENDING' });
    h.clock.advance(60_000);
    await fireAll(h);
    expect((await h.run(runId)).status).toBe('RUNNING');
    await h.fail('cleanup', 'HTTP 502');
    expect(await h.run(runId)).toMatchObject({
      status: 'TIMED_OUT',
      error: 'run exceeded timeout_seconds 2; finally node cleanup failed: HTTP 502',
      decidedStatus: null,
    });
  });

  it('is dispatched, not held, when a paused run is cancelled', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(withFinally(def([http('a')])));
    await h.coordinator.runs.pauseRun(h.tenantId, { runId });
    await h.coordinator.runs.cancelRun(h.tenantId, { runId });
    expect(await h.run(runId)).toMatchObject({ status: 'RUNNING', pausedAt: null, pauseReason: null, decidedStatus: 'CANCELLED' });
    const cleanupTask = (await h.tasks(runId)).cleanup!;
    const rows = (await h.outbox(runId)).filter((r) => r.task_id === cleanupTask.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hold_reason).toBeNull();
    await h.complete('cleanup');
    expect(await h.run(runId)).toMatchObject({ status: 'CANCELLED', error: 'cancelled' });
  });
});

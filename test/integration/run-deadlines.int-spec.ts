import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowDefinition } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, waitFor } from '../support/builders.js';

/**
 * Run deadlines (`timeout_seconds`) on the database's clock: real PostgreSQL, a recording queue,
 * a hand-moved clock that the claim of due deadlines and the events both read.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** `definition` with a deadline of `seconds`. */
const timed = (seconds: number, definition: WorkflowDefinition): WorkflowDefinition => ({ ...definition, timeout_seconds: seconds });

/** Fires what is due until nothing is (timers, deadlines, and the child runs' wake-ups). */
async function fireAll(h: Harness): Promise<void> {
  while ((await h.coordinator.timers.fireDue(100)) > 0);
}

describe('a run deadline', () => {
  it('cancels the active tasks and ends the run TIMED_OUT once timeout_seconds passed, not before', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(timed(2, def([http('a'), waitFor('gate', 'go')], [edge('a', 'gate')])));
    const started = await h.run(runId);
    expect(started.deadlineAt).toEqual(new Date(started.createdAt.getTime() + 2_000));

    h.clock.advance(1_999);
    await fireAll(h);
    expect((await h.run(runId)).status).toBe('RUNNING');

    h.clock.advance(1);
    await fireAll(h);
    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'TIMED_OUT', error: 'run exceeded timeout_seconds 2' });
    expect(await h.statuses(runId)).toEqual({ a: 'CANCELLED' });
    // A late report of the cancelled attempt changes nothing.
    expect(await h.complete('a', {})).toMatchObject({ ignored: expect.any(String) });
    expect((await h.run(runId)).status).toBe('TIMED_OUT');
  });

  it('keeps counting while the run is paused', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(timed(5, def([waitFor('gate', 'go')])));
    await h.coordinator.runs.pauseRun(h.tenantId, { runId });
    h.clock.advance(5_000);
    await fireAll(h);
    expect(await h.run(runId)).toMatchObject({ status: 'TIMED_OUT', pausedAt: null, error: 'run exceeded timeout_seconds 5' });
  });

  it('counts anew from a retry', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(timed(3, def([waitFor('gate', 'go')])));
    h.clock.advance(3_000);
    await fireAll(h);
    expect((await h.run(runId)).status).toBe('TIMED_OUT');

    h.clock.advance(10_000);
    await h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'gate' });
    const retried = await h.run(runId);
    expect(retried.status).toBe('RUNNING');
    expect(retried.deadlineAt).toEqual(new Date(h.clock.now().getTime() + 3_000));
    h.clock.advance(2_000);
    await fireAll(h);
    expect((await h.run(runId)).status).toBe('RUNNING');
    h.clock.advance(1_000);
    await fireAll(h);
    expect((await h.run(runId)).status).toBe('TIMED_OUT');
  });

  it('counts from the slot for a run queued behind its concurrency key', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(timed(4, { ...def([waitFor('gate', 'go')]), concurrency: { limit: 1 } }));
    const first = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const second = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    expect(await h.run(second)).toMatchObject({ status: 'QUEUED', deadlineAt: null });

    h.clock.advance(4_000);
    await fireAll(h);
    expect((await h.run(first)).status).toBe('TIMED_OUT');
    const promoted = await h.run(second);
    expect(promoted.status).toBe('RUNNING');
    expect(promoted.deadlineAt).toEqual(new Date(h.clock.now().getTime() + 4_000));
  });

  it('cancels the child run a timed-out run was waiting on', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId: childId } = await h.publish(def([waitFor('hold', 'never')]));
    const root = await h.start(timed(2, def([{ node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: childId } }])));
    const [kid] = (await db.owner.query(`SELECT id FROM runs WHERE parent_run_id = $1`, [root])) as { id: string }[];
    expect((await h.run(kid!.id)).status).toBe('RUNNING');

    h.clock.advance(2_000);
    await fireAll(h);
    expect(await h.run(root)).toMatchObject({ status: 'TIMED_OUT', error: 'run exceeded timeout_seconds 2' });
    expect(await h.statuses(root)).toEqual({ call: 'CANCELLED' });
    expect(await h.run(kid!.id)).toMatchObject({ status: 'CANCELLED', error: `parent run ${root} timed out` });
  });

  it('is claimed once by two schedulers at the same time', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(timed(1, def([waitFor('gate', 'go')])));
    h.clock.advance(1_000);
    const other = (await coordinatorHarness(db.ds, { now: h.clock.now })).coordinator;
    const [a, b] = await Promise.all([h.coordinator.timers.fireDue(100), other.timers.fireDue(100)]);
    expect((await h.run(runId)).status).toBe('TIMED_OUT');
    const timeOuts = (await h.events(runId)).filter((e) => e.type === 'RunTimedOut');
    expect(timeOuts).toHaveLength(1);
    expect(a + b).toBeGreaterThanOrEqual(1);
  });
});

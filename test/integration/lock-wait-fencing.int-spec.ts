import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http } from '../support/builders.js';

/**
 * A report that waits for its run's lock (another event of the run holds it) must see the task
 * as it is once the lock is granted: a claim by another worker or a lease revocation committed
 * during the wait makes the report stale. The coordinator here holds the run's node states from
 * its previous event, so the reported task's row is the only fresh input.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** A chain z → a → b whose z this coordinator completed (it keeps the node states), a claimed with token A. */
async function claimedAfterCachedEvent() {
  const h = await coordinatorHarness(db.ds);
  const runId = await h.start(def([http('z'), http('a'), http('b')], [edge('z', 'a'), edge('a', 'b')]));
  await h.complete('z');
  const a = h.dispatcher.last('a');
  const tokenA = (await h.coordinator.leases.markRunning(h.tenantId, a.taskId, 0))!;
  return { h, runId, a, tokenA };
}

/** Holds the run row's lock on a connection of its own until `release` is called. */
async function lockRun(runId: string) {
  const locker = new pg.Client({ connectionString: db.ownerUrl });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [runId]);
  return {
    /** Resolves once some statement waits for a lock in this database. */
    async waiter() {
      for (let i = 0; i < 250; i++) {
        const r = await db.owner.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if ((r[0] as { n: number }).n > 0) return;
        await new Promise((res) => setTimeout(res, 20));
      }
      throw new Error('nothing waited for the run lock');
    },
    async release() {
      await locker.query('COMMIT');
      await locker.end();
    },
  };
}

describe('a report waiting for the run lock', () => {
  it('is stale when another worker claimed the attempt meanwhile, and the new holder completes the node', async () => {
    const { h, runId, a, tokenA } = await claimedAfterCachedEvent();
    const lock = await lockRun(runId);
    const late = h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: a.taskId, nodeId: 'a', attempt: 0, output: { by: 'A' }, leaseToken: tokenA });
    await lock.waiter();
    const tokenB = (await h.coordinator.leases.markRunning(h.tenantId, a.taskId, 0))!;
    await lock.release();

    expect((await late).ignored).toMatch(/stale lease/);
    const byB = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: a.taskId,
      nodeId: 'a',
      attempt: 0,
      output: { by: 'B' },
      leaseToken: tokenB,
    });
    expect(byB).toEqual({});
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'COMPLETED', output: { by: 'B' } });
  });

  it('is stale when the lease sweep revoked its lease meanwhile', async () => {
    const { h, runId, a, tokenA } = await claimedAfterCachedEvent();
    const lock = await lockRun(runId);
    const late = h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: a.taskId, nodeId: 'a', attempt: 0, output: { by: 'A' }, leaseToken: tokenA });
    await lock.waiter();
    await db.owner.query(`UPDATE tasks SET lease_token = NULL WHERE id = $1`, [a.taskId]); // what the sweep's revocation writes
    await lock.release();

    expect((await late).ignored).toMatch(/stale lease/);
    expect((await h.tasks(runId)).a!.status).not.toBe('COMPLETED');
  });

  it("cannot fail the run with a superseded execution's permanent failure", async () => {
    const { h, runId, a, tokenA } = await claimedAfterCachedEvent();
    const lock = await lockRun(runId);
    const late = h.coordinator.runs.reportFailed(h.tenantId, {
      runId,
      taskId: a.taskId,
      nodeId: 'a',
      attempt: 0,
      error: 'timed out while paused',
      retryable: false,
      leaseToken: tokenA,
    });
    await lock.waiter();
    const tokenB = (await h.coordinator.leases.markRunning(h.tenantId, a.taskId, 0))!;
    await lock.release();

    expect((await late).ignored).toMatch(/stale lease/);
    await h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: a.taskId, nodeId: 'a', attempt: 0, output: {}, leaseToken: tokenB });
    expect((await h.run(runId)).status).toBe('RUNNING');
    expect((await h.tasks(runId)).b).toBeDefined();
  });
});

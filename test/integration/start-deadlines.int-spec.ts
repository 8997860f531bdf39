import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * Schedule-to-start deadlines (`schedule_to_start_seconds`) on the database's clock: real
 * PostgreSQL, a recording queue (its jobs are admitted attempts no worker claimed), a hand-moved
 * clock.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** Fires what is due until nothing is. */
async function fireAll(h: Harness): Promise<void> {
  while ((await h.coordinator.timers.fireDue(100)) > 0);
}

/** The backlog row's start deadline of node `nodeId`'s task. */
async function startBy(h: Harness, runId: string, nodeId: string): Promise<Date | null> {
  const task = (await h.tasks(runId))[nodeId]!;
  const r = await withTenant(db.ds, h.tenantId, (m) =>
    sql<{ start_by: Date | null }>(m, `SELECT start_by FROM outbox WHERE tenant_id = $1 AND task_id = $2`, [h.tenantId, task.id]),
  );
  return r.rows[0]?.start_by ?? null;
}

const node = (extra: Record<string, unknown>) => http('call', undefined, { schedule_to_start_seconds: 5, ...extra });

describe('schedule_to_start_seconds', () => {
  it('fails an attempt no worker started in time, and the retry policy applies', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([node({ retry: { max_attempts: 2 } })]));
    expect(await startBy(h, runId, 'call')).toEqual(new Date(h.clock.now().getTime() + 5_000));

    h.clock.advance(4_999);
    await fireAll(h);
    expect((await h.tasks(runId)).call).toMatchObject({ status: 'PENDING', attempt: 0 });

    h.clock.advance(1);
    await fireAll(h);
    expect((await h.tasks(runId)).call).toMatchObject({ attempt: 1, error: 'not started within 5 s' });
    expect(await startBy(h, runId, 'call')).toEqual(new Date(h.clock.now().getTime() + 5_000));

    h.clock.advance(5_000);
    await fireAll(h);
    expect(await h.statuses(runId)).toEqual({ call: 'FAILED' });
    expect((await h.run(runId)).status).toBe('FAILED');
    expect((await h.run(runId)).error).toContain('not started within 5 s');
  });

  it('leaves an attempt a worker started alone, and voids its deadline', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([node({})]));
    const job = h.dispatcher.last('call');
    expect(await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId)).not.toBeNull();
    h.clock.advance(6_000);
    await fireAll(h);
    expect((await h.tasks(runId)).call).toMatchObject({ status: 'RUNNING', attempt: 0 });
    expect(await startBy(h, runId, 'call')).toBeNull();
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted']);
  });

  it('counts from the end of a retry backoff', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([node({ retry: { max_attempts: 2, backoff_seconds: 30 } })]));
    await h.fail('call', 'flaky');
    expect(await startBy(h, runId, 'call')).toEqual(new Date(h.clock.now().getTime() + 30_000 + 5_000));
  });

  it('does not count the time its run was paused', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([node({})]));
    const first = await startBy(h, runId, 'call');
    h.clock.advance(2_000);
    await h.coordinator.runs.pauseRun(h.tenantId, { runId });
    h.clock.advance(60_000);
    await fireAll(h);
    expect((await h.tasks(runId)).call).toMatchObject({ status: 'QUEUED', attempt: 0 });

    await h.coordinator.runs.resumeRun(h.tenantId, { runId });
    expect(await startBy(h, runId, 'call')).toEqual(new Date(first!.getTime() + 60_000));
    h.clock.advance(2_999);
    await fireAll(h);
    expect((await h.tasks(runId)).call).toMatchObject({ attempt: 0 });
    h.clock.advance(1);
    await fireAll(h);
    expect((await h.run(runId)).status).toBe('FAILED');
  });
});

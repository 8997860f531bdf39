import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';
import { claimFirst, step, claimLast } from '../support/fenced-steps.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('a late duplicate report for a task of an ended DO_WHILE iteration', () => {
  it('is ignored and leaves the running iteration alone', async () => {
    const h = await coordinatorHarness(db.ds);
    const l: WorkflowNode = {
      node_id: 'l',
      type: 'DO_WHILE' as never,
      spec: { body: { nodes: [http('a')], edges: [] } as unknown as JsonValue, condition: '{{ tasks.l.iteration < 2 }}', max_iterations: 5 },
    };
    const { workflowId } = await h.publish(def([l]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const first = await claimFirst(h, runId);
    const took = (await step(h, first, { i: 0 })).taken ?? (await claimLast(h, runId, 'a'));
    const rows = async () =>
      (await db.owner.query(`SELECT id, status, loop_iteration, loop_archived, output FROM tasks WHERE run_id = $1 AND node_id = 'a' ORDER BY loop_iteration`, [
        runId,
      ])) as Array<{
        id: string;
        status: string;
        loop_iteration: number;
        loop_archived: boolean;
        output: unknown;
      }>;
    const before = await rows();
    expect(before.map((r) => [r.loop_iteration, r.status, r.loop_archived])).toEqual([
      [0, 'COMPLETED', true],
      [1, 'RUNNING', false],
    ]);
    // The same report again, and a failure of the same (archived) attempt.
    const again = await step(h, first, { i: 'late' });
    const failed = await h.coordinator.runs.reportFailed(h.tenantId, {
      runId,
      taskId: first.job.taskId,
      nodeId: 'a',
      attempt: first.job.attempt,
      leaseToken: first.leaseToken,
      error: 'late',
    });
    expect(again).toMatchObject({ ignored: 'stale or duplicate completion of a attempt 0' });
    expect(failed).toMatchObject({ ignored: 'stale or duplicate failure of a attempt 0' });
    // The history does not date the late reports to the running iteration.
    const late = (await h.events(runId)).filter((e: any) => e.ignored !== null && e.ignored !== undefined);
    expect(late.map((e: any) => e.payload?.loopIteration ?? null)).toEqual([null, null]);
    expect(await rows()).toEqual(before);
    expect((await h.run(runId)).status).toBe('RUNNING');
    // The run goes on from the running iteration.
    const t2 = (await step(h, took, { i: 1 })).taken ?? (await claimLast(h, runId, 'a'));
    await step(h, t2, { i: 2 });
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED', output: { l: { a: { i: 2 } } } });
  });
});

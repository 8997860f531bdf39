import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, fork } from '../support/builders.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/**
 * One event of a DO_WHILE whose body holds control nodes only: every iteration runs within it, up
 * to the bound of 10,000 body tasks an event (unbounded, 10 FORKs x 5000 iterations took one
 * start 87 s), and archiving each iteration reads the run's current tasks by node through the
 * partial (run, node) index, not every task of the run.
 */
describe('one event of a control-only DO_WHILE', () => {
  it('stops at 10,000 body tasks, failing the loop, and archives each iteration through the (run, node) index', async () => {
    const h = await coordinatorHarness(db.ds);
    const body = Array.from({ length: 10 }, (_, i) => fork(`f${i}`));
    const edges = body.slice(1).map((b, i) => edge(`f${i}`, b.node_id));
    const l: WorkflowNode = {
      node_id: 'l',
      type: 'DO_WHILE' as never,
      spec: { body: { nodes: body, edges } as unknown as JsonValue, condition: '{{true}}', max_iterations: 5000 },
    };
    const runId = await h.start(def([l]));
    const rows = await db.owner.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE loop_archived)::int AS archived FROM tasks WHERE run_id = $1`, [
      runId,
    ]);
    // 999 iterations of 10 body tasks, the last one's not archived, and the loop's own task.
    expect(rows[0]).toEqual({ n: 9991, archived: 9980 });
    const run = await h.run(runId);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(/^node l failed: iteration 999: 999 iterations ran within one step without waiting for any work/);
    const plan = await db.owner.query(
      `EXPLAIN (ANALYZE, BUFFERS) UPDATE tasks SET loop_archived = true WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($3::text[]) AND iteration IS NULL AND NOT loop_archived`,
      [h.tenantId, runId, body.map((b) => b.node_id)],
    );
    expect(plan.map((r: any) => r['QUERY PLAN']).join('\n')).toMatch(/using tasks_run_node on tasks/);
  }, 120_000);
});

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
 * What one event of a DO_WHILE whose body holds control nodes only costs: every iteration runs
 * within it (measured: 10 FORKs x 1000 iterations, 4 s and 10,001 rows; x 5000, 87 s).
 */
describe('attack: cost of one event of a control-only DO_WHILE', () => {
  for (const [n, max] of [[10, 1000]] as const) {
    it(`${n} FORKs x ${max} iterations`, async () => {
      const h = await coordinatorHarness(db.ds);
      const body = Array.from({ length: n }, (_, i) => fork(`f${i}`));
      const edges = body.slice(1).map((b, i) => edge(`f${i}`, b.node_id));
      const l: WorkflowNode = {
        node_id: 'l',
        type: 'DO_WHILE' as never,
        spec: { body: { nodes: body, edges } as unknown as JsonValue, condition: '{{true}}', max_iterations: max },
      };
      const t0 = Date.now();
      const runId = await h.start(def([l]));
      const ms = Date.now() - t0;
      const rows = await db.owner.query(`SELECT count(*)::int AS n FROM tasks WHERE run_id = $1`, [runId]);
      const ev = await db.owner.query(`SELECT max(length(actions::text))::int AS n FROM run_events WHERE run_id = $1`, [runId]);
      console.log(`${n}x${max}: start took ${ms} ms, ${rows[0].n} task rows, largest history actions ${ev[0].n} chars, run ${(await h.run(runId)).status}`);
      expect(rows[0].n).toBeGreaterThan(0);
      const plan = await db.owner.query(
        `EXPLAIN (ANALYZE, BUFFERS) UPDATE tasks SET loop_archived = true WHERE tenant_id = $1 AND run_id = $2 AND node_id = ANY($3::text[]) AND iteration IS NULL AND NOT loop_archived`,
        [h.tenantId, runId, body.map((b) => b.node_id)],
      );
      // The archive of an iteration reads the run's current tasks by node, not every task of the run.
      expect(plan.map((r: any) => r['QUERY PLAN']).join('\n')).toMatch(/using tasks_run_node on tasks/);
    }, 600_000);
  }
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * Every task of one run is found through an index, whatever the size of the table: the
 * coordinator reads them when it holds no snapshot of the run, CancelTasks and a run's `tasks`
 * in the API select them the same way. Asserted on PostgreSQL's plan, not on a time.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('the tasks of one run', () => {
  it('are read through an index when the table holds many runs', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    const { workflow_id: workflowId } = (await db.owner.query(`SELECT workflow_id FROM runs WHERE id = $1`, [runId]))[0] as { workflow_id: string };
    // 400 more runs of 25 tasks each (iterations and plain tasks), written as the owner.
    await db.owner.query(
      `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, event_seq, created_at, updated_at)
       SELECT $1, gen_random_uuid(), $2, 1, 'RUNNING', '{}', '{}', 0, now(), now() FROM generate_series(1, 400)`,
      [h.tenantId, workflowId],
    );
    await db.owner.query(
      `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, status, attempt, iteration, created_at, updated_at)
       SELECT r.tenant_id, gen_random_uuid(), r.id, 'n' || (g % 5), 'HTTP', 'COMPLETED', 0, CASE WHEN g < 5 THEN NULL ELSE g END, now(), now()
         FROM runs r CROSS JOIN generate_series(0, 24) g WHERE r.tenant_id = $1 AND r.id <> $2`,
      [h.tenantId, runId],
    );
    await db.owner.query(`ANALYZE tasks`);

    const plan = (await db.owner.query(`EXPLAIN SELECT t.id, t.status FROM tasks t WHERE t.tenant_id = $1 AND t.run_id = $2`, [h.tenantId, runId])) as {
      'QUERY PLAN': string;
    }[];
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');

    expect(text).not.toMatch(/Seq Scan on tasks/);
    expect(text).toMatch(/tasks_run\b/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http } from '../support/builders.js';
import { claimFirst, otherTenantWaits, step, until, claimLast } from '../support/fenced-steps.js';

/**
 * A fenced report that takes its next attempt and creates a task RUNNING that no worker holds
 * (a DO_WHILE's own task, a `for_each` aggregate) in the same statement: when fair order refuses
 * the take, only the taken attempt may become QUEUED.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const loop = (id: string, body: WorkflowNode[]): WorkflowNode => ({
  node_id: id,
  type: 'DO_WHILE' as never,
  spec: { body: { nodes: body, edges: [] } as unknown as JsonValue, condition: '{{ tasks.l.iteration < 1 }}', max_iterations: 3 },
});

describe('a fenced take refused by fair order next to a task RUNNING without a worker', () => {
  it('keeps a DO_WHILE task RUNNING, and the run ends', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([http('n1'), http('n2'), loop('l', [http('a')])], [edge('n1', 'n2'), edge('n2', 'l')]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;
    await otherTenantWaits(db);

    expect((await step(h, n2)).taken).toBeUndefined();
    const tasks = await h.tasks(runId);
    expect(tasks.l).toMatchObject({ status: 'RUNNING', leaseToken: null });
    expect(['QUEUED', 'PENDING']).toContain(tasks.a!.status);

    await db.owner.query(`DELETE FROM outbox WHERE tenant_id <> $1`, [h.tenantId]);
    // Iteration 0 ends with the condition true: the loop's row must still be RUNNING to move on.
    const next = (await step(h, await claimLast(h, runId, 'a'))).taken ?? (await claimLast(h, runId, 'a'));
    expect((await h.tasks(runId)).l).toMatchObject({ status: 'RUNNING', loopIteration: 1 });
    await step(h, next);
    await until(async () => (await h.run(runId)).status === 'SUCCEEDED', 'the run to end');
  });

  it('keeps a for_each aggregate RUNNING, and the run ends', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([http('n1'), http('n2'), http('e', undefined, { for_each: '{{[1]}}' })], [edge('n1', 'n2'), edge('n2', 'e')]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;
    await otherTenantWaits(db);

    expect((await step(h, n2)).taken).toBeUndefined();
    const rows = await db.owner.query(`SELECT iteration, status, lease_token FROM tasks WHERE run_id = $1 AND node_id = 'e' ORDER BY iteration NULLS FIRST`, [
      runId,
    ]);
    expect(rows[0]).toMatchObject({ iteration: null, status: 'RUNNING', lease_token: null });

    await db.owner.query(`DELETE FROM outbox WHERE tenant_id <> $1`, [h.tenantId]);
    await step(h, await claimLast(h, runId, 'e'));
    await until(async () => (await h.run(runId)).status === 'SUCCEEDED', 'the run to end');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, fork, http } from '../support/builders.js';
import { claimFirst, step } from '../support/fenced-steps.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const loop = (body: WorkflowNode[], condition: string): WorkflowNode => ({
  node_id: 'l',
  type: 'DO_WHILE' as never,
  spec: { body: { nodes: body, edges: [] } as unknown as JsonValue, condition, max_iterations: 3 },
});

/**
 * A DO_WHILE whose task is created and ends within the same event: its body ran inline (control
 * nodes only), or its first body node failed at once. The loop's row is inserted and then
 * completed or failed by the same event's writes.
 */
describe('a DO_WHILE that ends in the event that starts it', () => {
  it('completes at the run start (a body of a FORK, condition false)', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([loop([fork('f')], '{{ false }}')]));
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await h.statuses(runId)).toEqual({ l: 'COMPLETED', f: 'COMPLETED' });
  });

  it('fails at the run start when its first body node cannot resolve its input', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([loop([http('a', { url: 'http://x/{{ input.missing.deeper }}' })], '{{ false }}')]));
    expect(await h.run(runId)).toMatchObject({ status: 'FAILED' });
    expect(await h.statuses(runId)).toEqual({ l: 'FAILED', a: 'FAILED' });
  });

  it('completes in a worker report that reaches it (fenced step)', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([http('n1'), loop([fork('f')], '{{ false }}'), http('n2')], [edge('n1', 'l'), edge('l', 'n2')]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    await step(h, await claimFirst(h, runId));
    expect(await h.statuses(runId)).toEqual({ n1: 'COMPLETED', l: 'COMPLETED', f: 'COMPLETED', n2: expect.stringMatching(/^(PENDING|QUEUED|RUNNING)$/) });
  });

  it('iterates inline and completes in a worker report that reaches it', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([http('n1'), loop([fork('f')], '{{ tasks.l.iteration < 2 }}'), http('n2')], [edge('n1', 'l'), edge('l', 'n2')]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    await step(h, await claimFirst(h, runId));
    const rows = await db.owner.query(
      `SELECT node_id, status, loop_iteration, loop_archived FROM tasks WHERE run_id = $1 AND node_id IN ('l', 'f') ORDER BY node_id, loop_iteration`,
      [runId],
    );
    expect(rows.map((r: any) => [r.node_id, r.status, r.loop_iteration, r.loop_archived])).toEqual([
      ['f', 'COMPLETED', 0, true],
      ['f', 'COMPLETED', 1, true],
      ['f', 'COMPLETED', 2, false],
      ['l', 'COMPLETED', 2, false],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';
import { step, until, claimLast } from '../support/fenced-steps.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('on_exhausted: pause on a DO_WHILE body node, against PostgreSQL', () => {
  it('pauses with the loop RUNNING; the resume runs the node again and the loop goes on', async () => {
    const h = await coordinatorHarness(db.ds);
    const l: WorkflowNode = {
      node_id: 'l',
      type: 'DO_WHILE' as never,
      spec: {
        body: { nodes: [http('a', undefined, { on_exhausted: 'pause' })], edges: [] } as unknown as JsonValue,
        condition: '{{ tasks.l.iteration < 1 }}',
        max_iterations: 3,
      },
    };
    const { workflowId } = await h.publish(def([l]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const held = await claimLast(h, runId, 'a');
    await h.coordinator.runs.reportFailed(h.tenantId, {
      runId,
      taskId: held.job.taskId,
      nodeId: 'a',
      attempt: held.job.attempt,
      leaseToken: held.leaseToken,
      error: 'down',
    });
    expect((await h.run(runId)).pausedAt).not.toBeNull();
    expect(await h.statuses(runId)).toEqual({ l: 'RUNNING', a: 'FAILED' });

    await h.coordinator.runs.resumeRun(h.tenantId, { runId });
    const again = await claimLast(h, runId, 'a');
    expect(again.job.attempt).toBe(1);
    const next = (await step(h, again, { ok: 0 })).taken ?? (await claimLast(h, runId, 'a'));
    await step(h, next, { ok: 1 });
    await until(async () => (await h.run(runId)).status === 'SUCCEEDED', 'the run to end');
    expect((await h.run(runId)).output).toEqual({ l: { a: { ok: 1 } } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/**
 * A DO_WHILE's own task is RUNNING with no queue and is never dispatched: no worker may claim it
 * (a job naming it can only be forged), or its report would end the loop mid-iteration.
 */
describe('attack: a claim of a DO_WHILE task', () => {
  it('is refused, and a report for it changes nothing', async () => {
    const h = await coordinatorHarness(db.ds);
    const l: WorkflowNode = {
      node_id: 'l',
      type: 'DO_WHILE' as never,
      spec: { body: { nodes: [http('a')], edges: [] } as unknown as JsonValue, condition: '{{ true }}', max_iterations: 5 },
    };
    const { workflowId } = await h.publish(def([l]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const loopTask = (await h.tasks(runId)).l!;
    expect(loopTask).toMatchObject({ status: 'RUNNING', queue: null });
    const claim = await h.coordinator.leases.claim(h.tenantId, loopTask.id, 0);
    expect(claim).toBeNull();
    const forged = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: loopTask.id,
      nodeId: 'l',
      attempt: 0,
      leaseToken: claim?.leaseToken ?? '00000000-0000-4000-8000-000000000000',
      output: { forged: true } as never,
    });
    expect(forged).toMatchObject({ ignored: expect.any(String) });
    expect(await h.statuses(runId)).toEqual({ l: 'RUNNING', a: expect.stringMatching(/^(PENDING|QUEUED)$/) });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain, claimFirst, otherTenantWaits, step } from '../support/fenced-steps.js';
import { sentMessages } from '../support/pg-messages.js';

/**
 * A fenced report whose worker asks to take its next attempt while another tenant's attempt
 * waits ahead of it in fair order: `weft_may_take` refuses the take inside the fenced statement,
 * and the same statement writes the attempt QUEUED in the backlog instead, with no second round
 * trip through the locking path. Real PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('a fenced report whose take fair order refuses', () => {
  it('writes its next attempt QUEUED with its backlog row in the same statement, and takes nothing', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(4));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    // The first report locks the run (nothing cached yet) and takes n2.
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;
    expect(n2.job.nodeId).toBe('n2');

    // Another tenant's attempt waits, ready, on the same queue: a tie in fair order goes to it.
    await otherTenantWaits(db);

    const before = h.coordinator.committer.stats;
    let res: Awaited<ReturnType<typeof step>> | undefined;
    const sent = await sentMessages(async () => (res = await step(h, n2)));

    expect(res!.taken).toBeUndefined();
    const after = h.coordinator.committer.stats;
    expect(after.statements - before.statements).toBe(1);
    expect(after.failed).toBe(before.failed);
    // No transaction of the locking path: the fenced statement wrote the queued form itself.
    expect(sent.filter((s) => /^BEGIN\b/.test(s))).toEqual([]);
    const n3 = (await h.tasks(runId)).n3!;
    // QUEUED, or PENDING once the pass after the commit admitted it: never taken.
    expect(['QUEUED', 'PENDING']).toContain(n3.status);
    expect(n3.leaseToken).toBeNull();
    expect((await h.outbox(runId)).map((o) => o.task_id)).toContain(n3.id);
    // One form of the event: n3's row is sent once, and carries what a refusal changes in it.
    expect(taskRowsOf(sent, 'n3')).toBe(1);
    // n2's completion and the history were written once, as on the locking path.
    expect((await h.tasks(runId)).n2).toMatchObject({ status: 'COMPLETED', output: { step: 'n2' } });
    expect((await h.events(runId)).filter((e) => e.type === 'NodeCompleted' && e.nodeId === 'n2' && e.ignored === null)).toHaveLength(1);
  });
});

describe('a fenced report whose take fair order allows', () => {
  it('writes its next attempt RUNNING under the worker, with no backlog row, from one form of the event', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(4));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;

    let res: Awaited<ReturnType<typeof step>> | undefined;
    const sent = await sentMessages(async () => (res = await step(h, n2)));

    expect(res!.taken?.job.nodeId).toBe('n3');
    expect(sent.filter((s) => /^BEGIN\b/.test(s))).toEqual([]);
    const n3 = (await h.tasks(runId)).n3!;
    expect(n3).toMatchObject({ status: 'RUNNING', leaseToken: res!.taken!.leaseToken });
    expect((await h.outbox(runId)).map((o) => o.task_id)).not.toContain(n3.id);
    expect(taskRowsOf(sent, 'n3')).toBe(1);
  });
});

/** How many times the messages `sent` carry a new `tasks` row of node `nodeId` (its JSON, as the insert reads it). */
function taskRowsOf(sent: readonly string[], nodeId: string): number {
  return sent.join('\n').split(`"nodeId":"${nodeId}","nodeType"`).length - 1;
}

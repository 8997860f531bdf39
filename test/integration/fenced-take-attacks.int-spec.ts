import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TakenTask } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { code, def, edge, fork, http, join } from '../support/builders.js';
import { chain, claimFirst, otherTenantWaits, step, until, type Harness, claimLast } from '../support/fenced-steps.js';
import { sentMessages } from '../support/pg-messages.js';

/**
 * Attacks on a fenced report that takes its next attempt: a take refused by fair order (the
 * attempt must still be offered to the queue and the run reach its end), a FORK whose report
 * takes one of two new attempts, and a next node on another queue than the worker's. Real
 * PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Removes every other tenant's backlog rows (so fair order allows takes again). */
async function clearOthers(h: Harness): Promise<void> {
  await db.owner.query(`DELETE FROM outbox WHERE tenant_id <> $1`, [h.tenantId]);
}

describe('a fenced take refused by fair order', () => {
  it('leaves the attempt offered to its queue, and the run runs to its end', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(4));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;
    await otherTenantWaits(db);

    const before = h.coordinator.committer.stats;
    const res = await step(h, n2);
    expect(res.taken).toBeUndefined();
    expect(h.coordinator.committer.stats.statements - before.statements).toBe(1);
    // The refused attempt went to fair dispatch: a job was offered for it, once.
    const n3 = (await h.tasks(runId)).n3!;
    expect(h.dispatcher.jobs.filter((j) => j.taskId === n3.id)).toHaveLength(1);
    expect(h.dispatcher.last('n3')).toMatchObject({ runId, taskId: n3.id, attempt: 0, queue: 'http' });

    await clearOthers(h);
    let held: TakenTask | undefined = await claimLast(h, runId, 'n3');
    while (held) held = (await step(h, held)).taken;
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
    expect(await h.statuses(runId)).toEqual({ n1: 'COMPLETED', n2: 'COMPLETED', n3: 'COMPLETED', n4: 'COMPLETED' });
  });

  it('of one of two attempts a FORK creates: both are QUEUED, offered and backlogged, and the run ends', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(
      def(
        [http('n1'), http('n2'), fork('f'), http('a'), http('b'), join('j'), http('z')],
        [edge('n1', 'n2'), edge('n2', 'f'), edge('f', 'a'), edge('f', 'b'), edge('a', 'j'), edge('b', 'j'), edge('j', 'z')],
      ),
    );
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;
    await otherTenantWaits(db);

    const before = h.coordinator.committer.stats;
    const sent = await sentMessages(async () => expect((await step(h, n2)).taken).toBeUndefined());
    expect(h.coordinator.committer.stats.statements - before.statements).toBe(1);
    expect(sent.filter((s) => /^BEGIN\b/.test(s))).toEqual([]);
    const tasks = await h.tasks(runId);
    for (const id of ['a', 'b']) {
      expect(['QUEUED', 'PENDING']).toContain(tasks[id]!.status);
      expect(tasks[id]!.leaseToken).toBeNull();
      expect(h.dispatcher.jobs.filter((j) => j.taskId === tasks[id]!.id)).toHaveLength(1);
    }
    const backlog = (await h.outbox(runId)).map((o) => o.task_id);
    expect(backlog).toEqual(expect.arrayContaining([tasks.a!.id, tasks.b!.id]));

    await clearOthers(h);
    await step(h, await claimLast(h, runId, 'a'));
    let held: TakenTask | undefined = (await step(h, await claimLast(h, runId, 'b'))).taken;
    while (held) held = (await step(h, held)).taken;
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });
});

describe('a fenced take a FORK allows', () => {
  it('takes one of the two new attempts; the other is QUEUED with its backlog row and job', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(
      def(
        [http('n1'), http('n2'), fork('f'), http('a'), http('b'), join('j')],
        [edge('n1', 'n2'), edge('n2', 'f'), edge('f', 'a'), edge('f', 'b'), edge('a', 'j'), edge('b', 'j')],
      ),
    );
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;

    const before = h.coordinator.committer.stats;
    const res = await step(h, n2);
    expect(h.coordinator.committer.stats.statements - before.statements).toBe(1);
    const taken = res.taken!;
    expect(['a', 'b']).toContain(taken.job.nodeId);
    const other = taken.job.nodeId === 'a' ? 'b' : 'a';
    const tasks = await h.tasks(runId);
    expect(tasks[taken.job.nodeId]).toMatchObject({ status: 'RUNNING', leaseToken: taken.leaseToken });
    expect(['QUEUED', 'PENDING']).toContain(tasks[other]!.status);
    expect(tasks[other]!.leaseToken).toBeNull();
    const backlog = (await h.outbox(runId)).map((o) => o.task_id);
    expect(backlog).toContain(tasks[other]!.id);
    expect(backlog).not.toContain(tasks[taken.job.nodeId]!.id);
    expect(h.dispatcher.jobs.filter((j) => j.runId === runId && ['a', 'b'].includes(j.nodeId)).map((j) => j.nodeId)).toEqual([other]);

    await step(h, taken);
    await step(h, await claimLast(h, runId, other));
    await until(async () => (await h.run(runId)).status === 'SUCCEEDED', 'the run to end');
  });
});

describe('a fenced report whose next node is on another queue than the worker’s', () => {
  it('takes nothing: the attempt is QUEUED with its backlog row and offered to its own queue', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([http('n1'), http('n2'), code('c'), http('n4')], [edge('n1', 'n2'), edge('n2', 'c'), edge('c', 'n4')]));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const n2 = (await step(h, await claimFirst(h, runId))).taken!;

    const before = h.coordinator.committer.stats;
    const sent = await sentMessages(async () => expect((await step(h, n2)).taken).toBeUndefined());
    expect(h.coordinator.committer.stats.statements - before.statements).toBe(1);
    expect(sent.filter((s) => /^BEGIN\b/.test(s))).toEqual([]);
    const c = (await h.tasks(runId)).c!;
    expect(['QUEUED', 'PENDING']).toContain(c.status);
    expect(c.leaseToken).toBeNull();
    const job = h.dispatcher.last('c');
    expect(job).toMatchObject({ runId, taskId: c.id });
    expect(job.queue).not.toBe('http');

    // The code worker reports c and takes n4 from its own queue: nothing to take there.
    const held = await claimLast(h, runId, 'c');
    expect((await step(h, held)).taken).toBeUndefined();
    await step(h, await claimLast(h, runId, 'n4'));
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });
});

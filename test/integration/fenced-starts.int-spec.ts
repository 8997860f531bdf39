import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain, startRows, type Harness } from '../support/fenced-steps.js';
import { sentMessages } from '../support/pg-messages.js';

/**
 * A user's start decided from memory: once this process has started a workflow (and so knows its
 * version, definition and the database's clock), the next start of it is one statement through
 * the step committer, which checks the version itself. What it writes is what the locking path
 * writes; a version deprecated or a default moved since, and an idempotency key already used,
 * send the start to the locking path, which says what it says today. Real PostgreSQL, recording
 * queue, hand-moved clock.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const deprecate = (h: Harness, workflowId: string, version: number) => new WorkflowRepository(db.ds).setDeprecated(h.tenantId, workflowId, version, true);

describe('a start of a workflow this process started before', () => {
  it('is one message with no transaction of its own, and writes what the locking path writes', async () => {
    const fenced = await coordinatorHarness(db.ds);
    const locking = await coordinatorHarness(db.ds, { fencedSteps: false });
    const a = await fenced.publish(chain(3));
    const b = await locking.publish(chain(3));
    await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a.workflowId });
    await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b.workflowId });

    const input = { order: 7, note: 'ü' };
    let viaFence!: { runId: string; run?: unknown };
    const sent = await sentMessages(
      async () => (viaFence = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a.workflowId, input, priority: 2 })),
    );
    const viaLocks = await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b.workflowId, input, priority: 2 });

    // The start's own message, then the fair-dispatch pass its commit asks for.
    const writes = sent.filter((s) => !/weft_dispatch|FROM tasks WHERE/.test(s));
    expect(writes).toHaveLength(1);
    expect(writes[0]).not.toMatch(/^BEGIN\b/);
    expect(fenced.coordinator.committer.stats.statements).toBe(1);
    expect(await startRows(fenced, viaFence.runId)).toEqual(await startRows(locking, viaLocks.runId));
    expect((await startRows(fenced, viaFence.runId)).tasks).toEqual([expect.objectContaining({ nodeId: 'n1' })]);
    // Its answer is the row it wrote, as the locking path's is.
    expect(viaFence.run).toMatchObject({ id: viaFence.runId, status: 'RUNNING', eventSeq: 1, input, priority: 2 });
    // Its first task went to fair dispatch like any other.
    expect(fenced.dispatcher.last('n1').runId).toBe(viaFence.runId);
  });

  it('is refused as deprecated once its version was deprecated since, by the locking path, writing nothing', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId, version } = await h.publish(chain(2));
    await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const before = h.coordinator.committer.stats;
    await deprecate(h, workflowId, version);

    await expect(h.coordinator.runs.startRun(h.tenantId, { workflowId })).rejects.toThrow(
      `workflow ${workflowId} version ${version} (its latest version, the default) is deprecated`,
    );
    // The statement ran and wrote nothing; the locking path said why.
    expect(h.coordinator.committer.stats).toMatchObject({ statements: before.statements + 1, failed: 0 });
  });

  it('runs on the default version as it is now, when another was published since', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(2));
    await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const v2 = await h.publish(chain(3), workflowId);
    expect(v2.version).toBe(2);

    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    expect((await h.run(runId)).version).toBe(2);
    // And the start after it, decided from memory, too.
    const next = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    expect((await h.run(next.runId)).version).toBe(2);
    expect(h.coordinator.committer.stats.statements).toBe(2);
  });

  it('returns the run an idempotency key already names, writing nothing', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(2));
    await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const first = await h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'order-1' });
    expect(first.created).toBe(true);
    expect(h.coordinator.committer.stats.statements).toBe(1);

    const again = await h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'order-1', input: {} });
    expect(again).toEqual({ runId: first.runId, created: false });
    // The key reused with another input: the fenced statement writes nothing, the locking path refuses it.
    await expect(h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'order-1', input: { other: true } })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: `idempotency key "order-1" was used by run ${first.runId} with a different input`,
    });
    expect((await h.run(first.runId)).input).toEqual({});
    expect(await h.events(first.runId)).toHaveLength(1);
  });

  it('leaves a priority the row cannot hold to the locking path, so no message fails with it', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(2));
    await h.coordinator.runs.startRun(h.tenantId, { workflowId });

    await expect(h.coordinator.runs.startRun(h.tenantId, { workflowId, priority: 100_000 })).rejects.toThrow();
    expect(h.coordinator.committer.stats).toEqual({ commits: 0, statements: 0, failed: 0 });
    // The next start is decided from memory as before.
    await h.coordinator.runs.startRun(h.tenantId, { workflowId, priority: 5 });
    expect(h.coordinator.committer.stats).toEqual({ commits: 1, statements: 1, failed: 0 });
  });

  it("is never decided from another tenant's memory of the workflow", async () => {
    const a = await coordinatorHarness(db.ds);
    const { workflowId } = await a.publish(chain(2), 'shared-name');
    await a.coordinator.runs.startRun(a.tenantId, { workflowId });
    // Tenant b has no such workflow: the coordinator of a knows the name, but not for b.
    const b = { ...a, tenantId: (await coordinatorHarness(db.ds)).tenantId };
    await expect(a.coordinator.runs.startRun(b.tenantId, { workflowId })).rejects.toThrow('workflow shared-name not found');
    expect(a.coordinator.committer.stats.statements).toBe(0);
  });
});

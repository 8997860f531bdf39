import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, waitFor } from '../support/builders.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;
const pause = (h: Harness, runId: string) => h.coordinator.runs.pauseRun(h.tenantId, { runId });
const resume = (h: Harness, runId: string) => h.coordinator.runs.resumeRun(h.tenantId, { runId });
async function fireAll(h: Harness): Promise<void> {
  for (let i = 0; i < 50 && (await h.coordinator.timers.fireDue(100)) > 0; i++);
}
async function rows(runId: string) {
  return (await db.owner.query(
    `SELECT t.node_id, t.iteration, t.status, t.attempt, o.hold_reason, o.enqueued_at IS NOT NULL AS enq
       FROM tasks t LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id WHERE t.run_id = $1 ORDER BY t.node_id, t.iteration`,
    [runId],
  )) as Array<Record<string, unknown>>;
}
async function children(runId: string) {
  return (await db.owner.query(`SELECT id, status, parent_attempt, event_seq FROM runs WHERE parent_run_id = $1 ORDER BY created_at`, [runId])) as Array<{
    id: string;
    status: string;
    parent_attempt: number;
  }>;
}

describe('run control attacks (engine)', () => {
  it('for_each with max_concurrency: an iteration released while paused is not dispatched', async () => {
    const h = await coordinatorHarness(db.ds);
    const node = http('each', { url: 'http://example.test/{{ item }}' }, { for_each: '{{ input.items }}', max_concurrency: 1 } as Partial<WorkflowNode>);
    const runId = await h.start(def([node]), { input: { items: [1, 2, 3] } });
    const first = h.dispatcher.forNode('each').filter((j) => j.runId === runId);
    expect(first).toHaveLength(1);
    await pause(h, runId);
    await h.complete('each', {}, first[0]);
    const after = h.dispatcher.forNode('each').filter((j) => j.runId === runId);
    expect(after).toHaveLength(1);
    await resume(h, runId);
    expect(h.dispatcher.forNode('each').filter((j) => j.runId === runId)).toHaveLength(2);
  });

  it('paused parent: a failed child retried with backoff is not started early by the resume', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId: childId } = await h.publish(def([http('fetch')]));
    const root = await h.start(
      def([{ node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: childId }, retry: { max_attempts: 3, backoff_seconds: 60 } } as WorkflowNode]),
    );
    await fireAll(h);
    let kids = await children(root);
    expect(kids).toHaveLength(1);
    await pause(h, root);
    // the child (paused with its parent) — fail its fetch attempt: it is RUNNING? it was admitted before the pause
    await h.coordinator.runs.resumeRun(h.tenantId, { runId: kids[0]!.id }).catch(() => undefined);
    const job = h.dispatcher.forNode('fetch').find((j) => j.runId === kids[0]!.id)!;
    await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, job.runId);
    await h.fail('fetch', 'nope', job);
    await fireAll(h);
    kids = await children(root);
    await resume(h, root);
    await fireAll(h);
    kids = await children(root);
    expect(kids.filter((k) => k.parent_attempt === 1)).toHaveLength(0);
    h.clock.advance(60_000);
    await fireAll(h);
    expect((await children(root)).filter((k) => k.parent_attempt === 1)).toHaveLength(1);
  });

  it('pause racing a fenced completion never leaves the successor dispatched for a paused run', async () => {
    const h = await coordinatorHarness(db.ds);
    const bad: unknown[] = [];
    for (let i = 0; i < 30; i++) {
      const runId = await h.start(def([http('a'), http('b')], [edge('a', 'b')]));
      const job = h.dispatcher.forNode('a').find((j) => j.runId === runId)!;
      const claim = await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId);
      await Promise.allSettled([
        pause(h, runId),
        h.coordinator.runs.reportCompleted(h.tenantId, {
          runId,
          taskId: job.taskId,
          nodeId: 'a',
          attempt: 0,
          output: {},
          leaseToken: claim!.leaseToken,
          takeFrom: i % 2 ? job.queue : undefined,
        }),
      ]);
      const run = await h.run(runId);
      const r = await rows(runId);
      const b = r.find((x) => x.node_id === 'b');
      if (run.pausedAt && b && b.status === 'PENDING') {
        const bj = h.dispatcher.forNode('b').find((j) => j.runId === runId)!;
        const took = await h.coordinator.leases.claim(h.tenantId, bj.taskId, bj.attempt, bj.queue, runId);
        bad.push({ runId, r, workerClaimedWhilePaused: took !== null && !took.refused, took });
      }
      if (!run.pausedAt || (b && b.hold_reason !== 'RUN_PAUSED' && b.status !== 'RUNNING')) bad.push({ run: { s: run.status, p: run.pausedAt }, r });
    }
    expect(bad).toEqual([]);
  });

  it('pause, resume and cancel at once leave a consistent run', async () => {
    const h = await coordinatorHarness(db.ds);
    const bad: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const runId = await h.start(def([http('a'), http('b')], [edge('a', 'b')]));
      const res = await Promise.allSettled([pause(h, runId), resume(h, runId), h.coordinator.runs.cancelRun(h.tenantId, { runId }), pause(h, runId)]);
      const run = await h.run(runId);
      const r = await rows(runId);
      if (run.status !== 'CANCELLED' || run.pausedAt || r.some((x) => x.status !== 'CANCELLED'))
        bad.push({ s: run.status, p: run.pausedAt, r, res: res.map((x) => x.status) });
    }
    expect(bad).toEqual([]);
  });

  it('a paused run whose worker died: the lost-task sweep must not put the attempt back ready', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    const job = h.dispatcher.forNode('a').find((j) => j.runId === runId)!;
    expect(await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId)).not.toBeNull();
    await pause(h, runId);
    const before = h.dispatcher.forNode('a').filter((j) => j.runId === runId).length;
    h.clock.advance(10 * 60_000);
    expect(await h.coordinator.lostTasks.sweep(1000, { hasJob: async () => false })).toBeGreaterThanOrEqual(1);
    const run = await h.run(runId);
    const r = await rows(runId);
    const after = h.dispatcher.forNode('a').filter((j) => j.runId === runId).length;
    expect(run.pausedAt).not.toBeNull();
    expect(after).toBe(before);
    expect(r[0]).toMatchObject({ status: 'QUEUED', hold_reason: 'RUN_PAUSED' });
  });

  it('a paused run whose worker drains: the handed-back attempt is not claimed by another worker', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    const job = h.dispatcher.forNode('a').find((j) => j.runId === runId)!;
    const first = await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId);
    await pause(h, runId);
    const back = await h.coordinator.leases.release([{ tenantId: h.tenantId, taskId: job.taskId, attempt: job.attempt, leaseToken: first!.leaseToken }]);
    expect(back.size).toBe(1);
    const second = await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId);
    expect(second).toBeNull();
  });

  it('resuming a parent does not resume a child an operator (or its own exhausted node) paused', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId: childId } = await h.publish(def([http('charge', undefined, { on_exhausted: 'pause' } as Partial<WorkflowNode>)]));
    const root = await h.start(def([{ node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: childId } } as WorkflowNode]));
    await fireAll(h);
    const [kid] = await children(root);
    const job = h.dispatcher.forNode('charge').find((j) => j.runId === kid!.id)!;
    await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, job.runId);
    await h.fail('charge', 'card declined', job);
    const k1 = await h.run(kid!.id);
    expect(k1.pauseReason).toMatch(/exhausted/);
    await pause(h, root);
    await resume(h, root);
    const k2 = await h.run(kid!.id);
    // Nothing of the child was dispatched again.
    expect(
      h.dispatcher
        .forNode('charge')
        .filter((j) => j.runId === kid!.id)
        .map((j) => j.attempt),
    ).toEqual([0]);
    expect(k2.pausedAt).not.toBeNull();
  });

  it('two overlapping slices of one batch (a lease that ran out mid-slice)', async () => {
    const seen: string[] = [];
    const h = await coordinatorHarness(db.ds, { observer: { batchItem: (b: { outcome: string }) => seen.push(b.outcome) } as never });
    const ids: string[] = [];
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    for (let i = 0; i < 20; i++) ids.push((await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId);
    const { batch } = await h.coordinator.batches.create(h.tenantId, { action: 'PAUSE', filter: { workflowId }, filterJson: { workflowId } });
    const slice = (h.coordinator.batches as unknown as { slice(t: string, b: string): Promise<number> }).slice.bind(h.coordinator.batches);
    await Promise.all([slice(h.tenantId, batch.id), slice(h.tenantId, batch.id)]);
    const row = await h.coordinator.batches.stop(h.tenantId, batch.id);
    const items = (await db.owner.query(`SELECT outcome, error FROM run_batch_items WHERE batch_id = $1`, [batch.id])) as Array<{
      outcome: string;
      error: string;
    }>;
    const counts = items.reduce<Record<string, number>>((a, i) => ({ ...a, [i.outcome]: (a[i.outcome] ?? 0) + 1 }), {});
    const metric = seen.reduce<Record<string, number>>((a, o) => ({ ...a, [o]: (a[o] ?? 0) + 1 }), {});
    expect(row).toMatchObject({ applied: 20, skipped: 0, failed: 0 });
    expect(counts).toEqual({ APPLIED: 20 });
    expect(metric).toEqual({ APPLIED: 20 });
  });

  it('a paused run cancelled or timed out leaves no held backlog rows behind', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start({ ...def([http('a'), http('b')], [edge('a', 'b')]), timeout_seconds: 5 });
    const job = h.dispatcher.forNode('a').find((j) => j.runId === runId)!;
    await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId);
    await pause(h, runId);
    await h.complete('a', {}, job);
    h.clock.advance(5_000);
    await fireAll(h);
    for (let i = 0; i < 3; i++) {
      await h.coordinator.outbox.relay(100);
      await h.coordinator.outbox.upkeep();
    }
    const left = (await db.owner.query(`SELECT hold_reason, enqueued_at FROM outbox WHERE run_id = $1 AND enqueued_at IS NULL`, [runId])) as unknown[];
    expect(left).toEqual([]);
  });

  it('stopRunBatch during a slice: runs after the stop are left pending', async () => {
    let stopped: Promise<unknown> | undefined;
    let stoppedAt = -1;
    let n = 0;
    const holder: { h?: Harness; batchId?: string } = {};
    const h = await coordinatorHarness(db.ds, {
      observer: {
        batchItem: () => {
          n++;
          if (!stopped) stopped = holder.h!.coordinator.batches.stop(holder.h!.tenantId, holder.batchId!).then((b) => ((stoppedAt = n), b));
        },
      } as never,
    });
    holder.h = h;
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    for (let i = 0; i < 20; i++) await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const { batch } = await h.coordinator.batches.create(h.tenantId, { action: 'CANCEL', filter: { workflowId }, filterJson: { workflowId } });
    holder.batchId = batch.id;
    await h.coordinator.batches.processDue();
    await stopped;
    const row = (await h.coordinator.batches.stop(h.tenantId, batch.id))!;
    expect(row.applied).toBeLessThanOrEqual(stoppedAt + 1);
  });
  it('a deadline firing while pause and resume race ends the run cleanly', async () => {
    const h = await coordinatorHarness(db.ds);
    const bad: unknown[] = [];
    for (let i = 0; i < 8; i++) {
      const runId = await h.start({ ...def([http('a'), http('b')], [edge('a', 'b')]), timeout_seconds: 1 });
      h.clock.advance(1_000);
      await Promise.allSettled([fireAll(h), pause(h, runId), resume(h, runId), pause(h, runId)]);
      await fireAll(h);
      const run = await h.run(runId);
      const r = await rows(runId);
      if (run.status !== 'TIMED_OUT' || run.pausedAt || r.some((x) => x.status !== 'CANCELLED')) bad.push({ s: run.status, p: run.pausedAt, r });
    }
    expect(bad).toEqual([]);
  });

  it('schedule_to_start on for_each iterations counts from each release', async () => {
    const h = await coordinatorHarness(db.ds);
    const node = http('each', { url: 'http://example.test/{{ item }}' }, {
      for_each: '{{ input.items }}',
      max_concurrency: 1,
      schedule_to_start_seconds: 10,
    } as Partial<WorkflowNode>);
    const runId = await h.start(def([node]), { input: { items: [1, 2] } });
    const j0 = h.dispatcher.forNode('each').find((j) => j.runId === runId)!;
    await h.coordinator.leases.claim(h.tenantId, j0.taskId, j0.attempt, j0.queue, runId);
    h.clock.advance(60_000);
    await fireAll(h);
    await h.complete('each', {}, j0);
    h.clock.advance(9_000);
    await fireAll(h);
    expect((await rows(runId)).find((x) => x.iteration === 1)).toMatchObject({ status: 'PENDING', attempt: 0 });
    h.clock.advance(1_000);
    await fireAll(h);
    const it1 = (await rows(runId)).find((x) => x.iteration === 1)!;
    expect(it1.status === 'FAILED' || (await h.run(runId)).status === 'FAILED').toBe(true);
  });
});

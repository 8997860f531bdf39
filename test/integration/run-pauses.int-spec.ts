import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftError } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, wait, waitFor } from '../support/builders.js';

/**
 * Pausing and resuming runs: a pause holds dispatch, not time or state. Real PostgreSQL, a
 * recording queue (a job there is an attempt fair dispatch admitted), a hand-moved clock.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** The run as the API reports it: PAUSED for a RUNNING row with paused_at. */
async function shown(h: Harness, runId: string) {
  const r = await h.run(runId);
  return { status: (r.status === 'RUNNING' || r.status === 'QUEUED') && r.pausedAt ? 'PAUSED' : r.status, pauseReason: r.pauseReason, pausedAt: r.pausedAt };
}

/** The backlog row of node `nodeId` of run `runId`. */
async function backlog(h: Harness, runId: string, nodeId: string) {
  const task = (await h.tasks(runId))[nodeId]!;
  return (await h.outbox(runId)).find((o) => o.task_id === task.id);
}

/**
 * The attempts of node `nodeId` of run `runId` fair dispatch admitted, in order. (Every harness
 * shares the queues and the clock's epoch: a pass may admit another test's rows too.)
 */
const admitted = (h: Harness, runId: string, nodeId: string) =>
  h.dispatcher
    .forNode(nodeId)
    .filter((j) => j.runId === runId)
    .map((j) => j.attempt);

const pause = (h: Harness, runId: string, reason?: string) => h.coordinator.runs.pauseRun(h.tenantId, { runId, ...(reason ? { reason } : {}) });
const resume = (h: Harness, runId: string) => h.coordinator.runs.resumeRun(h.tenantId, { runId });

describe('a paused run', () => {
  it('lets a running attempt finish, holds its successor QUEUED, and dispatches it at the resume', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a'), http('b')], [edge('a', 'b')]));
    expect(admitted(h, runId, 'a')).toHaveLength(1);

    await pause(h, runId, 'deploy freeze');
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED', pauseReason: 'deploy freeze' });
    await h.complete('a', { ok: 1 });

    expect(await h.statuses(runId)).toEqual({ a: 'COMPLETED', b: 'QUEUED' });
    expect(admitted(h, runId, 'b')).toHaveLength(0);
    expect(await backlog(h, runId, 'b')).toMatchObject({ hold_reason: 'RUN_PAUSED', enqueued_at: null });
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED' });

    await resume(h, runId);
    expect(await shown(h, runId)).toEqual({ status: 'RUNNING', pauseReason: null, pausedAt: null });
    expect(admitted(h, runId, 'b')).toHaveLength(1);
    await h.complete('b');
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
    const types = (await h.events(runId)).map((e) => e.type);
    expect(types).toEqual(['RunStarted', 'RunPaused', 'NodeCompleted', 'RunResumed', 'NodeCompleted']);
  });

  it('takes back an attempt admitted but not claimed yet, and a worker cannot claim its old job', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    const job = h.dispatcher.last('a');
    expect((await h.tasks(runId)).a!.status).toBe('PENDING');

    await pause(h, runId);
    expect((await h.tasks(runId)).a!.status).toBe('QUEUED');
    expect(await backlog(h, runId, 'a')).toMatchObject({ hold_reason: 'RUN_PAUSED', enqueued_at: null });
    expect(await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId)).toBeNull();
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED', pauseReason: 'paused' });

    await resume(h, runId);
    expect(admitted(h, runId, 'a')).toHaveLength(2);
    expect((await h.tasks(runId)).a!.status).toBe('PENDING');
    await h.complete('a');
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });

  it('holds the attempt of a worker that died while its run was paused, instead of dispatching it again', async () => {
    const h = await coordinatorHarness(db.ds);
    const queue = `paused-${h.tenantId.slice(0, 8)}`;
    const runId = await h.start(def([http('a', undefined, { queue })]));
    const job = h.dispatcher.last('a');
    expect(await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId)).not.toBeNull();
    await pause(h, runId);
    expect((await h.tasks(runId)).a!.status).toBe('RUNNING');

    // The worker dies with the attempt: its lease runs out and Bull has no job for it.
    h.clock.advance(10 * 60_000);
    expect(await h.coordinator.lostTasks.sweep(1000, { hasJob: async (q: string) => q !== queue })).toBe(1);
    expect((await h.tasks(runId)).a!.status).toBe('QUEUED');
    expect(await backlog(h, runId, 'a')).toMatchObject({ hold_reason: 'RUN_PAUSED', enqueued_at: null });
    expect(admitted(h, runId, 'a')).toEqual([0]);

    await resume(h, runId);
    expect(admitted(h, runId, 'a')).toEqual([0, 0]);
  });

  it('takes back, held, the attempt a draining worker hands back while its run is paused', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    const job = h.dispatcher.last('a');
    const claim = (await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId))!;
    await pause(h, runId);

    const handedBack = await h.coordinator.leases.release([{ tenantId: h.tenantId, taskId: job.taskId, attempt: 0, leaseToken: claim.leaseToken }]);
    expect(handedBack.size).toBe(1);
    expect((await h.tasks(runId)).a!.status).toBe('QUEUED');
    expect(await backlog(h, runId, 'a')).toMatchObject({ hold_reason: 'RUN_PAUSED', enqueued_at: null });
    // The job still in its queue is an old one now: no worker may claim it.
    expect(await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId)).toBeNull();

    await resume(h, runId);
    expect(admitted(h, runId, 'a')).toEqual([0, 0]);
    expect((await h.tasks(runId)).a!.status).toBe('PENDING');
  });

  it('does not end while paused: the run whose last attempt finished ends at its resume', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    await pause(h, runId);
    // The attempt was taken back; a worker that had claimed it before the pause still reports.
    await h.complete('a', { done: true });
    expect(await h.statuses(runId)).toEqual({ a: 'COMPLETED' });
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED' });
    await resume(h, runId);
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });

  it('fires a WAIT at its original time while paused, and holds what follows it', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([wait('nap', 30), http('after')], [edge('nap', 'after')]));
    const wakeAt = (await h.tasks(runId)).nap!.wakeAt!;
    await pause(h, runId);
    expect((await h.tasks(runId)).nap!.wakeAt).toEqual(wakeAt);

    h.clock.advance(30_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(1);
    expect(await h.statuses(runId)).toEqual({ nap: 'COMPLETED', after: 'QUEUED' });
    expect(admitted(h, runId, 'after')).toHaveLength(0);

    await resume(h, runId);
    expect(admitted(h, runId, 'after')).toHaveLength(1);
  });

  it('keeps a retry backoff counting: resumed before it ends, the attempt waits for the rest of it', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a', undefined, { retry: { max_attempts: 3, backoff_seconds: 60 } })]));
    await h.fail('a', 'flaky');
    const due = (await backlog(h, runId, 'a'))!.not_before;
    expect(await backlog(h, runId, 'a')).toMatchObject({ hold_reason: 'BACKOFF', attempt: 1 });

    await pause(h, runId);
    expect(await backlog(h, runId, 'a')).toMatchObject({ hold_reason: 'RUN_PAUSED', not_before: due });

    h.clock.advance(20_000);
    await resume(h, runId);
    expect(await backlog(h, runId, 'a')).toMatchObject({ hold_reason: 'BACKOFF', held_until: due });
    expect(admitted(h, runId, 'a')).toHaveLength(1);
  });

  it('keeps a retry backoff counting: resumed after it ended, the attempt goes at once', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a', undefined, { retry: { max_attempts: 3, backoff_seconds: 60 } })]));
    await h.fail('a', 'flaky');
    await pause(h, runId);
    h.clock.advance(61_000);
    await resume(h, runId);
    expect(admitted(h, runId, 'a')).toEqual([0, 1]);
  });

  it('accepts a signal and delivers it, its successor held', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([waitFor('gate', 'go'), http('after')], [edge('gate', 'after')]));
    await pause(h, runId);
    expect(await h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go', payload: { ok: true } })).toEqual({ delivered: true });
    expect(await h.statuses(runId)).toEqual({ gate: 'COMPLETED', after: 'QUEUED' });
    expect(admitted(h, runId, 'after')).toHaveLength(0);
    await resume(h, runId);
    expect(admitted(h, runId, 'after')).toHaveLength(1);
  });

  it('is cancelled at once; a retry of it, and a pause of a finished run, are conflicts; repeats change nothing', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    await pause(h, runId, 'first');
    const seq = (await h.run(runId)).eventSeq;
    await pause(h, runId, 'second');
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED', pauseReason: 'first' });
    expect((await h.run(runId)).eventSeq).toBe(seq + 1);

    const retry = h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'a' });
    await expect(retry).rejects.toThrow(WeftError);
    await expect(retry).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/is PAUSED: resume it/) });

    await h.coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'enough' });
    expect(await shown(h, runId)).toMatchObject({ status: 'CANCELLED' });
    expect(await h.statuses(runId)).toEqual({ a: 'CANCELLED' });
    await expect(pause(h, runId)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/is CANCELLED: only an active run can be paused/) });
    await expect(resume(h, runId)).rejects.toMatchObject({ code: 'CONFLICT' });

    const other = await h.start(def([http('x')]));
    const before = (await h.run(other)).eventSeq;
    await resume(h, other);
    expect(await shown(h, other)).toMatchObject({ status: 'RUNNING' });
    expect((await h.run(other)).eventSeq).toBe(before + 1);
  });

  it('pauses a run QUEUED for its concurrency slot: no slot starts it while paused, and it waits again after the resume', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish({ ...def([waitFor('gate', 'go')]), concurrency: { limit: 1 } });
    const holder = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const queued = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const third = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    await pause(h, queued, 'not yet');
    expect(await shown(h, queued)).toMatchObject({ status: 'PAUSED', pauseReason: 'not yet' });

    // The slot frees: the next QUEUED run starts, not the paused one.
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: holder });
    expect((await h.run(third)).status).toBe('RUNNING');
    expect((await h.run(queued)).status).toBe('QUEUED');
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: third });
    await h.coordinator.outbox.relay(10);
    expect(await shown(h, queued)).toMatchObject({ status: 'PAUSED' });

    await resume(h, queued);
    expect(await shown(h, queued)).toMatchObject({ status: 'QUEUED', pausedAt: null });
    // The scheduler's pass over groups with a free slot starts it.
    await h.coordinator.outbox.relay(10);
    expect(await shown(h, queued)).toMatchObject({ status: 'RUNNING' });
    expect(await h.statuses(queued)).toEqual({ gate: 'WAITING' });
  });

  it('leaves a QUEUED run QUEUED when an event reaches it before its start (a signal is buffered)', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish({ ...def([waitFor('gate', 'go')]), concurrency: { limit: 1 } });
    await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const queued = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    expect(await h.coordinator.runs.sendSignal(h.tenantId, { runId: queued, name: 'go' })).toEqual({ delivered: false });
    expect((await h.run(queued)).status).toBe('QUEUED');
    expect(await h.signalCount(queued)).toBe(1);
  });

  it('refuses an unknown run and a foreign tenant', async () => {
    const h = await coordinatorHarness(db.ds);
    const other = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    await expect(other.coordinator.runs.pauseRun(other.tenantId, { runId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(pause(h, '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await shown(h, runId)).toMatchObject({ status: 'RUNNING' });
  });
});

/** The child runs of `runId`, oldest first. */
async function children(runId: string): Promise<Array<{ id: string; status: string; paused: boolean; seq: number }>> {
  return (await db.owner.query(
    `SELECT id, status, paused_at IS NOT NULL AS paused, event_seq AS seq FROM runs WHERE parent_run_id = $1 ORDER BY created_at, id`,
    [runId],
  )) as Array<{ id: string; status: string; paused: boolean; seq: number }>;
}

/** A parent that waits for signal `go`, then calls `childId` through SUBWORKFLOW. */
const parentOf = (childId: string) =>
  def([waitFor('gate', 'go'), { node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: childId } }], [edge('gate', 'call')]);

describe('a paused run with child runs', () => {
  it('pauses its running child with it, and resumes it with it', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId: childId } = await h.publish(def([waitFor('hold', 'more'), http('fetch')], [edge('hold', 'fetch')]));
    const root = await h.start(parentOf(childId));
    await h.coordinator.runs.sendSignal(h.tenantId, { runId: root, name: 'go' });
    const [kid] = await children(root);
    expect(kid).toMatchObject({ status: 'RUNNING', paused: false });

    await pause(h, root, 'audit');
    expect(await children(root)).toEqual([expect.objectContaining({ id: kid!.id, paused: true })]);
    expect(await shown(h, kid!.id)).toMatchObject({ status: 'PAUSED', pauseReason: `parent run ${root} paused` });
    // The child's own work is held too.
    await h.coordinator.runs.sendSignal(h.tenantId, { runId: kid!.id, name: 'more' });
    expect(admitted(h, kid!.id, 'fetch')).toEqual([]);

    await resume(h, root);
    expect(await shown(h, kid!.id)).toMatchObject({ status: 'RUNNING' });
    expect(admitted(h, kid!.id, 'fetch')).toEqual([0]);
    await h.complete(
      'fetch',
      {},
      h.dispatcher.forNode('fetch').find((j) => j.runId === kid!.id),
    );
    for (const deadline = Date.now() + 30_000; (await h.run(root)).status !== 'SUCCEEDED';) {
      if (Date.now() > deadline) throw new Error(`root is ${(await h.run(root)).status}`);
      await h.coordinator.timers.fireDue(100);
    }
  });

  it('starts no child while paused, and starts it after the resume', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId: childId } = await h.publish(def([http('fetch')]));
    const root = await h.start(parentOf(childId));
    await pause(h, root);
    await h.coordinator.runs.sendSignal(h.tenantId, { runId: root, name: 'go' });
    expect(await h.statuses(root)).toEqual({ gate: 'COMPLETED', call: 'WAITING' });
    expect(await children(root)).toEqual([]);

    await resume(h, root);
    const kids = await children(root);
    expect(kids).toEqual([expect.objectContaining({ status: 'RUNNING', paused: false })]);
    expect(kids[0]!.seq).toBeGreaterThan(0);
    expect(admitted(h, kids[0]!.id, 'fetch')).toEqual([0]);
  });
});

describe('on_exhausted: pause', () => {
  it('pauses the run when the last attempt fails, takes no error edge, and the resume grants max_attempts more', async () => {
    const h = await coordinatorHarness(db.ds);
    const nodes = [http('charge', undefined, { retry: { max_attempts: 2 }, on_exhausted: 'pause' }), http('refund'), http('ship')];
    const runId = await h.start(def(nodes, [{ from: 'charge', to: 'refund', on_error: true }, edge('charge', 'ship')]));
    await h.fail('charge', 'card declined');
    await h.fail('charge', 'card declined');

    expect(await h.statuses(runId)).toEqual({ charge: 'FAILED' });
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED', pauseReason: 'node charge exhausted its 2 attempts: card declined' });

    await resume(h, runId);
    expect(admitted(h, runId, 'charge')).toEqual([0, 1, 2]);
    expect(await h.statuses(runId)).toMatchObject({ charge: 'PENDING' });
    // Attempts go on from 2, and two more are granted: a failure of attempt 2 is retried.
    await h.fail('charge', 'still declined');
    expect(admitted(h, runId, 'charge')).toEqual([0, 1, 2, 3]);
    await h.fail('charge', 'still declined');
    expect(await shown(h, runId)).toMatchObject({ status: 'PAUSED', pauseReason: 'node charge exhausted its 4 attempts: still declined' });

    await resume(h, runId);
    await h.complete('charge', { paid: true });
    await h.complete('ship');
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
    expect(await h.statuses(runId)).toEqual({ charge: 'COMPLETED', refund: 'SKIPPED', ship: 'COMPLETED' });
  });
});

describe('on_exhausted: pause on a SUBWORKFLOW node', () => {
  it('pauses the parent when its last child failed, and the resume starts a new child', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId: childId } = await h.publish(def([http('charge')]));
    const root = await h.start(
      def([{ node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: childId }, on_exhausted: 'pause' }, http('after')], [edge('call', 'after')]),
    );
    const failChild = async () => {
      const [kid] = (await children(root)).filter((c) => c.status === 'RUNNING');
      await h.fail(
        'charge',
        'card declined',
        h.dispatcher.jobs.find((j) => j.runId === kid!.id && j.nodeId === 'charge'),
      );
      for (const deadline = Date.now() + 30_000; (await h.run(kid!.id)).status === 'RUNNING';) {
        if (Date.now() > deadline) throw new Error('the child never ended');
      }
      while ((await h.coordinator.timers.fireDue(100)) > 0);
    };
    await failChild();
    expect(await h.statuses(root)).toEqual({ call: 'FAILED' });
    expect(await shown(h, root)).toMatchObject({
      status: 'PAUSED',
      pauseReason: expect.stringMatching(/^node call exhausted its 1 attempt: child run \S+ failed/),
    });

    await resume(h, root);
    const kids = await children(root);
    expect(kids).toHaveLength(2);
    expect(kids[1]).toMatchObject({ status: 'RUNNING' });
    expect((await h.tasks(root)).call).toMatchObject({ status: 'WAITING', attempt: 1 });
    await h.complete(
      'charge',
      { ok: true },
      h.dispatcher.jobs.find((j) => j.runId === kids[1]!.id && j.nodeId === 'charge'),
    );
    while ((await h.coordinator.timers.fireDue(100)) > 0);
    expect(await h.statuses(root)).toMatchObject({ call: 'COMPLETED', after: 'PENDING' });
  });
});

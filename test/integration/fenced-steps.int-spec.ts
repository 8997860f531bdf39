import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import type { TakenTask } from '@weft/engine';
import { refusedTaskValues } from '../support/refused-values.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { RunCoordinator } from '@weft/engine/coordinator';
import { RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain, claimFirst, runChain, shape, step, until, type Harness } from '../support/fenced-steps.js';

/**
 * Fenced steps: a worker's report on a run whose previous event the same coordinator applied is
 * decided from memory and written by one fenced statement through the step committer, with
 * the reports queued meanwhile in one commit. Everything it writes must be what the locking path
 * writes; a fence that fails (a cancel, a lost lease) leaves the report to the locking path, which
 * records it as it always did. Real PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('a chain reported by a worker that takes its next attempt', () => {
  it('goes through the step committer after its first report, and writes what the locking path writes', async () => {
    const fenced = await coordinatorHarness(db.ds);
    const locking = await coordinatorHarness(db.ds, { fencedSteps: false });
    const a = await fenced.publish(chain(6));
    const b = await locking.publish(chain(6));

    const viaFence = await runChain(fenced, a.workflowId);
    const viaLocks = await runChain(locking, b.workflowId);

    // The first report reads the run's rows; the five after it are decided from memory.
    expect(fenced.coordinator.committer.stats.statements).toBe(5);
    expect(locking.coordinator.committer.stats.statements).toBe(0);
    expect((await fenced.run(viaFence)).status).toBe('SUCCEEDED');
    expect(await shape(fenced, viaFence)).toEqual(await shape(locking, viaLocks));
    const tasks = Object.values(await fenced.tasks(viaFence));
    expect(tasks.map((t) => [t.nodeId, t.status, t.output])).toEqual(
      Object.values(await locking.tasks(viaLocks)).map((t) => [t.nodeId, t.status, { step: t.nodeId }]),
    );
    expect(await fenced.outbox(viaFence)).toHaveLength(1); // the first task's, from the start
    expect(fenced.publisher.updates.filter((u) => u.runId === viaFence).map((u) => u.seq)).toEqual(
      locking.publisher.updates.filter((u) => u.runId === viaLocks).map((u) => u.seq),
    );
  });
});

describe("a worker process that did not start the run (the API's did)", () => {
  /** A coordinator of its own over the same database and tenant: the worker process's. */
  function workerOf(h: Harness): RunCoordinator {
    return new RunCoordinator(db.ds, new RecordingDispatcher(), new RecordingPublisher(), {
      now: h.clock.now,
      logger: h.logger,
      dispatchWindowFloor: 1_000_000,
    });
  }

  /** Starts a run of `workflowId` in `h`, then claims its first job in `worker` (telling the run when `withRun`) and reports every step there. */
  async function chainOnWorker(h: Harness, worker: RunCoordinator, workflowId: string, withRun: boolean): Promise<string> {
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const job = h.dispatcher.jobs.find((j) => j.runId === runId)!;
    const claim = await worker.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, withRun ? runId : undefined);
    let held: TakenTask | undefined = { job, leaseToken: claim!.leaseToken };
    while (held) {
      const { job: j, leaseToken }: TakenTask = held;
      held = (
        await worker.runs.reportCompleted(h.tenantId, {
          runId,
          taskId: j.taskId,
          nodeId: j.nodeId,
          attempt: j.attempt,
          leaseToken,
          output: { step: j.nodeId },
          takeFrom: j.queue,
        })
      ).taken;
    }
    return runId;
  }

  it('decides the first report from the state its claim read, when the claim names the run', async () => {
    const h = await coordinatorHarness(db.ds);
    const worker = workerOf(h);
    const { workflowId } = await h.publish(chain(4));
    // The worker has not seen the workflow yet: its first run reads the definition on the locking path.
    await chainOnWorker(h, worker, workflowId, true);
    const before = worker.committer.stats.statements;
    const named = await chainOnWorker(h, worker, workflowId, true);
    // All four reports went through the committer: the claim left the run's state in memory.
    expect(worker.committer.stats.statements - before).toBe(4);
    const unnamed = await chainOnWorker(h, worker, workflowId, false);
    // A claim that does not name the run reads nothing more: the first report locks the run.
    expect(worker.committer.stats.statements - before).toBe(4 + 3);
    expect((await h.run(named)).status).toBe('SUCCEEDED');
    expect(await shape(h, named)).toEqual(await shape(h, unnamed));
    expect(Object.values(await h.tasks(named)).map((t) => [t.nodeId, t.status, t.attempt, t.output])).toEqual(
      Object.values(await h.tasks(unnamed)).map((t) => [t.nodeId, t.status, t.attempt, t.output]),
    );
  });

  it('leaves a report to the locking path when another event moved the run after the claim', async () => {
    const h = await coordinatorHarness(db.ds);
    const worker = workerOf(h);
    const { workflowId } = await h.publish(chain(2));
    await chainOnWorker(h, worker, workflowId, true); // warms the worker's definition cache
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const job = h.dispatcher.jobs.find((j) => j.runId === runId)!;
    const claim = await worker.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue, runId);
    // The API cancels the run after the claim read its state: the run's seq moves on.
    await h.coordinator.runs.cancelRun(h.tenantId, { runId });
    const before = worker.committer.stats.statements;
    await worker.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: job.taskId,
      nodeId: job.nodeId,
      attempt: job.attempt,
      leaseToken: claim!.leaseToken,
      output: { step: job.nodeId },
      takeFrom: job.queue,
    });
    // The fenced statement found another seq and wrote nothing; the locking path recorded the report as it always did.
    expect(worker.committer.stats.statements).toBe(before + 1);
    expect((await h.run(runId)).status).toBe('CANCELLED');
    expect(Object.values(await h.tasks(runId)).map((t) => [t.nodeId, t.status, t.output])).toEqual([[job.nodeId, 'CANCELLED', null]]);
    expect((await shape(h, runId)).map((e) => [e.type, e.ignored])).toEqual([
      ['RunStarted', null],
      ['RunCancelled', null],
      ['NodeCompleted', `stale or duplicate completion of ${job.nodeId} attempt 0`],
    ]);
  });
});

describe('one committer message of eight reports, one of which the database refuses', () => {
  // Every check in JavaScript passes this output (a lone surrogate or a NUL would not: the
  // coordinator turns them into a NodeFailed before any write); a trigger plays the database
  // refusing it as data, as jsonb refuses what it cannot hold.
  const POISON = 'poison-22P05';
  /** An advisory lock the committer's first message waits for, so that the eight queue behind it. */
  const HOLD = 7_310_517_301;

  const refused = () => refusedTaskValues(db.owner, 'refuse_poison_output', 'output', POISON);
  beforeAll(async () => {
    await refused().install();
  });
  afterAll(async () => {
    await refused().remove();
  });

  /** Starts a run of `workflowId` and reports its first node (on the locking path); the attempt of n2 it took. */
  async function pastFirstReport(h: Harness, workflowId: string): Promise<TakenTask> {
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    return (await step(h, await claimFirst(h, runId))).taken!;
  }

  it('records the seven good reports once each and the bad one as the failure the locking path makes of it', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(3));
    const held = [];
    for (let i = 0; i < 8; i++) held.push(await pastFirstReport(h, workflowId));
    const committer = h.coordinator.committer;
    // The starts and first reports before the test went through it too (one process decides them all).
    const base = committer.stats;
    expect(base.failed).toBe(0);

    // The committer's first message waits for a lock this test holds; the eight reports queue
    // behind it and leave together, in the next message, once the lock is let go.
    const holder = new pg.Client({ connectionString: db.ownerUrl });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1::bigint)', [HOLD]);
    const submitted = jest.spyOn(committer, 'submit');
    const busy = committer.submit({ tenantId: h.tenantId, text: 'SELECT pg_advisory_xact_lock($1::bigint) AS held', params: [HOLD] });
    const bad = 5;
    const reports = held.map((t, i) => step(h, t, i === bad ? { step: t.job.nodeId, s: POISON } : undefined));
    await until(() => submitted.mock.calls.length === 9, 'the eight reports in the committer');
    await holder.query('SELECT pg_advisory_unlock($1::bigint)', [HOLD]);
    await holder.end();
    const results = await Promise.all(reports);
    await busy;
    submitted.mockRestore();

    // One message held the lock; the next, all eight reports, failed as a whole: nothing of it counted.
    expect(committer.stats).toEqual({ commits: base.commits + 1, statements: base.statements + 1, failed: 1 });
    expect(h.logger.warnings.filter((w) => /applying it as a failure/.test(w))).toHaveLength(1);
    const runIds = held.map((t) => t.job.runId);

    // What the locking path alone makes of the same reports.
    const ref = await coordinatorHarness(db.ds, { fencedSteps: false });
    const refWf = await ref.publish(chain(3));
    const refGood = await pastFirstReport(ref, refWf.workflowId);
    const refBad = await pastFirstReport(ref, refWf.workflowId);
    const refTaken = (await step(ref, refGood)).taken!;
    expect(await step(ref, refBad, { step: 'n2', s: POISON })).toEqual({});
    expect((await shape(ref, refBad.job.runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted', 'NodeFailed']);
    const refFailure = (await ref.tasks(refBad.job.runId)).n2!.error;
    expect(refFailure).toMatch(/^could not store the NodeCompleted of node n2: .*\(INVALID_DATA\)$/);

    expect(results[bad]).toEqual({});
    expect(await h.run(runIds[bad]!)).toMatchObject({ status: 'FAILED' });
    expect(await shape(h, runIds[bad]!)).toEqual(await shape(ref, refBad.job.runId));
    expect(await h.statuses(runIds[bad]!)).toEqual({ n1: 'COMPLETED', n2: 'FAILED' });
    expect((await h.tasks(runIds[bad]!)).n2).toMatchObject({ attempt: 0, output: null, error: refFailure });

    const good = runIds.filter((_, i) => i !== bad);
    const goodShape = await shape(ref, refGood.job.runId);
    expect(goodShape.map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted', 'NodeCompleted']);
    for (const [i, runId] of runIds.entries()) {
      if (i === bad) continue;
      expect(await shape(h, runId)).toEqual(goodShape);
      const tasks = await h.tasks(runId);
      expect(Object.keys(tasks)).toEqual(['n1', 'n2', 'n3']);
      expect(tasks.n2).toMatchObject({ status: 'COMPLETED', attempt: 0, output: { step: 'n2' } });
      expect(tasks.n3).toMatchObject({ status: 'RUNNING', attempt: 0, leaseToken: results[i]!.taken!.leaseToken });
      expect(results[i]!.taken!.job).toMatchObject({ runId, nodeId: 'n3', taskId: tasks.n3!.id });
    }

    // The committer goes on after the failed message (on a new connection): the seven end fenced.
    const ends = await Promise.all(good.map((runId) => step(h, results[runIds.indexOf(runId)]!.taken!)));
    expect(ends).toEqual(good.map(() => ({})));
    expect(committer.stats).toMatchObject({ statements: base.statements + 1 + 7, failed: 1 });
    expect((await step(ref, refTaken)).taken).toBeUndefined();
    const endShape = await shape(ref, refGood.job.runId);
    for (const runId of good) {
      expect((await h.run(runId)).status).toBe('SUCCEEDED');
      expect(await shape(h, runId)).toEqual(endShape);
    }
  });
});

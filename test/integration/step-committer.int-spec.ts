import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { TakenTask } from '@weft/engine';
import { AttemptLogRepository, attemptLogWrite, fencedWrite, HistoryRepository, StepCommitter, TaskWriteRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain, claimFirst, until, type Harness } from '../support/fenced-steps.js';

/**
 * The step committer with statements of several tenants: one message sets each tenant's
 * setting before its statements, so row-level security holds each statement to its own tenant.
 * A fenced write naming another tenant's run finds no row to fence on and writes nothing; a row
 * forced in with another tenant's id is refused, and fails its whole message. Statements here are
 * built as the fenced path builds them (the repositories' parts, `fencedWrite`).
 */

let db: TestDatabase;
let a: Harness;
let b: Harness;
let committer: StepCommitter;
/** An advisory lock the committer's first message waits for, so that what follows queues into one message. */
const HOLD = 7_310_517_302;
/** The one row of a fenced write whose fence held (its counts, checked in the statement, aside). */
const OK = expect.objectContaining({ ok: true });

beforeAll(async () => {
  db = await createTestDatabase();
  a = await coordinatorHarness(db.ds);
  b = await coordinatorHarness(db.ds);
  committer = new StepCommitter(db.ds);
});
afterAll(async () => {
  await db?.drop();
});

/** A run of `h`'s tenant with its first task RUNNING under a worker's lease. */
async function running(h: Harness): Promise<TakenTask> {
  const { workflowId } = await h.publish(chain(2));
  const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
  return claimFirst(h, runId);
}

/**
 * The fenced completion of `held`, as tenant `tenantId` would write it: the task COMPLETED and the
 * history row at the run's next seq, fenced on the run's current event_seq and the worker's lease.
 * `extra` parts go in the same statement.
 */
async function completion(h: Harness, held: TakenTask, tenantId = h.tenantId, extra: ReturnType<HistoryRepository['parts']> = []) {
  const { job, leaseToken } = held;
  const seq = (await h.run(job.runId)).eventSeq;
  const now = new Date();
  const parts = [
    new TaskWriteRepository(db.ds.manager).completePart(tenantId, job.runId, job.taskId, job.attempt, { by: 'committer' }, now),
    ...new HistoryRepository(db.ds.manager).parts(tenantId, job.runId, {
      seq: seq + 1,
      type: 'NodeCompleted',
      payload: {},
      nodeId: job.nodeId,
      attempt: job.attempt,
      at: now,
      actions: [],
      patch: {},
    }),
    ...extra,
  ];
  return fencedWrite(tenantId, job.runId, { seq, taskId: job.taskId, attempt: job.attempt, leaseToken }, parts)!;
}

/** What a run's rows say: its event_seq, history length and task statuses (read as its tenant). */
async function state(h: Harness, runId: string) {
  return { eventSeq: (await h.run(runId)).eventSeq, events: (await h.events(runId)).length, tasks: await h.statuses(runId) };
}

/**
 * Submits `items` in one message: a first message waits for a lock this test holds, and `items`
 * queue behind it until it is let go. Resolves each item's outcome (its rows, or its error).
 */
async function oneMessage(items: Array<{ tenantId: string; text: string; params: unknown[] }>) {
  const holder = new pg.Client({ connectionString: db.ownerUrl });
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1::bigint)', [HOLD]);
  try {
    const busy = committer.submit({ tenantId: a.tenantId, text: 'SELECT pg_advisory_xact_lock($1::bigint) AS held', params: [HOLD] });
    const outcomes = items.map((item) =>
      committer.submit(item).then(
        (rows) => ({ rows }),
        (error: unknown) => ({ error }),
      ),
    );
    // The first message is in flight once the server shows it waiting for the lock.
    await until(
      async () => (await holder.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount! > 0,
      'the first message waiting',
    );
    await holder.query('SELECT pg_advisory_unlock($1::bigint)', [HOLD]);
    await busy;
    return await Promise.all(outcomes);
  } finally {
    await holder.end();
  }
}

describe('one message with statements of two tenants', () => {
  it("commits each tenant's fenced write under its own tenant", async () => {
    const heldA = await running(a);
    const heldB = await running(b);
    const before = committer.stats;
    const outcomes = await oneMessage(
      [await completion(a, heldA), await completion(b, heldB)].map((s, i) => ({ tenantId: i === 0 ? a.tenantId : b.tenantId, ...s })),
    );
    expect(outcomes).toEqual([{ rows: [OK] }, { rows: [OK] }]);
    // The lock's message, then one message with both statements.
    expect(committer.stats).toEqual({ commits: before.commits + 2, statements: before.statements + 3, failed: before.failed });
    expect(await state(a, heldA.job.runId)).toEqual({ eventSeq: 2, events: 2, tasks: { n1: 'COMPLETED' } });
    expect(await state(b, heldB.job.runId)).toEqual({ eventSeq: 2, events: 2, tasks: { n1: 'COMPLETED' } });
    expect((await a.tasks(heldA.job.runId)).n1!.output).toEqual({ by: 'committer' });
  });
});

describe("a statement touching another tenant's run", () => {
  it("finds nothing to fence on under the other tenant's setting, and writes nothing", async () => {
    const heldB = await running(b);
    const runB = heldB.job.runId;
    const unchanged = await state(b, runB);
    // B's own statement, every fence value right, sent as A's; and the same naming A as the tenant.
    const asB = await completion(b, heldB);
    const asA = await completion(b, heldB, a.tenantId);
    const outcomes = await oneMessage([
      { tenantId: a.tenantId, ...asB },
      { tenantId: a.tenantId, ...asA },
    ]);
    expect(outcomes).toEqual([{ rows: [{ ok: false, took: false, w0: null }] }, { rows: [{ ok: false, took: false, w0: null }] }]);
    expect(await state(b, runB)).toEqual(unchanged);
    const [rows] = await db.owner.query(`SELECT count(*)::int AS n FROM run_history WHERE run_id = $1`, [runB]);
    expect(rows.n).toBe(unchanged.events);

    // The same statement under B's own setting passes its fence: only the tenant setting stopped it.
    expect(await committer.submit({ tenantId: b.tenantId, ...asB })).toEqual([OK]);
    expect(await state(b, runB)).toEqual({ eventSeq: unchanged.eventSeq + 1, events: unchanged.events + 1, tasks: { n1: 'COMPLETED' } });
  });

  it("refuses a row forced in with the other tenant's id, and commits nothing of its message", async () => {
    const heldA = await running(a);
    const otherA = await running(a);
    const heldB = await running(b);
    const runB = heldB.job.runId;
    const before = { a: await state(a, heldA.job.runId), otherA: await state(a, otherA.job.runId), b: await state(b, runB) };
    // A's fence holds (A's own run and lease), so the gated parts write: one of them is a history
    // row of B's run with B's tenant id, under A's setting.
    const forgedRow = new HistoryRepository(db.ds.manager).parts(b.tenantId, runB, {
      seq: before.b.eventSeq + 1,
      type: 'NodeCompleted',
      payload: {},
      nodeId: 'n1',
      attempt: 0,
      at: new Date(),
      actions: [],
      patch: {},
    });
    const forged = await completion(a, heldA, a.tenantId, forgedRow.slice(0, 1));
    const stats = committer.stats;
    const outcomes = await oneMessage([
      { tenantId: a.tenantId, ...(await completion(a, otherA)) },
      { tenantId: a.tenantId, ...forged },
      { tenantId: b.tenantId, ...(await completion(b, heldB)) },
    ]);
    for (const o of outcomes) expect(o).toMatchObject({ error: { code: '42501', message: expect.stringMatching(/row-level security/) } });
    expect(committer.stats).toEqual({ commits: stats.commits + 1, statements: stats.statements + 1, failed: stats.failed + 1 });
    expect({ a: await state(a, heldA.job.runId), otherA: await state(a, otherA.job.runId), b: await state(b, runB) }).toEqual(before);
    const [rows] = await db.owner.query(`SELECT count(*)::int AS n FROM run_history WHERE run_id = $1`, [runB]);
    expect(rows.n).toBe(before.b.events);

    // The committer goes on, on a new connection: the good statements alone commit.
    expect(await committer.submit({ tenantId: a.tenantId, ...(await completion(a, otherA)) })).toEqual([OK]);
    expect(await committer.submit({ tenantId: b.tenantId, ...(await completion(b, heldB)) })).toEqual([OK]);
  });

  it('shares pooled connections with statements of the same text run alone', async () => {
    // One connection: what the committer prepared on it is there when a statement runs alone.
    const one = await createTestDatabase({ poolSize: 1 });
    try {
      const h = await coordinatorHarness(one.ds);
      const { workflowId } = await h.publish(chain(2));
      const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
      const held = await claimFirst(h, runId);
      const own = new StepCommitter(one.ds);
      const logs = new AttemptLogRepository(one.ds);
      const record = (text: string) => ({
        taskId: held.job.taskId,
        attempt: held.job.attempt,
        leaseToken: held.leaseToken,
        startedAt: new Date(),
        finishedAt: new Date(),
        error: null,
        logs: text,
      });
      // The same text through the committer, alone (as a report whose committed message failed
      // writes its logs), and through the committer again.
      await own.submit({ tenantId: h.tenantId, ...attemptLogWrite(h.tenantId, record('first\n')) });
      expect(await logs.write(h.tenantId, record('second\n'))).toBe(true);
      await own.submit({ tenantId: h.tenantId, ...attemptLogWrite(h.tenantId, record('third\n')) });
      expect((await logs.ofTasks(h.tenantId, [held.job.taskId])).map((r) => r.logs)).toEqual(['third\n']);
    } finally {
      await one.drop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TakenTask } from '@weft/engine';
import { RunRepository, sql, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http } from '../support/builders.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain, claimFirst, step, type Harness } from '../support/fenced-steps.js';

/**
 * A completed task recorded once: a NodeCompleted written through the step committer keeps its
 * event on the task's row (its seq and its actions), and the history (`run_history`) derives the
 * entry from the row instead of a `run_events` row that would repeat the task. Readers must see
 * the history the locking path stores, values and sizes included, and a retry that deletes the
 * task rows must not lose an entry. Real PostgreSQL, recording queue.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `workflowId` to its end in `h`, each report taking the next attempt; the run id. */
async function runThrough(h: Harness, workflowId: string): Promise<string> {
  const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
  let held: TakenTask | undefined = await claimFirst(h, runId);
  while (held) held = (await step(h, held)).taken;
  return runId;
}

/** The run's history as the API reads it, with task ids replaced by their node ids (they differ between runs). */
async function history(h: Harness, runId: string) {
  const events = await h.events(runId);
  const nodeOf = new Map(Object.values(await h.tasks(runId)).map((t) => [t.id, t.nodeId]));
  const named = (v: unknown): unknown => JSON.parse(JSON.stringify(v), (k, x) => (k === 'taskId' && nodeOf.has(x) ? `task of ${nodeOf.get(x)}` : x));
  return events
    .filter((e) => e.type !== 'RunStarted')
    .map((e) => ({
      seq: e.seq,
      type: e.type,
      nodeId: e.nodeId,
      attempt: e.attempt,
      payload: named(e.payload),
      actions: named(e.actions),
      ignored: e.ignored,
      error: e.error,
    }));
}

/** The stored `run_events` rows of a run by type, read as the owner. */
async function storedTypes(runId: string): Promise<string[]> {
  const rows: { type: string }[] = await db.owner.query(`SELECT type FROM run_events WHERE run_id = $1 ORDER BY seq`, [runId]);
  return rows.map((r) => r.type);
}

describe('a completion written through the step committer', () => {
  it('keeps its event on the task row, and the history reads what the locking path stores', async () => {
    const fenced = await coordinatorHarness(db.ds);
    const locking = await coordinatorHarness(db.ds, { fencedSteps: false });
    const viaFence = await runThrough(fenced, (await fenced.publish(chain(4))).workflowId);
    const viaLocks = await runThrough(locking, (await locking.publish(chain(4))).workflowId);

    expect(fenced.coordinator.committer.stats.statements).toBe(3);
    // The first report took the locking path and stored its row; the three after it are derived.
    expect(await storedTypes(viaFence)).toEqual(['RunStarted', 'NodeCompleted']);
    expect(await storedTypes(viaLocks)).toEqual(['RunStarted', 'NodeCompleted', 'NodeCompleted', 'NodeCompleted', 'NodeCompleted']);
    const derived = await history(fenced, viaFence);
    expect(derived).toEqual(await history(locking, viaLocks));
    expect(derived.map((e) => e.payload)).toEqual(
      ['n1', 'n2', 'n3', 'n4'].map((n) => ({ taskId: `task of ${n}`, nodeId: n, attempt: 0, output: { step: n } })),
    );

    // An entry's time is its completion's, and the sizes the API charges before reading are the values' own.
    const tasks = await fenced.tasks(viaFence);
    const events = await fenced.events(viaFence);
    for (const n of ['n2', 'n3', 'n4']) expect(events.find((e) => e.nodeId === n)!.at).toEqual(tasks[n]!.finishedAt);
    const sizes: { seq: number; payload_bytes: number; payload_text: number; actions_bytes: number; actions_text: number }[] = await db.owner.query(
      `SELECT seq, payload_bytes, octet_length(payload::text) AS payload_text, actions_bytes, octet_length(actions::text) AS actions_text
         FROM run_history WHERE run_id = $1 ORDER BY seq`,
      [viaFence],
    );
    expect(sizes).toHaveLength(5);
    for (const r of sizes) expect([r.seq, r.payload_bytes, r.actions_bytes]).toEqual([r.seq, r.payload_text, r.actions_text]);
    const page = await new RunRepository(db.ds).eventPage(fenced.tenantId, viaFence, 10, 2, ['payload', 'actions']);
    expect(page.map((e) => [e.seq, e.type, e.jsonBytes.payload, e.jsonBytes.actions])).toEqual(
      sizes.slice(2).map((r) => [r.seq, 'NodeCompleted', r.payload_text, r.actions_text]),
    );
    const values = await new RunRepository(db.ds).eventJson(fenced.tenantId, [{ runId: viaFence, seq: 4 }], ['payload']);
    expect(values.get(`${viaFence}:4`)).toEqual({ payload: { taskId: tasks.n3!.id, nodeId: 'n3', attempt: 0, output: { step: 'n3' } } });

    // Row-level security holds through the view: another tenant reads none of the entries, derived or stored.
    const other = await createTenant(db.ds, 'derived-other');
    const seen = await withTenant(db.ds, other.tenantId, (m) =>
      sql<{ n: number }>(m, `SELECT count(*)::int AS n FROM run_history WHERE run_id = $1`, [viaFence]),
    );
    expect(seen.rows[0]!.n).toBe(0);
    expect(await new RunRepository(db.ds).eventPage(other.tenantId, viaFence)).toEqual([]);
  });

  it("stores the row as before when the history records the event otherwise (a sensitive node's output)", async () => {
    const h = await coordinatorHarness(db.ds);
    const wf = def([http('n1'), http('n2', { url: 'http://example.test/n2' }, { sensitive: true }), http('n3')], [edge('n1', 'n2'), edge('n2', 'n3')]);
    const runId = await runThrough(h, (await h.publish(wf)).workflowId);
    expect(h.coordinator.committer.stats.statements).toBe(2);
    expect(await storedTypes(runId)).toEqual(['RunStarted', 'NodeCompleted', 'NodeCompleted']);
    const events = await history(h, runId);
    expect(events.find((e) => e.nodeId === 'n2')!.payload).toMatchObject({ nodeId: 'n2', output: expect.stringMatching(/redacted/i) });
    expect(events.find((e) => e.nodeId === 'n3')!.payload).toMatchObject({ output: { step: 'n3' } });
  });
});

describe('a keyed read of the history', () => {
  it("probes the run's entries by index, never the tenant's tasks", async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await runThrough(h, (await h.publish(chain(3))).workflowId);
    // The API's read of one entry's values (RunRepository.eventJson), planned as it would be on
    // large tables: a plan that cannot take the run and seq to the task rows must scan them all.
    const plan = await withTenant(db.ds, h.tenantId, async (m) => {
      await m.query(`SET LOCAL enable_seqscan = off`);
      const rows: { 'QUERY PLAN': string }[] = await m.query(
        `EXPLAIN SELECT e.run_id, e.seq, e.payload FROM run_history e JOIN unnest($2::uuid[], $3::int[]) AS k(run_id, seq)
            ON e.run_id = k.run_id AND e.seq = k.seq WHERE e.tenant_id = $1`,
        [h.tenantId, [runId], [3]],
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    // The task rows are a branch of the history's UNION ALL itself (a branch behind a "Subquery
    // Scan" is one PostgreSQL could not flatten, and gets none of the join's keys), read by the
    // index of completed events.
    expect(plan).toMatch(/Index Scan using tasks_completed_events on tasks/);
    expect(plan).not.toMatch(/Subquery Scan|Seq Scan on tasks/);
    const values = await new RunRepository(db.ds).eventJson(h.tenantId, [{ runId, seq: 3 }], ['payload']);
    expect(values.get(`${runId}:3`)?.payload).toMatchObject({ nodeId: 'n2', output: { step: 'n2' } });
  });
});

describe('a retry from a node', () => {
  it('keeps the derived entries of the tasks it deletes, as stored rows', async () => {
    const h = await coordinatorHarness(db.ds);
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId: (await h.publish(chain(4))).workflowId });
    let held: TakenTask | undefined = await claimFirst(h, runId);
    for (let i = 0; i < 3; i++) held = (await step(h, held!)).taken;
    // n4 fails for good: the run fails, with n2 and n3 derived from their rows.
    const { job, leaseToken } = held!;
    await h.coordinator.runs.reportFailed(h.tenantId, {
      runId,
      taskId: job.taskId,
      nodeId: job.nodeId,
      attempt: job.attempt,
      error: 'bad spec',
      retryable: false,
      leaseToken,
    });
    expect((await h.run(runId)).status).toBe('FAILED');
    const before = await h.events(runId);
    expect(await storedTypes(runId)).toEqual(['RunStarted', 'NodeCompleted', 'NodeFailed']);
    const oldN2 = (await h.tasks(runId)).n2!.id;

    await h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'n2' });

    expect((await h.tasks(runId)).n2!.id).not.toBe(oldN2);
    // Every entry is still there and the same (the deleted tasks' ids included); the retry follows them.
    const after = await h.events(runId);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(before.find((e) => e.nodeId === 'n2')!.payload).toEqual({ taskId: oldN2, nodeId: 'n2', attempt: 0, output: { step: 'n2' } });
    expect(after.map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted', 'NodeCompleted', 'NodeCompleted', 'NodeFailed', 'RunRetried']);
    expect(await storedTypes(runId)).toEqual(['RunStarted', 'NodeCompleted', 'NodeCompleted', 'NodeCompleted', 'NodeFailed', 'RunRetried']);
  });
});

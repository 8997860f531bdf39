import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftError, type TakenTask } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { MemoryLogger, RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { chain, claimFirst, step, type Harness } from '../support/fenced-steps.js';

/**
 * Cancels racing fenced steps: a worker's coordinator advances many chains through reports
 * decided from memory and written through its step committer, while another coordinator (another
 * process: its own snapshot cache, its own pool connections) cancels each run at a random moment.
 * A cancel locks the run and bumps its event_seq, so no fenced write decided before it may land
 * after it: every report made after the cancel is recorded as ignored, and no task completes
 * after the run was cancelled. Real PostgreSQL and the database's clock (no test clock), so the
 * times written by both paths can be compared.
 */

const RUNS = 1_000;
const NODES = 4;
const LANES = 32;
/** The seed of the moments (printed with any failure, so a failing interleaving can be replayed). */
const SEED = Number(process.env.WEFT_RACE_SEED ?? Date.now() % 1_000_000);

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 24 });
});
afterAll(async () => {
  await db?.drop();
});

/** A small deterministic generator (mulberry32): floats in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lets `n` turns of the event loop go by (another lane's I/O, the committer's next message). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

type Report = { nodeId: string; attempt: number; ignored?: string };

/** What one run went through, as its worker and its canceller saw it. */
interface Life {
  runId: string;
  /** The report the cancel raced (1-based); past the chain's length, the cancel came after its end. */
  cancelAt: number;
  /** The cancel's outcome: done, or the code of its refusal. */
  cancel?: 'done' | string;
  /** Reports made before the cancel was sent, or racing it. */
  before: Report[];
  /** Reports made once the cancel had returned. */
  after: Report[];
}

/** Runs one life: reports `NODES` nodes, the cancel sent with report `cancelAt`, one report after it. */
async function live(h: Harness, canceller: RunCoordinator, workflowId: string, next: () => number): Promise<Life> {
  const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
  const life: Life = { runId, cancelAt: 1 + Math.floor(next() * (NODES + 1)), before: [], after: [] };
  const cancel = async () => {
    try {
      await canceller.runs.cancelRun(h.tenantId, { runId });
      life.cancel = 'done';
    } catch (err) {
      life.cancel = err instanceof WeftError ? err.code : String(err);
    }
  };
  const report = async (held: TakenTask, into: Report[]) => {
    const r = await step(h, held);
    into.push({ nodeId: held.job.nodeId, attempt: held.job.attempt, ...(r.ignored === undefined ? {} : { ignored: r.ignored }) });
    return r;
  };
  let held: TakenTask | undefined = await claimFirst(h, runId);
  for (let i = 1; held; i++) {
    if (i !== life.cancelAt) {
      held = (await report(held, life.before)).taken;
      continue;
    }
    const reportWait = Math.floor(next() * 20);
    const cancelWait = Math.floor(next() * 20);
    const [r] = await Promise.all([turns(reportWait).then(() => report(held!, life.before)), turns(cancelWait).then(cancel)]);
    // Once the cancel returned, the worker reports what it holds: the attempt its report took,
    // else (its report was ignored) the same attempt again.
    const after = r.ignored === undefined ? r.taken : held;
    if (after) await report(after, life.after);
    return life;
  }
  await cancel();
  return life;
}

/** `rows` by their run. */
function byRun<R extends { run_id: string }>(rows: R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) out.set(r.run_id, [...(out.get(r.run_id) ?? []), r]);
  return out;
}

interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  node_id: string | null;
  attempt: number | null;
  ignored: string | null;
  at: Date;
}
interface TaskRow {
  run_id: string;
  node_id: string;
  status: string;
  attempt: number;
  finished_at: Date | null;
  updated_at: Date;
}

/** Every way `life` breaks the rules of a cancel racing fenced steps (empty when none). */
function broken(life: Life, status: string, eventSeq: number, events: EventRow[], tasks: TaskRow[]): string[] {
  const out: string[] = [];
  const fail = (what: string) => out.push(`run ${life.runId} (cancel at report ${life.cancelAt}): ${what}`);
  if (events.map((e) => e.seq).join() !== Array.from({ length: eventSeq }, (_, i) => i + 1).join())
    fail(`history seqs ${events.map((e) => e.seq).join()} at event_seq ${eventSeq}`);
  const applied = events.filter((e) => e.type === 'NodeCompleted' && e.ignored === null);
  const nodes = applied.map((e) => e.node_id);
  if (new Set(nodes).size !== nodes.length) fail(`a node completed twice: ${nodes.join()}`);
  const cancels = events.filter((e) => e.type === 'RunCancelled');
  if (life.cancel !== 'done') {
    if (life.cancel !== 'CONFLICT' || status !== 'SUCCEEDED') fail(`cancel ${life.cancel}, run ${status}`);
    if (cancels.length !== 0 || applied.length !== NODES) fail(`refused cancel, but ${cancels.length} RunCancelled and ${applied.length} completions`);
    if (tasks.some((t) => t.status !== 'COMPLETED')) fail(`refused cancel, tasks ${tasks.map((t) => `${t.node_id}:${t.status}`).join()}`);
    return out;
  }
  if (status !== 'CANCELLED' || cancels.length !== 1) return [...out, `run ${life.runId}: cancelled, but run ${status} with ${cancels.length} RunCancelled`];
  const cancelled = cancels[0]!;
  for (const e of events.filter((e) => e.seq > cancelled.seq)) {
    if (e.ignored === null) fail(`${e.type} of ${e.node_id} applied at seq ${e.seq}, after the cancel at seq ${cancelled.seq}`);
  }
  for (const t of tasks) {
    if (t.status !== 'COMPLETED' && t.status !== 'CANCELLED') fail(`task ${t.node_id} ${t.status} after the cancel`);
    if (t.status === 'COMPLETED' && (t.finished_at! > cancelled.at || t.updated_at > cancelled.at))
      fail(`task ${t.node_id} completed at ${t.finished_at?.toISOString()}, after the cancel at ${cancelled.at.toISOString()}`);
  }
  // A report the worker was told was applied is in the history before the cancel, once; one it was
  // told was ignored is there as ignored; every report after the cancel is ignored.
  for (const r of [...life.before, ...life.after]) {
    const mine = events.filter((e) => e.type === 'NodeCompleted' && e.node_id === r.nodeId && e.attempt === r.attempt);
    if (r.ignored === undefined && !mine.some((e) => e.ignored === null && e.seq < cancelled.seq))
      fail(`applied report of ${r.nodeId} not in the history before the cancel`);
    if (r.ignored !== undefined && !mine.some((e) => e.ignored === r.ignored)) fail(`ignored report of ${r.nodeId} (${r.ignored}) not recorded as ignored`);
  }
  for (const r of life.after) {
    if (r.ignored === undefined) fail(`report of ${r.nodeId} made after the cancel was applied`);
  }
  if (life.after.length !== 1) fail(`${life.after.length} reports after the cancel`);
  return out;
}

describe(`${RUNS} cancels racing chains reported through the step committer`, () => {
  it('lets no report land after its run was cancelled, and records every report made after it as ignored', async () => {
    const h = await coordinatorHarness(db.ds, { now: undefined });
    const canceller = new RunCoordinator(db.ds, new RecordingDispatcher(), new RecordingPublisher(), {
      logger: new MemoryLogger(),
      dispatchWindowFloor: 1_000_000,
    });
    const { workflowId } = await h.publish(chain(NODES));
    const next = random(SEED);

    const lives: Life[] = [];
    let started = 0;
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        while (started < RUNS) {
          started++;
          lives.push(await live(h, canceller, workflowId, next));
        }
      }),
    );
    expect(lives).toHaveLength(RUNS);

    const q = async <R>(text: string) => (await db.owner.query(text, [h.tenantId])) as R[];
    const runs = new Map(
      (await q<{ id: string; status: string; event_seq: number }>(`SELECT id, status, event_seq FROM runs WHERE tenant_id = $1`)).map((r) => [r.id, r]),
    );
    const events = byRun(
      await q<EventRow>(`SELECT run_id, seq, type, node_id, attempt, ignored, at FROM run_history WHERE tenant_id = $1 ORDER BY run_id, seq`),
    );
    const tasks = byRun(await q<TaskRow>(`SELECT run_id, node_id, status, attempt, finished_at, updated_at FROM tasks WHERE tenant_id = $1`));
    const problems = lives.flatMap((l) =>
      broken(l, runs.get(l.runId)!.status, runs.get(l.runId)!.event_seq, events.get(l.runId) ?? [], tasks.get(l.runId) ?? []),
    );
    expect({ seed: SEED, problems: problems.slice(0, 20), count: problems.length }).toEqual({ seed: SEED, problems: [], count: 0 });

    // The race was real: cancels met fenced reports in flight, and most reports were written fenced.
    const raced = lives.filter((l) => l.cancelAt <= NODES);
    const stats = h.coordinator.committer.stats;
    const summary = {
      seed: SEED,
      cancelled: lives.filter((l) => l.cancel === 'done').length,
      refused: lives.filter((l) => l.cancel !== 'done').length,
      racedReportIgnored: raced.filter((l) => l.before.at(-1)?.ignored !== undefined).length,
      racedReportApplied: raced.filter((l) => l.before.at(-1)?.ignored === undefined).length,
      committer: stats,
    };
    console.log(JSON.stringify(summary));
    expect(summary.cancelled + summary.refused).toBe(RUNS);
    expect(stats.statements).toBeGreaterThan(RUNS);
    // A fence that fails is a verdict, never an error: no message failed (one that did would mean
    // a write decided on an old state reached a row, and only a key or a count stopped it).
    expect(stats.failed).toBe(0);
  }, 240_000);
});

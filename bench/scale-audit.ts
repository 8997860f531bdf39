/**
 * What `npm run bench:scale` checks and reads in the database after each topology ran, as the
 * tables' owner: whether every run it started succeeded with each of its tasks completed exactly
 * once, and the run latencies and step throughput of its measured window (database clock).
 */
import type pg from 'pg';
import { CHAIN_LENGTH } from './weft.js';

/** The correctness of one topology's runs, from their rows and history. */
export interface RunAudit {
  /** Runs the driver started (and saw end). */
  runs: number;
  succeeded: number;
  /** Task rows of those runs: CHAIN_LENGTH per run when correct. */
  tasks: number;
  /** Tasks COMPLETED at their first attempt. */
  completedFirstAttempt: number;
  /** Tasks whose history holds exactly one applied NodeCompleted. */
  completedOnce: number;
  /** Applied NodeCompleted events beyond one per task (a task completed twice). */
  extraCompletions: number;
  /** Worker reports the coordinator recorded as ignored (fenced stale or duplicate reports). */
  ignoredReports: number;
  /** Human-readable problems; empty when every run is correct. */
  problems: string[];
}

/**
 * Audits the runs `runIds` of tenant `tenantId`: each must be SUCCEEDED with CHAIN_LENGTH tasks,
 * every task COMPLETED, and its history must apply exactly one NodeCompleted per task.
 */
export async function auditRuns(owner: pg.Client, tenantId: string, runIds: readonly string[]): Promise<RunAudit> {
  const runs = await owner.query<{ n: number; ok: number }>(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS ok FROM runs WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
    [tenantId, runIds],
  );
  const tasks = await owner.query<{ n: number; first: number }>(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'COMPLETED' AND attempt = 0)::int AS first
       FROM tasks WHERE tenant_id = $1 AND run_id = ANY($2::uuid[])`,
    [tenantId, runIds],
  );
  const events = await owner.query<{ once: number; extra: number; ignored: number }>(
    `WITH applied AS (
       SELECT run_id, node_id, count(*) AS n FROM run_history
        WHERE tenant_id = $1 AND run_id = ANY($2::uuid[]) AND type = 'NodeCompleted' AND ignored IS NULL
        GROUP BY run_id, node_id)
     SELECT (SELECT count(*) FROM applied WHERE n = 1)::int AS once,
            (SELECT coalesce(sum(n - 1), 0) FROM applied WHERE n > 1)::int AS extra,
            (SELECT count(*) FROM run_history WHERE tenant_id = $1 AND run_id = ANY($2::uuid[]) AND ignored IS NOT NULL)::int AS ignored`,
    [tenantId, runIds],
  );
  const a: RunAudit = {
    runs: runIds.length,
    succeeded: runs.rows[0]!.ok,
    tasks: tasks.rows[0]!.n,
    completedFirstAttempt: tasks.rows[0]!.first,
    completedOnce: events.rows[0]!.once,
    extraCompletions: events.rows[0]!.extra,
    ignoredReports: events.rows[0]!.ignored,
    problems: [],
  };
  const want = a.runs * CHAIN_LENGTH;
  if (runs.rows[0]!.n !== a.runs) a.problems.push(`${a.runs - runs.rows[0]!.n} of ${a.runs} runs are missing from the database`);
  if (a.succeeded !== a.runs) a.problems.push(`${a.runs - a.succeeded} of ${a.runs} runs did not succeed`);
  if (a.tasks !== want) a.problems.push(`${a.tasks} tasks instead of ${want}`);
  if (a.completedOnce !== want) a.problems.push(`${a.completedOnce} of ${want} tasks have exactly one applied NodeCompleted`);
  if (a.extraCompletions) a.problems.push(`${a.extraCompletions} NodeCompleted applied beyond one per task`);
  return a;
}

/** Steps and run latencies of one measured window. */
export interface WindowFigures {
  /** Tasks COMPLETED in the window (database clock). */
  steps: number;
  /** Runs that finished in the window. */
  runsEnded: number;
  /** finishedAt − createdAt of those runs, ms: median, 95th percentile, most. */
  latencyMs: { p50: number; p95: number; max: number };
}

/** The figures of the window [`from`, `to`) for tenant `tenantId` (timestamps from the database's clock). */
export async function windowFigures(owner: pg.Client, tenantId: string, from: Date, to: Date): Promise<WindowFigures> {
  const steps = await owner.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND status = 'COMPLETED' AND finished_at >= $2 AND finished_at < $3`,
    [tenantId, from, to],
  );
  const lat = await owner.query<{ n: number; p50: number | null; p95: number | null; max: number | null }>(
    `SELECT count(*)::int AS n,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95,
            max(ms) AS max
       FROM (SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM runs
              WHERE tenant_id = $1 AND finished_at >= $2 AND finished_at < $3) r`,
    [tenantId, from, to],
  );
  const l = lat.rows[0]!;
  return { steps: steps.rows[0]!.n, runsEnded: l.n, latencyMs: { p50: Number(l.p50 ?? NaN), p95: Number(l.p95 ?? NaN), max: Number(l.max ?? NaN) } };
}

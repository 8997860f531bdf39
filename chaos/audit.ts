/**
 * What the database says once the runs ended (read through the owner connection, which row-level
 * security does not restrict): run statuses, tasks completed more than once, the attempts of
 * every HTTP task, the CODE tasks of every succeeded run, and the history rows the engine ignored
 * or rejected.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Pool } from 'pg';

export interface DbRun {
  id: string;
  key: string;
  status: string;
  error: string | null;
}

export interface HttpTask {
  runId: string;
  key: string;
  nodeId: string;
  taskId: string;
  status: string;
  /** 0-based attempt on the task row: attempts the engine started = attempt + 1. */
  attempt: number;
}

/** A CODE node of a SUCCEEDED run: its task (the task fields are null when it has none). */
export interface CodeTask {
  runId: string;
  key: string;
  nodeId: string;
  status: string | null;
  attempt: number | null;
  output: unknown;
  error: string | null;
}

export interface DoubleCompletion {
  runId: string;
  key: string;
  nodeId: string;
  taskId: string;
  /** The terminal actions recorded for the task: `seq:type[:status]@attempt`. */
  actions: string[];
}

export interface Audit {
  runs: DbRun[];
  httpTasks: HttpTask[];
  /** One row per (SUCCEEDED run, CODE node). */
  codeTasks: CodeTask[];
  /** NodeCompleted reports of CODE tasks: applied, and ignored (a stale execution that finished too). */
  codeReports: { applied: number; ignored: number };
  /** Tasks with more than one terminal action (CompleteTask, FailTask, ResolveWait, or created terminal). */
  doubleCompletions: DoubleCompletion[];
  /** (task, attempt) pairs with more than one applied (not ignored, not rejected) NodeCompleted. */
  doubleAppliedReports: { runId: string; nodeId: string; attempt: number; seqs: number[] }[];
  /** (task, attempt) dispatched more than once by the engine (DispatchTask actions). */
  repeatedDispatches: number;
  /** History rows the engine ignored, by event type and reason. */
  ignored: { type: string; reason: string; count: number }[];
  /** History rows with an error, by event type and error. */
  rejected: { type: string; error: string; count: number }[];
  /** TimerFired events applied (not ignored). */
  timersApplied: number;
}

/** Reads the database; `codeNodes` are the workflow's CODE node ids. */
export async function audit(owner: Pool, codeNodes: readonly string[]): Promise<Audit> {
  const runs = (await owner.query(`SELECT id::text, input->>'key' AS key, status, error FROM runs ORDER BY created_at`)).rows as DbRun[];

  const httpTasks = (
    await owner.query(
      `SELECT t.run_id::text AS "runId", r.input->>'key' AS key, t.node_id AS "nodeId", t.id::text AS "taskId", t.status, t.attempt
         FROM tasks t JOIN runs r ON r.tenant_id = t.tenant_id AND r.id = t.run_id
        WHERE t.node_type = 'HTTP'`,
    )
  ).rows as HttpTask[];

  const codeTasks = (
    await owner.query(
      `SELECT r.id::text AS "runId", r.input->>'key' AS key, n.node_id AS "nodeId", t.status, t.attempt, t.output, t.error
         FROM runs r
        CROSS JOIN unnest($1::text[]) AS n(node_id)
         LEFT JOIN tasks t ON t.tenant_id = r.tenant_id AND t.run_id = r.id AND t.node_id = n.node_id
        WHERE r.status = 'SUCCEEDED'
        ORDER BY r.created_at, n.node_id`,
      [codeNodes],
    )
  ).rows as CodeTask[];

  const codeReports = (
    await owner.query(
      `SELECT count(*) FILTER (WHERE ignored IS NULL AND error IS NULL)::int AS applied, count(*) FILTER (WHERE ignored IS NOT NULL)::int AS ignored
         FROM run_history WHERE type = 'NodeCompleted' AND node_id = ANY($1::text[])`,
      [codeNodes],
    )
  ).rows[0] as { applied: number; ignored: number };

  const doubleCompletions = (
    await owner.query(
      `WITH terminal AS (
         SELECT e.run_id, e.seq, a
           FROM run_history e, jsonb_array_elements(e.actions) a
          WHERE a->>'type' IN ('CompleteTask', 'FailTask', 'ResolveWait')
             OR (a->>'type' = 'CreateTask' AND a->>'status' IN ('COMPLETED', 'FAILED'))
       )
       SELECT t.run_id::text AS "runId", r.input->>'key' AS key, t.a->>'nodeId' AS "nodeId", t.a->>'taskId' AS "taskId",
              array_agg(t.seq || ':' || (t.a->>'type') || coalesce(':' || (t.a->>'status'), '') || coalesce('@' || (t.a->>'attempt'), '') ORDER BY t.seq) AS actions
         FROM terminal t JOIN runs r ON r.id = t.run_id
        GROUP BY 1, 2, 3, 4
       HAVING count(*) > 1`,
    )
  ).rows as DoubleCompletion[];

  const doubleAppliedReports = (
    await owner.query(
      `SELECT run_id::text AS "runId", node_id AS "nodeId", attempt, array_agg(seq ORDER BY seq) AS seqs
         FROM run_history
        WHERE type = 'NodeCompleted' AND ignored IS NULL AND error IS NULL
        GROUP BY 1, 2, 3
       HAVING count(*) > 1`,
    )
  ).rows;

  const repeatedDispatches = (
    await owner.query(
      `SELECT count(*)::int AS n FROM (
         SELECT a->>'taskId', a->>'attempt'
           FROM run_history e, jsonb_array_elements(e.actions) a
          WHERE a->>'type' = 'DispatchTask'
          GROUP BY 1, 2 HAVING count(*) > 1) d`,
    )
  ).rows[0].n as number;

  const ignored = (
    await owner.query(
      `SELECT type, regexp_replace(ignored, '[0-9a-f]{8}-[0-9a-f-]{27}', '<id>', 'g') AS reason, count(*)::int AS count
         FROM run_history WHERE ignored IS NOT NULL GROUP BY 1, 2 ORDER BY 3 DESC`,
    )
  ).rows;

  const rejected = (
    await owner.query(
      `SELECT type, left(regexp_replace(error, '[0-9a-f]{8}-[0-9a-f-]{27}', '<id>', 'g'), 160) AS error, count(*)::int AS count
         FROM run_history WHERE error IS NOT NULL GROUP BY 1, 2 ORDER BY 3 DESC`,
    )
  ).rows;

  const timersApplied = (await owner.query(`SELECT count(*)::int AS n FROM run_history WHERE type = 'TimerFired' AND ignored IS NULL AND error IS NULL`))
    .rows[0].n as number;

  return { runs, httpTasks, codeTasks, codeReports, doubleCompletions, doubleAppliedReports, repeatedDispatches, ignored, rejected, timersApplied };
}

/**
 * The CODE tasks of SUCCEEDED runs whose output is not `expected(key, nodeId)` (deep equality,
 * key order aside), or that are missing or not COMPLETED; each with a line saying how.
 */
export function wrongCodeOutputs(tasks: CodeTask[], expected: (key: string, nodeId: string) => unknown): { task: CodeTask; line: string }[] {
  const wrong: { task: CodeTask; line: string }[] = [];
  for (const t of tasks) {
    const want = expected(t.key, t.nodeId);
    const at = `run ${t.runId} (${t.key}) node ${t.nodeId}`;
    if (t.status === null) wrong.push({ task: t, line: `${at}: no task` });
    else if (t.status !== 'COMPLETED') wrong.push({ task: t, line: `${at}: ${t.status}@${t.attempt}${t.error ? `: ${t.error}` : ''}` });
    else if (!isDeepStrictEqual(t.output, want))
      wrong.push({ task: t, line: `${at}@${t.attempt}: output ${JSON.stringify(t.output)}, expected ${JSON.stringify(want)}` });
  }
  return wrong;
}

/** The history of one run, one line per row, for evidence in the report. */
export async function history(owner: Pool, runId: string): Promise<string[]> {
  const rows = (
    await owner.query(
      `SELECT seq, to_char(at, 'HH24:MI:SS.MS') AS at, type, node_id, attempt, ignored, error, actions
         FROM run_history WHERE run_id = $1 ORDER BY seq`,
      [runId],
    )
  ).rows;
  return rows.map(
    (r) =>
      `#${r.seq} ${r.at} ${r.type}${r.node_id ? ` ${r.node_id}` : ''}${r.attempt !== null ? `@${r.attempt}` : ''}` +
      `${r.ignored ? ` IGNORED(${r.ignored})` : ''}${r.error ? ` ERROR(${r.error})` : ''} → ` +
      (r.actions as { type: string; nodeId?: string; status?: string; attempt?: number }[])
        .map((a) => `${a.type}${a.nodeId ? ` ${a.nodeId}` : ''}${a.status ? ` ${a.status}` : ''}${a.attempt !== undefined ? `@${a.attempt}` : ''}`)
        .join(', '),
  );
}

/** Tasks of a run that are not terminal, with their status (for stuck-run evidence). */
export async function openTasks(owner: Pool, runId: string): Promise<string[]> {
  const rows = (
    await owner.query(
      `SELECT t.node_id, t.status, t.attempt, to_char(t.updated_at, 'HH24:MI:SS.MS') AS updated,
              to_char((to_jsonb(t)->>'lease_expires_at')::timestamptz, 'HH24:MI:SS.MS') AS lease,
              CASE WHEN o.id IS NULL THEN 'no outbox row' WHEN o.enqueued_at IS NULL THEN 'outbox not enqueued' ELSE 'outbox enqueued' END AS outbox
         FROM tasks t LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id
        WHERE t.run_id = $1 AND t.status NOT IN ('COMPLETED', 'FAILED', 'SKIPPED', 'CANCELLED')`,
      [runId],
    )
  ).rows;
  return rows.map((r) => `${r.node_id} ${r.status}@${r.attempt} (updated ${r.updated}${r.lease ? `, lease until ${r.lease}` : ''}, ${r.outbox})`);
}

/** Tasks of a run that FAILED, with their attempt and error (for failed-run evidence). */
export async function failedTasks(owner: Pool, runId: string): Promise<string[]> {
  const rows = (await owner.query(`SELECT node_id, attempt, error FROM tasks WHERE run_id = $1 AND status = 'FAILED' ORDER BY node_id`, [runId])).rows;
  return rows.map((r) => `${r.node_id}@${r.attempt}: ${String(r.error ?? '').slice(0, 300)}`);
}

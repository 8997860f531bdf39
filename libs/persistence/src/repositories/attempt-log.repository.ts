import type { DataSource, EntityManager } from 'typeorm';
import { TenantScopedRepository } from './tenant-scoped.repository.js';
import { GATE, type WritePart } from './write-batch.js';

/** One worker attempt's logs as the coordinator writes them (`task_attempt_logs`). */
export interface AttemptLogRecord {
  taskId: string;
  /** The attempt, counted from 0 as `tasks.attempt` is. */
  attempt: number;
  /**
   * The lease token of the reporting execution: the row is written only while the attempt is
   * RUNNING under it. Without one (tools, tests) only while the attempt is QUEUED or RUNNING.
   */
  leaseToken?: string;
  /** The worker's clock when the execution began and ended. */
  startedAt: Date;
  finishedAt: Date;
  /** The attempt's failure as reported; null when it succeeded. */
  error: string | null;
  /** The text kept (no NUL character: PostgreSQL's `text` cannot hold one). */
  logs: string;
}

/** One stored attempt's logs, as read back. */
export interface AttemptLogRow {
  taskId: string;
  runId: string;
  nodeId: string;
  attempt: number;
  startedAt: Date;
  finishedAt: Date;
  error: string | null;
  logs: string;
}

/** One stored attempt without its texts: what they would cost to read, in bytes. */
export interface AttemptLogSize {
  taskId: string;
  attempt: number;
  startedAt: Date;
  finishedAt: Date;
  /** Bytes of its logs and error as stored (UTF-8), read without reading them. */
  bytes: number;
}

/** One stored attempt's texts. */
export interface AttemptLogText {
  taskId: string;
  attempt: number;
  error: string | null;
  logs: string;
}

/** The columns a write of one attempt's logs gives, in this order. */
const INSERT = `INSERT INTO task_attempt_logs (tenant_id, task_id, attempt, run_id, node_id, started_at, finished_at, error, logs)`;

/** A report written again (a retried report, a completion turned into a failure) replaces the row. */
const UPSERT = `ON CONFLICT (tenant_id, task_id, attempt)
  DO UPDATE SET started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, error = EXCLUDED.error, logs = EXCLUDED.logs`;

/**
 * The write of one attempt's logs, fenced by the attempt and its lease: it inserts nothing once
 * the attempt is no longer the task's current RUNNING one under that token (a stale report).
 */
const WRITE = `${INSERT}
  SELECT t.tenant_id, t.id, t.attempt, t.run_id, t.node_id, $4::timestamptz, $5::timestamptz, $6::text, $7::text
    FROM tasks t
   WHERE t.tenant_id = $1 AND t.id = $2::uuid AND t.attempt = $3::int
     AND (($8::uuid IS NULL AND t.status IN ('QUEUED', 'RUNNING')) OR (t.status = 'RUNNING' AND t.lease_token = $8::uuid))
  ${UPSERT}`;

/**
 * The statement writing `record` for `tenantId` (text and parameters), for the step committer,
 * which sends it with the other reports of its next message. Its rows are empty; its count says
 * whether the fence held, which nobody needs: logs of a stale attempt are simply not kept.
 */
export function attemptLogWrite(tenantId: string, record: AttemptLogRecord): { text: string; params: unknown[] } {
  return {
    text: WRITE,
    params: [tenantId, record.taskId, record.attempt, record.startedAt, record.finishedAt, record.error, record.logs, record.leaseToken?.toLowerCase() ?? null],
  };
}

const PART = `${INSERT}
  SELECT $1, $2::uuid, $3::int, $4::uuid, $5::text, $6::timestamptz, $7::timestamptz, $8::text, $9::text WHERE ${GATE}
  ${UPSERT}`;

/**
 * The write of `record` as a part of the event that reports its attempt (run `runId`, node
 * `nodeId`), for a fenced statement: that statement's fence (the attempt RUNNING under the
 * report's lease) is its condition, so the logs cost no statement of their own and are kept
 * exactly when the report is. Its `text` (unconditional) is for tools and tests only.
 */
export function attemptLogPart(tenantId: string, runId: string, nodeId: string, record: AttemptLogRecord): WritePart {
  return {
    text: PART.replace(GATE, 'true'),
    gated: PART,
    params: [tenantId, record.taskId, record.attempt, runId, nodeId, record.startedAt, record.finishedAt, record.error, record.logs],
  };
}

/**
 * The logs of worker attempts (`task_attempt_logs`, see migration
 * `1766217600000-attempt-logs.ts`): one row per attempt that printed or did something, tenant
 * first in every key, under row-level security.
 */
export class AttemptLogRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /** Writes `record` on its own (see {@link attemptLogWrite}); true when the fence held and the row was written. */
  async write(tenantId: string, record: AttemptLogRecord): Promise<boolean> {
    const { text, params } = attemptLogWrite(tenantId, record);
    const r = await this.queryInTenant(tenantId, text, params);
    return r.rowCount === 1;
  }

  /**
   * The stored attempts of the tasks `taskIds` of `tenantId` (another tenant's ids give nothing),
   * by task then attempt, oldest first, with the size of their texts instead of the texts:
   * `octet_length` reads a stored value's size from its header, not the value (which may be
   * 64 KiB or more per attempt), so an answer can be charged before anything large is read.
   */
  async sizesOfTasks(tenantId: string, taskIds: readonly string[]): Promise<AttemptLogSize[]> {
    if (taskIds.length === 0) return [];
    const r = await this.queryInTenant<AttemptLogSize>(
      tenantId,
      `SELECT task_id AS "taskId", attempt, started_at AS "startedAt", finished_at AS "finishedAt",
              (octet_length(logs) + coalesce(octet_length(error), 0))::int AS bytes
         FROM task_attempt_logs
        WHERE tenant_id = $1 AND task_id = ANY($2::uuid[])
        ORDER BY task_id, attempt`,
      [tenantId, taskIds],
    );
    return r.rows;
  }

  /** The texts of the stored attempts of the tasks `taskIds` of `tenantId`, by task then attempt. */
  async textsOfTasks(tenantId: string, taskIds: readonly string[]): Promise<AttemptLogText[]> {
    if (taskIds.length === 0) return [];
    const r = await this.queryInTenant<AttemptLogText>(
      tenantId,
      `SELECT task_id AS "taskId", attempt, error, logs
         FROM task_attempt_logs
        WHERE tenant_id = $1 AND task_id = ANY($2::uuid[])
        ORDER BY task_id, attempt`,
      [tenantId, taskIds],
    );
    return r.rows;
  }

  /**
   * The stored attempts of the tasks `taskIds` of `tenantId` (another tenant's ids give nothing),
   * by task then attempt, oldest first.
   */
  async ofTasks(tenantId: string, taskIds: readonly string[]): Promise<AttemptLogRow[]> {
    if (taskIds.length === 0) return [];
    const r = await this.queryInTenant<AttemptLogRow>(
      tenantId,
      `SELECT task_id AS "taskId", run_id AS "runId", node_id AS "nodeId", attempt, started_at AS "startedAt",
              finished_at AS "finishedAt", error, logs
         FROM task_attempt_logs
        WHERE tenant_id = $1 AND task_id = ANY($2::uuid[])
        ORDER BY task_id, attempt`,
      [tenantId, taskIds],
    );
    return r.rows;
  }
}

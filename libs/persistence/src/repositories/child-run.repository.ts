import type { Json } from '../json.js';
import { sql } from '../sql.js';
import { RUN_STATE_COLUMNS, type RunState, type Transaction } from './event-rows.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** A child run as the SUBWORKFLOW task that started it sees it, with its first failed task when it did not succeed. */
export interface ChildRunRow {
  id: string;
  status: string;
  output: Json | null;
  error: string | null;
  eventSeq: number;
  workflowId: string;
  version: number;
  input: Json;
  config: Json;
  failedNode: string | null;
  failedError: string | null;
}

/** A child run as a StartChildRun action creates it (RUNNING, `event_seq` 0). */
export type NewChildRun = Pick<
  RunState,
  | 'id'
  | 'workflowId'
  | 'version'
  | 'input'
  | 'config'
  | 'parentRunId'
  | 'parentTaskId'
  | 'parentAttempt'
  | 'depth'
  | 'rootRunId'
  | 'traceparent'
  | 'traceCallerSpan'
  | 'priority'
>;

/**
 * Runs started by a SUBWORKFLOW task of another run of the tenant (`runs.parent_run_id`,
 * `parent_task_id`, `parent_attempt`, `root_run_id`), inside the event's tenant transaction:
 * creating, waking, cancelling and counting them.
 */
export class ChildRunRepository extends TenantScopedRepository {
  constructor(m: Transaction) {
    super(m);
  }

  /** Inserts child run `c` at `now` unless a run with its id exists. */
  async insert(tenantId: string, c: NewChildRun, now: Date): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, parent_run_id, parent_task_id, parent_attempt, depth,
                           root_run_id, event_seq, created_at, updated_at, traceparent, trace_caller_span, priority)
         VALUES ($1, $2, $3, $4, 'RUNNING', $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, 0, $12, $12, $13, $14, $15)
         ON CONFLICT (tenant_id, id) DO NOTHING`,
        [
          tenantId,
          c.id,
          c.workflowId,
          c.version,
          JSON.stringify(c.input),
          JSON.stringify(c.config),
          c.parentRunId,
          c.parentTaskId,
          c.parentAttempt,
          c.depth,
          c.rootRunId,
          now,
          c.traceparent,
          c.traceCallerSpan,
          c.priority,
        ],
      ),
    );
  }

  /** Makes WAITING task `taskId` at `attempt` due at `now`; returns whether it matched. */
  async wakeTask(tenantId: string, taskId: string, attempt: number, now: Date): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `UPDATE tasks SET wake_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2 AND attempt = $3 AND status = 'WAITING'`, [
        tenantId,
        taskId,
        attempt,
        now,
      ]);
      return r.rowCount === 1;
    });
  }

  /**
   * Makes the parent's SUBWORKFLOW task `parentTaskId` of run `parentRunId` due at `now` if it
   * still waits on `parentAttempt`; returns its node id, or undefined when it does not.
   */
  async wakeParentTask(tenantId: string, parentRunId: string, parentTaskId: string, parentAttempt: number | null, now: Date): Promise<string | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ node_id: string }>(
        m,
        `UPDATE tasks SET wake_at = $5, updated_at = $5
          WHERE tenant_id = $1 AND id = $2 AND run_id = $3 AND attempt = $4 AND status = 'WAITING'
          RETURNING node_id`,
        [tenantId, parentTaskId, parentRunId, parentAttempt, now],
      );
      return r.rows[0]?.node_id;
    });
  }

  /** Fails child run `runId`, whose start the machine refused, with `reason`. */
  async failUnstarted(tenantId: string, runId: string, reason: string, now: Date): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(m, `UPDATE runs SET status = 'FAILED', error = $3, finished_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2`, [
        tenantId,
        runId,
        reason,
        now,
      ]),
    );
  }

  /** Locks the RUNNING child runs of `runId` (`FOR UPDATE`, oldest first) and returns them. */
  async lockRunning(tenantId: string, runId: string): Promise<RunState[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RunState>(
        m,
        `SELECT ${RUN_STATE_COLUMNS} FROM runs WHERE tenant_id = $1 AND parent_run_id = $2 AND status = 'RUNNING' ORDER BY created_at, id FOR UPDATE`,
        [tenantId, runId],
      );
      return r.rows;
    });
  }

  /** The latest child run started by `attempt` of SUBWORKFLOW task `taskId` of run `runId`, if any. */
  async latest(tenantId: string, runId: string, taskId: string, attempt: number): Promise<ChildRunRow | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<ChildRunRow>(
        m,
        `SELECT r.id, r.status, r.output, r.error, r.event_seq AS "eventSeq", r.workflow_id AS "workflowId", r.version, r.input, r.config,
                f.node_id AS "failedNode", f.error AS "failedError"
           FROM runs r
           LEFT JOIN LATERAL (
             SELECT t.node_id, t.error FROM tasks t
              WHERE t.tenant_id = r.tenant_id AND t.run_id = r.id AND t.status = 'FAILED' AND r.status <> 'SUCCEEDED'
              ORDER BY t.finished_at, t.id LIMIT 1
           ) f ON true
          WHERE r.tenant_id = $1 AND r.parent_run_id = $2 AND r.parent_task_id = $3 AND r.parent_attempt = $4
          ORDER BY r.created_at DESC, r.id DESC LIMIT 1`,
        [tenantId, runId, taskId, attempt],
      );
      return r.rows[0];
    });
  }

  /**
   * The runs in the tree under `rootRunId` (itself included). Runs of one tree grow in many
   * transactions at once, so counting and creating a child is serialized per tree by a
   * transaction-level advisory lock, held until commit; the count is a statement of its own so
   * its snapshot is taken after the lock is granted.
   */
  async treeSize(tenantId: string, rootRunId: string): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      await sql(m, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7355))`, [`weft-run-tree:${rootRunId}`]);
      const r = await sql<{ n: string }>(m, `SELECT count(*) AS n FROM runs WHERE tenant_id = $1 AND (id = $2 OR root_run_id = $2)`, [tenantId, rootRunId]);
      return Number(r.rows[0]?.n ?? 0);
    });
  }
}

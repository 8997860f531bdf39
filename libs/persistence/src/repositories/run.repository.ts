import type { DataSource, EntityManager } from 'typeorm';
import { RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX } from '@weft/contract';
import type { RunEventEntity } from '../entities/run-event.entity.js';
import { RunEntity } from '../entities/run.entity.js';
import { TaskEntity } from '../entities/task.entity.js';
import { InvalidCursorError } from '../errors.js';
import { sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { applyRunFilter, type RunFilter } from './run-filter.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';
import {
  EVENT_JSON_COLUMNS,
  pickColumns,
  RUN_ITEMS_PAGE_DEFAULT,
  RUN_ITEMS_PAGE_MAX,
  RUN_JSON_COLUMNS,
  sizedEventColumns,
  sizedTaskColumns,
  sizedRunColumns,
  TASK_JSON_COLUMNS,
  TASK_ORDER,
  withJsonBytes,
  type EventJsonColumn,
  type RunJsonColumn,
  type SizedEvent,
  type SizedRun,
  type SizedTask,
  type TaskJsonColumn,
} from './run-json.js';

/** Most child runs {@link RunRepository.childrenOfRun} returns: the oldest this many. */
export const RUN_CHILDREN_MAX = 100;

/** One page of runs, Relay style: each edge carries the cursor to resume after it. */
export interface RunPage {
  edges: { cursor: string; node: SizedRun }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Default and largest page size of {@link RunRepository.listRuns} (larger requests are clamped): the API's. */
export { RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX };

/**
 * Encodes a keyset cursor over `(created_at, id)`: base64url of `<microseconds since epoch>:<run id>`.
 * Microseconds (not a JS Date) so rows created within one millisecond never collide.
 */
export function encodeRunCursor(createdAtMicros: string, runId: string): string {
  return Buffer.from(`${createdAtMicros}:${runId}`, 'utf8').toString('base64url');
}

/** 10000-01-01T00:00:00Z in microseconds since the epoch. */
const MAX_CURSOR_MICROS = 253_402_300_800_000_000n;

/** Decodes {@link encodeRunCursor}; throws {@link InvalidCursorError} on anything else. */
export function decodeRunCursor(cursor: string): { createdAtMicros: string; runId: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(-?\d{1,19}):([0-9a-f-]{36})$/i.exec(text);
  if (!m || !isUuid(m[2])) throw new InvalidCursorError();
  // Microseconds of a time this system could have written (1970 to 9999): anything else would
  // overflow the timestamp the query compares it with.
  const micros = BigInt(m[1]!);
  if (micros < 0n || micros >= MAX_CURSOR_MICROS) throw new InvalidCursorError();
  return { createdAtMicros: m[1]!, runId: m[2]!.toLowerCase() };
}

/** Every column of `runs`, named as {@link RunEntity}'s properties. */
const RUN_COLUMNS = `tenant_id AS "tenantId", id, workflow_id AS "workflowId", version, status, input, config, output, error,
  idempotency_key AS "idempotencyKey", start_node_id AS "startNodeId", parent_run_id AS "parentRunId",
  parent_task_id AS "parentTaskId", parent_attempt AS "parentAttempt", root_run_id AS "rootRunId", depth,
  event_seq AS "eventSeq", created_at AS "createdAt", updated_at AS "updatedAt", finished_at AS "finishedAt",
  traceparent, trace_caller_span AS "traceCallerSpan", schedule_id AS "scheduleId", nominal_time AS "nominalTime",
  priority, concurrency_group AS "concurrencyGroup", concurrency_key AS "concurrencyKey", labels, paused_at AS "pausedAt",
  pause_reason AS "pauseReason", deadline_at AS "deadlineAt", decided_status AS "decidedStatus", decided_error AS "decidedError",
  decided_output AS "decidedOutput"`;

/**
 * The read side of runs for the API: runs, their tasks and their history. Writes go through
 * the coordinator only. Ids that are not UUIDs read as "not found".
 */
export class RunRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * The run, or null when the tenant has no such run. One prepared statement rather than a
   * QueryBuilder: every `startRun` answer and every live update of a watched run reads it.
   */
  async findRun(tenantId: string, runId: string): Promise<RunEntity | null> {
    if (!isUuid(runId)) return null;
    const text = `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = $1 AND id = $2`;
    const r = await this.queryInTenant<RunEntity>(tenantId, text, [tenantId, runId]);
    return r.rows[0] ? Object.assign(new RunEntity(), r.rows[0]) : null;
  }

  /** The run's `event_seq` (Run.seq) now, or undefined when the tenant has no such run: one round trip, no row to map. */
  async runSeq(tenantId: string, runId: string): Promise<number | undefined> {
    if (!isUuid(runId)) return undefined;
    const r = await this.queryInTenant<{ seq: number }>(tenantId, `SELECT event_seq AS seq FROM runs WHERE tenant_id = $1 AND id = $2`, [tenantId, runId]);
    return r.rows[0]?.seq;
  }

  /**
   * A page of the tenant's runs, newest first (`created_at DESC, id DESC`), at most `first`
   * (default 20, clamped to 1…200), after the cursor `after` from a previous page; each run
   * without its JSON values, with the sizes of those in `sized` (read them with {@link runJson}).
   * Throws {@link InvalidCursorError} for a cursor this method did not produce.
   */
  async listRuns(
    tenantId: string,
    filter: RunFilter = {},
    first: number = RUNS_PAGE_DEFAULT,
    after?: string | null,
    sized: Iterable<RunJsonColumn> = RUN_JSON_COLUMNS,
  ): Promise<RunPage> {
    const cols = pickColumns(sized, RUN_JSON_COLUMNS);
    const limit = Math.min(RUNS_PAGE_MAX, Math.max(1, Math.floor(Number.isFinite(first) ? first : RUNS_PAGE_DEFAULT)));
    const cursor = after ? decodeRunCursor(after) : undefined;
    return this.inTenant(tenantId, async (m) => {
      const qb = m
        .createQueryBuilder()
        .select(sizedRunColumns('r.', cols))
        .addSelect(`(extract(epoch from r.created_at) * 1000000)::bigint::text`, 'cursor_micros')
        .from('runs', 'r')
        .where('r.tenant_id = :tenantId', { tenantId });
      applyRunFilter(qb, filter);
      if (filter.finishedBefore) {
        // The planner takes a finished_at window's runs as spread evenly over created_at order and
        // walks the tenant's runs from the newest, when those of a day months back are all far
        // down. The page starts at the latest created_at in the window instead: every run the
        // filter matches is at or below it (no run matches when the window holds none), read from
        // runs_tenant_finished alone. FILTER keeps max() from being planned as that same walk.
        qb.andWhere(
          `r.created_at <= (SELECT max(w.created_at) FILTER (WHERE true) FROM runs w
            WHERE w.tenant_id = :tenantId AND w.finished_at < :finishedBefore${filter.finishedAfter ? ' AND w.finished_at >= :finishedAfter' : ''})`,
          { finishedBefore: filter.finishedBefore, finishedAfter: filter.finishedAfter },
        );
      }
      if (cursor) {
        qb.andWhere(`(r.created_at, r.id) < (timestamptz 'epoch' + CAST(:micros AS bigint) * interval '1 microsecond', CAST(:afterId AS uuid))`, {
          micros: cursor.createdAtMicros,
          afterId: cursor.runId,
        });
      }
      qb.orderBy('r.created_at', 'DESC')
        .addOrderBy('r.id', 'DESC')
        .limit(limit + 1);
      const raw = await qb.getRawMany<Record<string, unknown> & { cursor_micros: string }>();
      const edges = raw.slice(0, limit).map((row) => {
        const { cursor_micros, ...rest } = row;
        const node = withJsonBytes<RunJsonColumn, SizedRun>(rest, RUN_JSON_COLUMNS);
        return { cursor: encodeRunCursor(cursor_micros, node.id), node };
      });
      return {
        edges,
        pageInfo: { hasNextPage: raw.length > limit, endCursor: edges.length ? edges[edges.length - 1]!.cursor : null },
      };
    });
  }

  /** How many of the tenant's runs match `filter` (the runs {@link listRuns} pages through). */
  async countRuns(tenantId: string, filter: RunFilter = {}): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const qb = m.createQueryBuilder().select('count(*)::bigint::text', 'n').from('runs', 'r').where('r.tenant_id = :tenantId', { tenantId });
      const row = await applyRunFilter(qb, filter).getRawOne<{ n: string }>();
      return Number(row?.n ?? 0);
    });
  }

  /**
   * Who started a child run: the parent run and the node id of the parent's SUBWORKFLOW task
   * (`runs.parent_run_id`, `parent_task_id`, set when the child is created and never changed);
   * null for a run started over the API, an unknown run or an id that is not a UUID.
   */
  async parentOfRun(tenantId: string, runId: string): Promise<{ parentRunId: string; parentNodeId: string } | null> {
    if (!isUuid(runId)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ parent_run_id: string; node_id: string }>(
        m,
        `SELECT r.parent_run_id, t.node_id
           FROM runs r JOIN tasks t ON t.tenant_id = r.tenant_id AND t.id = r.parent_task_id
          WHERE r.tenant_id = $1 AND r.id = $2`,
        [tenantId, runId],
      );
      const row = r.rows[0];
      return row ? { parentRunId: row.parent_run_id, parentNodeId: row.node_id } : null;
    });
  }

  /**
   * The run, without its JSON values but with the sizes of those in `sized` (read them with
   * {@link runJson}), or null when the tenant has no such run.
   */
  async findSizedRun(tenantId: string, runId: string, sized: Iterable<RunJsonColumn> = RUN_JSON_COLUMNS): Promise<SizedRun | null> {
    if (!isUuid(runId)) return null;
    const text = `SELECT ${sizedRunColumns('', pickColumns(sized, RUN_JSON_COLUMNS))} FROM runs WHERE tenant_id = $1 AND id = $2`;
    const r = await this.queryInTenant<Record<string, unknown>>(tenantId, text, [tenantId, runId]);
    return r.rows[0] ? withJsonBytes<RunJsonColumn, SizedRun>(r.rows[0], RUN_JSON_COLUMNS) : null;
  }

  /**
   * A page of the run's tasks in {@link TASK_ORDER} (creation order, a for_each node's
   * iterations by index right after its own task), without their JSON values but with the sizes
   * of those in `sized`: at most `first` (clamped to 1…{@link RUN_ITEMS_PAGE_MAX}, default
   * {@link RUN_ITEMS_PAGE_DEFAULT}), after the task `after` (a task id of a previous page). Empty
   * for an unknown run; throws {@link InvalidCursorError} when `after` is not a task of the run.
   */
  async taskPage(
    tenantId: string,
    runId: string,
    first: number = RUN_ITEMS_PAGE_DEFAULT,
    after?: string | null,
    sized: Iterable<TaskJsonColumn> = TASK_JSON_COLUMNS,
  ): Promise<SizedTask[]> {
    if (!isUuid(runId)) return [];
    const columns = sizedTaskColumns(pickColumns(sized, TASK_JSON_COLUMNS));
    if (after != null && !isUuid(after)) throw new InvalidCursorError();
    const limit = clampItems(first);
    if (after == null) {
      const r = await this.queryInTenant<Record<string, unknown>>(
        tenantId,
        `SELECT ${columns} FROM tasks WHERE tenant_id = $1 AND run_id = $2 ORDER BY ${TASK_ORDER} LIMIT $3`,
        [tenantId, runId, limit],
      );
      return r.rows.map((row) => withJsonBytes<TaskJsonColumn, SizedTask>(row, TASK_JSON_COLUMNS));
    }
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<Record<string, unknown> & { found: boolean }>(
        m,
        `WITH a AS (SELECT ${TASK_ORDER} FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND id = $3)
         SELECT true AS found, t.* FROM a LEFT JOIN LATERAL (
           SELECT ${columns} FROM tasks
            WHERE tenant_id = $1 AND run_id = $2 AND (${TASK_ORDER}) > (SELECT * FROM a)
            ORDER BY ${TASK_ORDER} LIMIT $4) t ON true`,
        [tenantId, runId, after, limit],
      );
      if (r.rows.length === 0) throw new InvalidCursorError();
      return r.rows.filter((row) => row.id != null).map(({ found: _found, ...row }) => withJsonBytes<TaskJsonColumn, SizedTask>(row, TASK_JSON_COLUMNS));
    });
  }

  /**
   * The first page of the tasks of several runs in one query (for batching list views), by run
   * id, each list as {@link taskPage} gives it. Runs without tasks (or unknown) map to an
   * empty list.
   */
  async firstTaskPages(
    tenantId: string,
    runIds: string[],
    first: number = RUN_ITEMS_PAGE_DEFAULT,
    sized: Iterable<TaskJsonColumn> = TASK_JSON_COLUMNS,
  ): Promise<Map<string, SizedTask[]>> {
    const ids = [...new Set(runIds.filter(isUuid))];
    const byRun = new Map<string, SizedTask[]>(runIds.map((id) => [id, []]));
    if (!ids.length) return byRun;
    const r = await this.queryInTenant<Record<string, unknown> & { n: string }>(
      tenantId,
      `SELECT * FROM (
           SELECT ${sizedTaskColumns(pickColumns(sized, TASK_JSON_COLUMNS))}, row_number() OVER (PARTITION BY run_id ORDER BY ${TASK_ORDER}) AS n
             FROM tasks WHERE tenant_id = $1 AND run_id = ANY($2::uuid[])) t
          WHERE n <= $3 ORDER BY "runId", n`,
      [tenantId, ids, clampItems(first)],
    );
    for (const { n: _n, ...row } of r.rows) {
      const t = withJsonBytes<TaskJsonColumn, SizedTask>(row, TASK_JSON_COLUMNS);
      byRun.get(t.runId)!.push(t);
    }
    return byRun;
  }

  /**
   * For each `for_each` aggregate task of `taskIds` (a node's own task whose node has iteration
   * rows): the indexes of its iterations that failed for good (status FAILED), ascending. Task ids
   * of other tasks (no iteration rows), unknown ones and ones that are no UUIDs are left out.
   */
  async failedIterations(tenantId: string, taskIds: readonly string[]): Promise<Map<string, number[]>> {
    const ids = taskIds.filter(isUuid);
    if (ids.length === 0) return new Map();
    const text = `SELECT a.id, coalesce(array_agg(i.iteration ORDER BY i.iteration) FILTER (WHERE i.status = 'FAILED'), '{}') AS failed
      FROM tasks a JOIN tasks i ON i.tenant_id = a.tenant_id AND i.run_id = a.run_id AND i.node_id = a.node_id AND i.iteration IS NOT NULL AND i.loop_archived = a.loop_archived
        AND i.loop_iteration IS NOT DISTINCT FROM a.loop_iteration
      WHERE a.tenant_id = $1 AND a.id = ANY($2::uuid[]) AND a.iteration IS NULL GROUP BY a.id`;
    const r = await this.queryInTenant<{ id: string; failed: number[] }>(tenantId, text, [tenantId, ids]);
    return new Map(r.rows.map((row) => [row.id, row.failed.map(Number)]));
  }

  /** The run's tasks, with their values, in creation order (`created_at, id`); empty for an unknown run. */
  async tasksOfRun(tenantId: string, runId: string): Promise<TaskEntity[]> {
    if (!isUuid(runId)) return [];
    return this.inTenant(tenantId, (m) => m.getRepository(TaskEntity).find({ where: { tenantId, runId }, order: { createdAt: 'ASC', id: 'ASC' } }));
  }

  /**
   * The run's history, with its values, ordered by `seq` (`run_history`: the stored entries and
   * those derived from completed tasks); empty for an unknown run.
   */
  async eventsOfRun(tenantId: string, runId: string): Promise<RunEventEntity[]> {
    if (!isUuid(runId)) return [];
    const r = await this.queryInTenant<RunEventEntity>(
      tenantId,
      `SELECT ${sizedEventColumns([])}, payload, actions, error FROM run_history WHERE tenant_id = $1 AND run_id = $2 ORDER BY seq`,
      [tenantId, runId],
    );
    return r.rows;
  }

  /**
   * The runs of `tenantId` whose `parent_run_id` is `runId` (started by its SUBWORKFLOW tasks),
   * oldest first (`created_at, id`), at most `limit` (clamped to 1…{@link RUN_CHILDREN_MAX}),
   * without their JSON values but with the sizes of those in `sized`; empty for an id that is not
   * a UUID or a run without children.
   */
  async childrenOfRun(
    tenantId: string,
    runId: string,
    limit: number = RUN_CHILDREN_MAX,
    sized: Iterable<RunJsonColumn> = RUN_JSON_COLUMNS,
  ): Promise<SizedRun[]> {
    if (!isUuid(runId)) return [];
    const take = Math.min(RUN_CHILDREN_MAX, Math.max(1, Math.floor(limit)));
    const r = await this.queryInTenant<Record<string, unknown>>(
      tenantId,
      `SELECT ${sizedRunColumns('', pickColumns(sized, RUN_JSON_COLUMNS))} FROM runs WHERE tenant_id = $1 AND parent_run_id = $2 ORDER BY created_at, id LIMIT $3`,
      [tenantId, runId, take],
    );
    return r.rows.map((row) => withJsonBytes<RunJsonColumn, SizedRun>(row, RUN_JSON_COLUMNS));
  }

  /**
   * A page of the run's history ordered by `seq`, without the events' JSON values but with the
   * sizes of those in `sized`: at most `first` (clamped to 1…{@link RUN_ITEMS_PAGE_MAX}, default
   * {@link RUN_ITEMS_PAGE_DEFAULT}), the events after seq `after`. Empty for an unknown run.
   */
  async eventPage(
    tenantId: string,
    runId: string,
    first: number = RUN_ITEMS_PAGE_DEFAULT,
    after?: number | null,
    sized: Iterable<EventJsonColumn> = EVENT_JSON_COLUMNS,
  ): Promise<SizedEvent[]> {
    if (!isUuid(runId)) return [];
    const r = await this.queryInTenant<Record<string, unknown>>(
      tenantId,
      `SELECT ${sizedEventColumns(pickColumns(sized, EVENT_JSON_COLUMNS))} FROM run_history WHERE tenant_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
      [tenantId, runId, Math.max(0, Math.floor(after ?? 0)), clampItems(first)],
    );
    return r.rows.map((row) => withJsonBytes<EventJsonColumn, SizedEvent>(row, EVENT_JSON_COLUMNS));
  }

  /**
   * The JSON values `columns` of the tenant's runs `ids`, by run id (unknown ids absent). The
   * reader checked their sizes first ({@link findSizedRun}, {@link listRuns}).
   */
  async runJson(tenantId: string, ids: string[], columns: Iterable<RunJsonColumn>): Promise<Map<string, Partial<Record<RunJsonColumn, unknown>>>> {
    return this.jsonOf(tenantId, 'runs', ids, pickColumns(columns, RUN_JSON_COLUMNS));
  }

  /** The JSON values `columns` of the tenant's tasks `ids`, by task id (unknown ids absent). */
  async taskJson(tenantId: string, ids: string[], columns: Iterable<TaskJsonColumn>): Promise<Map<string, Partial<Record<TaskJsonColumn, unknown>>>> {
    return this.jsonOf(tenantId, 'tasks', ids, pickColumns(columns, TASK_JSON_COLUMNS));
  }

  /**
   * The JSON values `columns` of the history rows `keys` of the tenant, by `<runId>:<seq>`
   * (unknown keys absent).
   */
  async eventJson(
    tenantId: string,
    keys: { runId: string; seq: number }[],
    columns: Iterable<EventJsonColumn>,
  ): Promise<Map<string, Partial<Record<EventJsonColumn, unknown>>>> {
    const cols = pickColumns(columns, EVENT_JSON_COLUMNS);
    const valid = keys.filter((k) => isUuid(k.runId) && Number.isInteger(k.seq));
    const out = new Map<string, Partial<Record<EventJsonColumn, unknown>>>();
    if (!cols.length || !valid.length) return out;
    const r = await this.queryInTenant<Record<string, unknown> & { run_id: string; seq: number }>(
      tenantId,
      `SELECT e.run_id, e.seq, ${cols.map((c) => `e.${c}`).join(', ')}
           FROM run_history e JOIN unnest($2::uuid[], $3::int[]) AS k(run_id, seq) ON e.run_id = k.run_id AND e.seq = k.seq
          WHERE e.tenant_id = $1`,
      [tenantId, valid.map((k) => k.runId), valid.map((k) => k.seq)],
    );
    for (const { run_id, seq, ...values } of r.rows) out.set(`${run_id}:${seq}`, values);
    return out;
  }

  private async jsonOf<K extends string>(
    tenantId: string,
    table: 'runs' | 'tasks',
    ids: string[],
    cols: K[],
  ): Promise<Map<string, Partial<Record<K, unknown>>>> {
    const valid = [...new Set(ids.filter(isUuid))];
    const out = new Map<string, Partial<Record<K, unknown>>>();
    if (!cols.length || !valid.length) return out;
    const r = await this.queryInTenant<Record<string, unknown> & { id: string }>(
      tenantId,
      `SELECT id, ${cols.join(', ')} FROM ${table} WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
      [tenantId, valid],
    );
    for (const { id, ...values } of r.rows) out.set(id, values as Partial<Record<K, unknown>>);
    return out;
  }
}

function clampItems(first: number): number {
  return Math.min(RUN_ITEMS_PAGE_MAX, Math.max(1, Math.floor(Number.isFinite(first) ? first : RUN_ITEMS_PAGE_DEFAULT)));
}

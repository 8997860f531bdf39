import type { DataSource, EntityManager } from 'typeorm';
import { SCHEDULES_PAGE_MAX } from '@weft/contract';
import type { Json } from '../json.js';
import { sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** Skip counters of a schedule, by reason (the `skipped_*` columns). */
export interface ScheduleSkips {
  overlap: number;
  missed: number;
  bufferFull: number;
  startFailed: number;
  alreadyFired: number;
}

/** The fields of a schedule a user sets (create and update). */
export interface ScheduleFields {
  workflowId: string;
  /** The pinned version; null runs the workflow's default at each fire. */
  version: number | null;
  cron: string | null;
  intervalSeconds: number | null;
  timeZone: string;
  input: Json;
  config: Json;
  /** The labels every run the schedule starts gets (checked by the caller); `{}` for none. */
  labels: Record<string, string>;
  startAt: Date | null;
  endAt: Date | null;
  jitterSeconds: number;
  note: string | null;
  overlapPolicy: string;
  catchUpSeconds: number;
}

/** One row of `schedules`. Times are the database's; counters are numbers (bigint read as text, then converted). */
export interface ScheduleRow extends ScheduleFields {
  tenantId: string;
  id: string;
  paused: boolean;
  pauseNote: string | null;
  /** The name of the API key that last paused or unpaused the schedule. */
  pausedBy: string | null;
  pausedAt: Date | null;
  /** The next nominal fire time; null when the schedule has none left (past `endAt`). */
  nextFireAt: Date | null;
  /** When the scheduler fires `nextFireAt`: it plus the schedule's jitter. */
  nextDueAt: Date | null;
  /** Nominal times kept by `buffer_one` / `buffer_all`, oldest first. */
  bufferedTimes: Date[];
  firedCount: number;
  skipped: ScheduleSkips;
  lastNominalTime: Date | null;
  lastFiredAt: Date | null;
  lastRunId: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Bytes of `input` and of `config` as PostgreSQL prints them (`octet_length(col::text)`, stored when written). */
  inputBytes: number;
  configBytes: number;
}

/** What a fire changes on its schedule: the new times and buffer, and how much to add to each counter. */
export interface ScheduleFireState {
  nextFireAt: Date | null;
  nextDueAt: Date | null;
  bufferedTimes: Date[];
  fired: number;
  skipped: ScheduleSkips;
  lastNominalTime: Date | null;
  lastFiredAt: Date | null;
  lastRunId: string | null;
  /** The last start's failure; undefined leaves the stored one. */
  lastError?: string | null;
  now: Date;
}

/** Most schedules one {@link ScheduleRepository.list} call returns. */
export { SCHEDULES_PAGE_MAX };

const COLUMNS = `tenant_id AS "tenantId", id, workflow_id AS "workflowId", version, cron, interval_seconds AS "intervalSeconds",
  time_zone AS "timeZone", input, config, labels, start_at AS "startAt", end_at AS "endAt", jitter_seconds AS "jitterSeconds", note,
  overlap_policy AS "overlapPolicy", catch_up_seconds AS "catchUpSeconds", paused, pause_note AS "pauseNote",
  paused_by AS "pausedBy", paused_at AS "pausedAt", next_fire_at AS "nextFireAt", next_due_at AS "nextDueAt",
  buffered_times AS "bufferedTimes", fired_count::text AS "firedCount", skipped_overlap::text AS "skippedOverlap",
  skipped_missed::text AS "skippedMissed", skipped_buffer_full::text AS "skippedBufferFull",
  skipped_start_failed::text AS "skippedStartFailed", skipped_already_fired::text AS "skippedAlreadyFired",
  last_nominal_time AS "lastNominalTime", last_fired_at AS "lastFiredAt", last_run_id AS "lastRunId", last_error AS "lastError",
  created_at AS "createdAt", updated_at AS "updatedAt",
  COALESCE(input_bytes, octet_length(input::text))::int AS "inputBytes", COALESCE(config_bytes, octet_length(config::text))::int AS "configBytes"`;

type RawRow = Omit<ScheduleRow, 'firedCount' | 'skipped'> & {
  firedCount: string;
  skippedOverlap: string;
  skippedMissed: string;
  skippedBufferFull: string;
  skippedStartFailed: string;
  skippedAlreadyFired: string;
};

function toRow(r: RawRow): ScheduleRow {
  const { firedCount, skippedOverlap, skippedMissed, skippedBufferFull, skippedStartFailed, skippedAlreadyFired, ...rest } = r;
  return {
    ...rest,
    bufferedTimes: rest.bufferedTimes ?? [],
    firedCount: Number(firedCount),
    skipped: {
      overlap: Number(skippedOverlap),
      missed: Number(skippedMissed),
      bufferFull: Number(skippedBufferFull),
      startFailed: Number(skippedStartFailed),
      alreadyFired: Number(skippedAlreadyFired),
    },
  };
}

/**
 * Schedules (`schedules`): their fields, their fire state and the runs they started. Ids that are
 * not UUIDs read as not found. Constructed with a DataSource each call is its own tenant
 * transaction; with a `withTenant` manager (the scheduler's fire, the API's trigger) the calls
 * join it.
 */
export class ScheduleRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /** Inserts a schedule with its first fire times; `now` is its creation time. */
  async insert(tenantId: string, id: string, f: ScheduleFields, next: { fireAt: Date | null; dueAt: Date | null }, now: Date): Promise<ScheduleRow> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RawRow>(
        m,
        `INSERT INTO schedules (tenant_id, id, workflow_id, version, cron, interval_seconds, time_zone, input, config, start_at, end_at,
                                jitter_seconds, note, overlap_policy, catch_up_seconds, labels, next_fire_at, next_due_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12, $13, $14, $15, $16::jsonb, $17, $18, $19, $19)
         RETURNING ${COLUMNS}`,
        [tenantId, id, ...fieldParams(f), next.fireAt, next.dueAt, now],
      );
      return toRow(r.rows[0]!);
    });
  }

  /**
   * {@link insert}, unless the tenant holds `max` schedules already: then nothing is inserted and
   * `{ full: count }` says how many it holds. Inserts of one tenant are serialized by a
   * transaction-level advisory lock, taken before the count, so parallel creates cannot pass the cap.
   */
  async insertWithin(
    tenantId: string,
    max: number,
    id: string,
    f: ScheduleFields,
    next: { fireAt: Date | null; dueAt: Date | null },
    now: Date,
  ): Promise<{ row: ScheduleRow } | { full: number }> {
    return this.inTenant(tenantId, async (m) => {
      await sql(m, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7355))`, [`weft-schedules:${tenantId}`]);
      const held = Number((await sql<{ n: string }>(m, `SELECT count(*) AS n FROM schedules WHERE tenant_id = $1`, [tenantId])).rows[0]!.n);
      if (held >= max) return { full: held };
      return { row: await new ScheduleRepository(m).insert(tenantId, id, f, next, now) };
    });
  }

  /**
   * Replaces the user's fields of schedule `id` and its next fire times, in one transaction that
   * locks the row first, as the scheduler's fire does: `change` is given the row as it stands (a
   * fire under way holds the lock until its commit, so its advance is in the row) and the
   * database's clock read after the lock, and returns the new fields and next fire times. Its
   * counters, buffer and pause stay. Returns the row, or null when the tenant has no such schedule;
   * whatever `change` throws rolls the update back and is thrown again.
   */
  async update(
    tenantId: string,
    id: string,
    change: (current: ScheduleRow, now: Date) => { fields: ScheduleFields; next: { fireAt: Date | null; dueAt: Date | null } },
  ): Promise<ScheduleRow | null> {
    if (!isUuid(id)) return null;
    return this.inTenant(tenantId, async (m) => {
      const held = await lockedRow(m, tenantId, id);
      if (!held) return null;
      const { fields: f, next } = change(held.current, held.now);
      const now = held.now;
      const r = await sql<RawRow>(
        m,
        `UPDATE schedules SET workflow_id = $3, version = $4, cron = $5, interval_seconds = $6, time_zone = $7, input = $8::jsonb,
                config = $9::jsonb, start_at = $10, end_at = $11, jitter_seconds = $12, note = $13, overlap_policy = $14,
                catch_up_seconds = $15, labels = $16::jsonb, next_fire_at = $17, next_due_at = $18, updated_at = $19
          WHERE tenant_id = $1 AND id = $2
         RETURNING ${COLUMNS}`,
        [tenantId, id, ...fieldParams(f), next.fireAt, next.dueAt, now],
      );
      return r.rows[0] ? toRow(r.rows[0]) : null;
    });
  }

  /** The schedule, or null. With `lock`, the row is locked (`FOR UPDATE`) until the transaction ends. */
  async find(tenantId: string, id: string, lock = false): Promise<ScheduleRow | null> {
    if (!isUuid(id)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RawRow>(m, `SELECT ${COLUMNS} FROM schedules WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, id]);
      return r.rows[0] ? toRow(r.rows[0]) : null;
    });
  }

  /**
   * The tenant's schedules in creation order (`id`, a UUIDv7), at most `first` (clamped to
   * 1…{@link SCHEDULES_PAGE_MAX}) after schedule id `after`, optionally of one workflow. Returns
   * one more row than asked when there are more, for the caller to tell.
   */
  async list(tenantId: string, opts: { workflowId?: string; first: number; after?: string }): Promise<ScheduleRow[]> {
    const limit = Math.min(SCHEDULES_PAGE_MAX, Math.max(1, Math.floor(opts.first)));
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RawRow>(
        m,
        `SELECT ${COLUMNS} FROM schedules
          WHERE tenant_id = $1 AND ($2::text IS NULL OR workflow_id = $2) AND ($3::uuid IS NULL OR id > $3)
          ORDER BY id LIMIT $4`,
        [tenantId, opts.workflowId ?? null, opts.after && isUuid(opts.after) ? opts.after : null, limit + 1],
      );
      return r.rows.map(toRow);
    });
  }

  /** Deletes schedule `id` (its backfills go with it; its runs keep its id). True when it existed. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return this.inTenant(tenantId, async (m) => (await sql(m, `DELETE FROM schedules WHERE tenant_id = $1 AND id = $2`, [tenantId, id])).rowCount === 1);
  }

  /**
   * Pauses or unpauses schedule `id` with `note` by key `by`, in one transaction that locks the row
   * first, as {@link update} does: `next`, when given (an unpause), is handed the row as it stands
   * and the database's clock read after the lock, and returns the next fire times (computed from
   * now: what came due while paused is not fired), so they follow the timing an update under way
   * just committed. Returns the row, or null when the tenant has no such schedule.
   */
  async setPaused(
    tenantId: string,
    id: string,
    p: { paused: boolean; note: string | null; by: string | null; next?: (current: ScheduleRow, now: Date) => { fireAt: Date | null; dueAt: Date | null } },
  ): Promise<ScheduleRow | null> {
    if (!isUuid(id)) return null;
    return this.inTenant(tenantId, async (m) => {
      const held = await lockedRow(m, tenantId, id);
      if (!held) return null;
      const now = held.now;
      const next = p.next?.(held.current, now);
      const r = await sql<RawRow>(
        m,
        `UPDATE schedules SET paused = $3, pause_note = $4, paused_by = $5, paused_at = CASE WHEN $3 THEN $6::timestamptz END,
                next_fire_at = CASE WHEN $7 THEN $8::timestamptz ELSE next_fire_at END,
                next_due_at = CASE WHEN $7 THEN $9::timestamptz ELSE next_due_at END, updated_at = $6
          WHERE tenant_id = $1 AND id = $2
         RETURNING ${COLUMNS}`,
        [tenantId, id, p.paused, p.note, p.by, now, next !== undefined, next?.fireAt ?? null, next?.dueAt ?? null],
      );
      return r.rows[0] ? toRow(r.rows[0]) : null;
    });
  }

  /** Stores what a fire changed on schedule `id` (locked by this transaction) and ends the scheduler's claim on it. */
  async saveFireState(tenantId: string, id: string, s: ScheduleFireState): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `UPDATE schedules SET next_fire_at = $3, next_due_at = $4, buffered_times = $5::timestamptz[], fired_count = fired_count + $6,
                skipped_overlap = skipped_overlap + $7, skipped_missed = skipped_missed + $8, skipped_buffer_full = skipped_buffer_full + $9,
                skipped_start_failed = skipped_start_failed + $10, skipped_already_fired = skipped_already_fired + $11,
                last_nominal_time = COALESCE($12, last_nominal_time), last_fired_at = COALESCE($13, last_fired_at),
                last_run_id = COALESCE($14, last_run_id), last_error = CASE WHEN $15 THEN $16 ELSE last_error END,
                claimed_until = NULL, updated_at = $17
          WHERE tenant_id = $1 AND id = $2`,
        [
          tenantId,
          id,
          s.nextFireAt,
          s.nextDueAt,
          s.bufferedTimes,
          s.fired,
          s.skipped.overlap,
          s.skipped.missed,
          s.skipped.bufferFull,
          s.skipped.startFailed,
          s.skipped.alreadyFired,
          s.lastNominalTime,
          s.lastFiredAt,
          s.lastRunId,
          s.lastError !== undefined,
          s.lastError ?? null,
          s.now,
        ],
      ),
    );
  }

  /**
   * The schedule's active runs, oldest first (the overlap check and `cancel_other`): RUNNING, and
   * QUEUED for a slot of their concurrency key (they will run; an overlap policy counts them).
   */
  async activeRuns(tenantId: string, scheduleId: string): Promise<string[]> {
    return this.inTenant(tenantId, async (m) => {
      // One arm per status, each on its partial index.
      const r = await sql<{ id: string }>(
        m,
        `SELECT id FROM (
           SELECT id, created_at FROM runs WHERE tenant_id = $1 AND schedule_id = $2 AND status = 'RUNNING'
           UNION ALL
           SELECT id, created_at FROM runs WHERE tenant_id = $1 AND schedule_id = $2 AND status = 'QUEUED'
         ) a ORDER BY created_at, id`,
        [tenantId, scheduleId],
      );
      return r.rows.map((x) => x.id);
    });
  }

  /** The ids of the schedule's newest `limit` runs, newest nominal time first. */
  async recentRunIds(tenantId: string, scheduleId: string, limit: number): Promise<string[]> {
    if (!isUuid(scheduleId)) return [];
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ id: string }>(m, `SELECT id FROM runs WHERE tenant_id = $1 AND schedule_id = $2 ORDER BY nominal_time DESC, id DESC LIMIT $3`, [
        tenantId,
        scheduleId,
        Math.max(1, Math.min(100, Math.floor(limit))),
      ]);
      return r.rows.map((x) => x.id);
    });
  }

  /** The database's clock (`clock_timestamp()`), read in the tenant's transaction. */
  async dbNow(tenantId: string): Promise<Date> {
    return this.inTenant(tenantId, async (m) => (await sql<{ now: Date }>(m, `SELECT clock_timestamp() AS now`)).rows[0]!.now);
  }

  /** The name of API key `keyId` of the tenant (who paused a schedule), or null. */
  async keyName(tenantId: string, keyId: string): Promise<string | null> {
    if (!isUuid(keyId)) return null;
    return this.inTenant(
      tenantId,
      async (m) => (await sql<{ name: string }>(m, `SELECT name FROM api_keys WHERE tenant_id = $1 AND id = $2`, [tenantId, keyId])).rows[0]?.name ?? null,
    );
  }
}

function fieldParams(f: ScheduleFields): unknown[] {
  return [
    f.workflowId,
    f.version,
    f.cron,
    f.intervalSeconds,
    f.timeZone,
    JSON.stringify(f.input),
    JSON.stringify(f.config),
    f.startAt,
    f.endAt,
    f.jitterSeconds,
    f.note,
    f.overlapPolicy,
    f.catchUpSeconds,
    JSON.stringify(f.labels ?? {}),
  ];
}

/**
 * Schedule `id` locked (`FOR UPDATE`) in transaction `m`, as the scheduler's fire locks it, and the
 * database's clock read after the lock; null when the tenant has no such schedule.
 */
async function lockedRow(m: EntityManager, tenantId: string, id: string): Promise<{ current: ScheduleRow; now: Date } | null> {
  const locked = new ScheduleRepository(m);
  const current = await locked.find(tenantId, id, true);
  return current ? { current, now: await locked.dbNow(tenantId) } : null;
}

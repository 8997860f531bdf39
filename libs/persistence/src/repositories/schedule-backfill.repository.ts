import type { DataSource, EntityManager } from 'typeorm';
import { sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** One row of `schedule_backfills`: a tracked batch of a schedule's nominal times. */
export interface BackfillRow {
  tenantId: string;
  id: string;
  scheduleId: string;
  /** The range asked for, both ends inclusive. */
  fromTime: Date;
  toTime: Date;
  /** Nominal times in the range. */
  total: number;
  /** Of them, started as runs so far. */
  started: number;
  /** Of them, skipped so far (by the overlap policy, or already fired). */
  skipped: number;
  /** The next nominal time to fire; null once finished. */
  nextNominal: Date | null;
  createdAt: Date;
  finishedAt: Date | null;
}

const COLUMNS = `tenant_id AS "tenantId", id, schedule_id AS "scheduleId", from_time AS "fromTime", to_time AS "toTime", total, started,
  skipped, next_nominal AS "nextNominal", created_at AS "createdAt", finished_at AS "finishedAt"`;

/** Backfills of schedules (`schedule_backfills`). Ids that are not UUIDs read as not found. */
export class ScheduleBackfillRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /** Inserts a backfill of `total` nominal times starting at `first` (finished at once when `first` is null). */
  async insert(
    tenantId: string,
    b: { id: string; scheduleId: string; fromTime: Date; toTime: Date; total: number; first: Date | null; now: Date },
  ): Promise<BackfillRow> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<BackfillRow>(
        m,
        `INSERT INTO schedule_backfills (tenant_id, id, schedule_id, from_time, to_time, total, next_nominal, created_at, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $7::timestamptz IS NULL THEN $8::timestamptz END)
         RETURNING ${COLUMNS}`,
        [tenantId, b.id, b.scheduleId, b.fromTime, b.toTime, b.total, b.first, b.now],
      );
      return r.rows[0]!;
    });
  }

  /**
   * {@link insert}, unless the tenant holds `max` unfinished backfills already (over all its
   * schedules): then nothing is inserted and `{ full: count }` says how many it holds. Inserts of
   * one tenant are serialized by a transaction-level advisory lock, taken before the count, so
   * parallel requests cannot pass the cap.
   */
  async insertWithin(
    tenantId: string,
    max: number,
    b: { id: string; scheduleId: string; fromTime: Date; toTime: Date; total: number; first: Date | null; now: Date },
  ): Promise<{ row: BackfillRow } | { full: number }> {
    return this.inTenant(tenantId, async (m) => {
      await sql(m, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7355))`, [`weft-backfills:${tenantId}`]);
      const open = await sql<{ n: string }>(m, `SELECT count(*) AS n FROM schedule_backfills WHERE tenant_id = $1 AND finished_at IS NULL`, [tenantId]);
      const held = Number(open.rows[0]!.n);
      if (held >= max) return { full: held };
      return { row: await new ScheduleBackfillRepository(m).insert(tenantId, b) };
    });
  }

  /** The backfill, or null. */
  async find(tenantId: string, id: string): Promise<BackfillRow | null> {
    if (!isUuid(id)) return null;
    return this.inTenant(
      tenantId,
      async (m) => (await sql<BackfillRow>(m, `SELECT ${COLUMNS} FROM schedule_backfills WHERE tenant_id = $1 AND id = $2`, [tenantId, id])).rows[0] ?? null,
    );
  }

  /** The schedule's backfills, newest first, at most `limit`. */
  async ofSchedule(tenantId: string, scheduleId: string, limit: number): Promise<BackfillRow[]> {
    if (!isUuid(scheduleId)) return [];
    return this.inTenant(
      tenantId,
      async (m) =>
        (
          await sql<BackfillRow>(
            m,
            `SELECT ${COLUMNS} FROM schedule_backfills WHERE tenant_id = $1 AND schedule_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
            [tenantId, scheduleId, Math.max(1, Math.min(100, Math.floor(limit)))],
          )
        ).rows,
    );
  }

  /** The schedule's unfinished backfills, oldest first (they proceed one after the other). */
  async open(tenantId: string, scheduleId: string): Promise<BackfillRow[]> {
    return this.inTenant(
      tenantId,
      async (m) =>
        (
          await sql<BackfillRow>(
            m,
            `SELECT ${COLUMNS} FROM schedule_backfills WHERE tenant_id = $1 AND schedule_id = $2 AND finished_at IS NULL ORDER BY created_at, id`,
            [tenantId, scheduleId],
          )
        ).rows,
    );
  }

  /** Adds `started` and `skipped` to backfill `id`, moves it to `nextNominal`, and finishes it at `now` when that is null. */
  async advance(tenantId: string, id: string, p: { started: number; skipped: number; nextNominal: Date | null; now: Date }): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(
        m,
        `UPDATE schedule_backfills SET started = started + $3, skipped = skipped + $4, next_nominal = $5,
                finished_at = CASE WHEN $5::timestamptz IS NULL THEN $6::timestamptz END
          WHERE tenant_id = $1 AND id = $2`,
        [tenantId, id, p.started, p.skipped, p.nextNominal, p.now],
      ),
    );
  }
}

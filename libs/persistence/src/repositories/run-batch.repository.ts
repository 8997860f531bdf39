import type { DataSource, EntityManager } from 'typeorm';
import { sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { applyRunFilter, type RunFilter } from './run-filter.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** What a bulk action does to each of its runs. */
export type BatchAction = 'CANCEL' | 'RETRY' | 'PAUSE' | 'RESUME';
/** A bulk action's state: RUNNING until every item is done (COMPLETED) or it is stopped (STOPPED). */
export type BatchStatus = 'RUNNING' | 'COMPLETED' | 'STOPPED';
/** What came of one run of a bulk action. */
export type BatchOutcome = 'PENDING' | 'APPLIED' | 'SKIPPED' | 'FAILED';

/** A bulk action as stored (`run_batches`). */
export interface RunBatchRow {
  tenantId: string;
  id: string;
  action: BatchAction;
  /** The filter as given at creation (for the record: the runs were matched then). */
  filter: Record<string, unknown>;
  fromNodeId: string | null;
  reason: string | null;
  idempotencyKey: string | null;
  status: BatchStatus;
  total: number;
  applied: number;
  skipped: number;
  failed: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** One run of a bulk action (`run_batch_items`). */
export interface RunBatchItemRow {
  /** Its place in the batch, from 1. */
  seq: number;
  runId: string;
  outcome: BatchOutcome;
  error: string | null;
}

/** A new bulk action: what {@link RunBatchRepository.create} stores. */
export interface NewRunBatch {
  id: string;
  action: BatchAction;
  filter: RunFilter;
  /** The filter as given, kept with the batch. */
  filterJson: Record<string, unknown>;
  fromNodeId: string | null;
  reason: string | null;
  idempotencyKey: string | null;
  /** A test clock's reading; null: the database's clock. */
  now: Date | null;
  /** The most runs a batch may hold; more matched is {@link TooManyRuns}. */
  max: number;
}

/** The filter of a new batch matched more runs than a batch may hold. */
export class TooManyRuns extends Error {
  constructor(readonly max: number) {
    super(`the filter matches more than ${max} runs`);
    this.name = 'TooManyRuns';
  }
}

const BATCH_COLUMNS = `tenant_id AS "tenantId", id, action, filter, from_node_id AS "fromNodeId", reason, idempotency_key AS "idempotencyKey",
  status, total, applied, skipped, failed, created_at AS "createdAt", updated_at AS "updatedAt", finished_at AS "finishedAt"`;

/**
 * The bulk actions of a tenant and their runs. The runs of a batch are fixed when it is created
 * (the filter's matches then, oldest first); each is acted on once, and its outcome recorded with
 * the batch's counts in one statement.
 */
export class RunBatchRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * Creates batch `b` with the runs its filter matches now, in one transaction; returns it, or the
   * tenant's batch with the same idempotency key (`created` false) without matching anything.
   * @throws TooManyRuns when the filter matches more than `b.max` runs (nothing is written)
   */
  async create(tenantId: string, b: NewRunBatch): Promise<{ batch: RunBatchRow; created: boolean }> {
    return this.inTenant(tenantId, async (m) => {
      if (b.idempotencyKey !== null) {
        const found = await this.byKey(m, tenantId, b.idempotencyKey);
        if (found) return { batch: found, created: false };
      }
      const inserted = await sql<RunBatchRow>(
        m,
        `INSERT INTO run_batches (tenant_id, id, action, filter, from_node_id, reason, idempotency_key, status, total, created_at, updated_at, next_at)
         SELECT $1, $2, $3, $4::jsonb, $5, $6, $7, 'RUNNING', 0, c.now, c.now, c.now FROM (SELECT COALESCE($8::timestamptz, clock_timestamp()) AS now) c
         ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
         RETURNING ${BATCH_COLUMNS}`,
        [tenantId, b.id, b.action, JSON.stringify(b.filterJson), b.fromNodeId, b.reason, b.idempotencyKey, b.now],
      );
      // The key was taken meanwhile: the batch that took it is the answer.
      if (!inserted.rows[0]) return { batch: (await this.byKey(m, tenantId, b.idempotencyKey!))!, created: false };
      const qb = m
        .createQueryBuilder()
        .select('r.id', 'id')
        .addSelect('r.created_at', 'created_at')
        .from('runs', 'r')
        .where('r.tenant_id = :tenantId', { tenantId });
      applyRunFilter(qb, b.filter);
      qb.orderBy('r.created_at')
        .addOrderBy('r.id')
        .limit(b.max + 1);
      const [matched, params] = qb.getQueryAndParameters();
      const n = params.length;
      const items = await sql<{ total: number }>(
        m,
        `WITH ins AS (
           INSERT INTO run_batch_items (tenant_id, batch_id, seq, run_id)
           SELECT $${n + 1}::uuid, $${n + 2}::uuid, row_number() OVER (ORDER BY s.created_at, s.id), s.id FROM (${matched}) s
           RETURNING 1)
         SELECT count(*)::int AS total FROM ins`,
        [...params, tenantId, b.id],
      );
      const total = items.rows[0]?.total ?? 0;
      if (total > b.max) throw new TooManyRuns(b.max);
      const r = await sql<RunBatchRow>(
        m,
        `UPDATE run_batches SET total = $3, status = CASE WHEN $3 = 0 THEN 'COMPLETED' ELSE status END,
                finished_at = CASE WHEN $3 = 0 THEN created_at END
          WHERE tenant_id = $1 AND id = $2 RETURNING ${BATCH_COLUMNS}`,
        [tenantId, b.id, total],
      );
      return { batch: r.rows[0]!, created: true };
    });
  }

  /** The batch, or null when the tenant has none with that id. */
  async get(tenantId: string, id: string): Promise<RunBatchRow | null> {
    if (!isUuid(id)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RunBatchRow>(m, `SELECT ${BATCH_COLUMNS} FROM run_batches WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
      return r.rows[0] ?? null;
    });
  }

  /** At most `first` batches of the tenant, newest first, after the batch `after` (an id of a previous page); one more tells that more follow. */
  async list(tenantId: string, first: number, after: string | null): Promise<RunBatchRow[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RunBatchRow>(
        m,
        `SELECT ${BATCH_COLUMNS} FROM run_batches b
          WHERE tenant_id = $1
            AND ($3::uuid IS NULL OR (b.created_at, b.id) < (SELECT a.created_at, a.id FROM run_batches a WHERE a.tenant_id = $1 AND a.id = $3::uuid))
          ORDER BY created_at DESC, id DESC LIMIT $2`,
        [tenantId, first + 1, after !== null && isUuid(after) ? after : null],
      );
      return r.rows;
    });
  }

  /** At most `first` + 1 items of batch `batchId` after item `after` (a seq), in order. */
  async items(tenantId: string, batchId: string, first: number, after: number): Promise<RunBatchItemRow[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RunBatchItemRow>(
        m,
        `SELECT seq, run_id AS "runId", outcome, error FROM run_batch_items
          WHERE tenant_id = $1 AND batch_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
        [tenantId, batchId, after, first + 1],
      );
      return r.rows;
    });
  }

  /** Stops a RUNNING batch at `now` (null: the database's clock; its pending items stay PENDING); returns it, or null when the tenant has none. */
  async stop(tenantId: string, id: string, now: Date | null): Promise<RunBatchRow | null> {
    if (!isUuid(id)) return null;
    return this.inTenant(tenantId, async (m) => {
      await sql(
        m,
        `UPDATE run_batches SET status = 'STOPPED', finished_at = COALESCE($3::timestamptz, clock_timestamp()), updated_at = COALESCE($3::timestamptz, clock_timestamp())
          WHERE tenant_id = $1 AND id = $2 AND status = 'RUNNING'`,
        [tenantId, id, now],
      );
      const r = await sql<RunBatchRow>(m, `SELECT ${BATCH_COLUMNS} FROM run_batches WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
      return r.rows[0] ?? null;
    });
  }

  /** The next `limit` PENDING items of a RUNNING batch, in order; none when it is not RUNNING any more. */
  async pendingSlice(tenantId: string, batchId: string, limit: number): Promise<RunBatchItemRow[]> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<RunBatchItemRow>(
        m,
        `SELECT i.seq, i.run_id AS "runId", i.outcome, i.error FROM run_batch_items i
          WHERE i.tenant_id = $1 AND i.batch_id = $2 AND i.outcome = 'PENDING'
            AND EXISTS (SELECT 1 FROM run_batches b WHERE b.tenant_id = $1 AND b.id = $2 AND b.status = 'RUNNING')
          ORDER BY i.seq LIMIT $3`,
        [tenantId, batchId, limit],
      );
      return r.rows;
    });
  }

  /**
   * Acts on PENDING item `seq` of batch `batchId` and records what came of it, holding the batch
   * row locked (FOR NO KEY UPDATE, the lock the count's UPDATE takes anyway, so two overlapping
   * slices queue instead of deadlocking on an upgrade) from before the act until the outcome is
   * counted: a stop (an UPDATE of that row) waits for the act under way, so the counts it returns
   * are final, and an act never starts once the batch is stopped. `act` runs in its own transactions; an outcome of PENDING (a
   * transient failure) records nothing. Returns null, without calling `act`, when the batch is
   * not RUNNING; else the outcome and whether it was recorded (false: the item was not PENDING).
   */
  async actOnItem(
    tenantId: string,
    batchId: string,
    seq: number,
    now: Date | null,
    act: () => Promise<{ outcome: BatchOutcome; error: string | null }>,
  ): Promise<{ outcome: BatchOutcome; recorded: boolean } | null> {
    return this.inTenant(tenantId, async (m) => {
      const b = await sql<{ status: BatchStatus }>(m, `SELECT status FROM run_batches WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE`, [tenantId, batchId]);
      if (b.rows[0]?.status !== 'RUNNING') return null;
      const { outcome, error } = await act();
      if (outcome === 'PENDING') return { outcome, recorded: false };
      const column = outcome === 'APPLIED' ? 'applied' : outcome === 'SKIPPED' ? 'skipped' : 'failed';
      const r = await sql<{ n: number }>(
        m,
        `WITH i AS (UPDATE run_batch_items SET outcome = $4, error = $5
                     WHERE tenant_id = $1 AND batch_id = $2 AND seq = $3 AND outcome = 'PENDING' RETURNING 1),
              b AS (UPDATE run_batches SET ${column} = ${column} + 1, updated_at = COALESCE($6::timestamptz, clock_timestamp())
                     WHERE tenant_id = $1 AND id = $2 AND EXISTS (SELECT 1 FROM i) RETURNING 1)
         SELECT (SELECT count(*) FROM i)::int AS n`,
        [tenantId, batchId, seq, outcome, error, now],
      );
      return { outcome, recorded: (r.rows[0]?.n ?? 0) === 1 };
    });
  }

  /**
   * Ends a slice of batch `batchId` at `now` (null: the database's clock): COMPLETED when no item
   * is PENDING any more, else its next slice is due `pauseMs` later; the scheduler's lease ends
   * either way. Returns its status.
   */
  async endSlice(tenantId: string, batchId: string, now: Date | null, pauseMs: number): Promise<BatchStatus | null> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ status: BatchStatus }>(
        m,
        `WITH c AS (SELECT COALESCE($3::timestamptz, clock_timestamp()) AS now)
         UPDATE run_batches b
            SET claimed_until = NULL, next_at = c.now + $4 * interval '1 millisecond', updated_at = c.now,
                status = CASE WHEN b.status = 'RUNNING' AND NOT EXISTS (SELECT 1 FROM run_batch_items i
                                WHERE i.tenant_id = $1 AND i.batch_id = $2 AND i.outcome = 'PENDING') THEN 'COMPLETED' ELSE b.status END,
                finished_at = CASE WHEN b.status = 'RUNNING' AND NOT EXISTS (SELECT 1 FROM run_batch_items i
                                WHERE i.tenant_id = $1 AND i.batch_id = $2 AND i.outcome = 'PENDING') THEN c.now ELSE b.finished_at END
           FROM c
          WHERE b.tenant_id = $1 AND b.id = $2 RETURNING b.status`,
        [tenantId, batchId, now, pauseMs],
      );
      return r.rows[0]?.status ?? null;
    });
  }

  /** True when run `runId`'s history holds an event of batch `batchId` (the item was acted on, its outcome not yet recorded). */
  async actedOn(tenantId: string, runId: string, batchId: string): Promise<boolean> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `SELECT 1 FROM run_events WHERE tenant_id = $1 AND run_id = $2 AND payload->>'batchId' = $3 LIMIT 1`, [tenantId, runId, batchId]);
      return r.rowCount === 1;
    });
  }

  private async byKey(m: EntityManager, tenantId: string, key: string): Promise<RunBatchRow | null> {
    const r = await sql<RunBatchRow>(m, `SELECT ${BATCH_COLUMNS} FROM run_batches WHERE tenant_id = $1 AND idempotency_key = $2`, [tenantId, key]);
    return r.rows[0] ?? null;
  }
}

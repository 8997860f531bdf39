import type { DataSource, EntityManager } from 'typeorm';
import { jsonb, sql } from '../sql.js';
import type { Json } from '../json.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** What a run holds in buffered signals, and what one more would add. */
export interface SignalBuffer {
  /** Signals of the run not consumed yet. */
  count: number;
  /** Bytes of their payloads' JSON text as stored (`octet_length(payload::text)`, a missing payload counts as `null`). */
  bytes: number;
  /** Bytes the given payload would take, measured the same way. */
  incomingBytes: number;
}

/**
 * The buffered signals of a run (`signals` rows with `consumed_at IS NULL`, which the partial
 * index `signals_pending` covers): their size, the oldest by name, and the writes of the actions
 * that buffer and consume them (the coordinator's, inside the event's transaction).
 */
export class SignalRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * The run's unconsumed signals, counted and measured in bytes of their stored JSON text, with
   * the size `payload` (undefined: JSON `null`) would take once stored. The coordinator calls it
   * with the run row locked, so no other signal of the run is written meanwhile.
   */
  async bufferOfRun(tenantId: string, runId: string, payload: unknown): Promise<SignalBuffer> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ count: number; bytes: string; incoming_bytes: number }>(
        m,
        `SELECT count(*)::int AS count, COALESCE(sum(octet_length(payload::text)), 0)::bigint AS bytes,
                octet_length(COALESCE($3::jsonb, 'null'::jsonb)::text) AS incoming_bytes
           FROM signals WHERE tenant_id = $1 AND run_id = $2 AND consumed_at IS NULL`,
        [tenantId, runId, jsonb(payload ?? null)],
      );
      const row = r.rows[0]!;
      return { count: row.count, bytes: Number(row.bytes), incomingBytes: row.incoming_bytes };
    });
  }

  /**
   * The oldest unconsumed signal `name` of run `runId` (ids are UUIDv7, so by id is by age) that
   * is not one of `handedOut` (signals this event already handed to a node, whose consumption is
   * written only after the machine returns).
   */
  async oldestPending(tenantId: string, runId: string, name: string, handedOut: readonly string[]): Promise<{ id: string; payload: Json | null } | undefined> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ id: string; payload: Json | null }>(
        m,
        `SELECT id, payload FROM signals
          WHERE tenant_id = $1 AND run_id = $2 AND name = $3 AND consumed_at IS NULL AND NOT (id = ANY($4::uuid[]))
          ORDER BY id LIMIT 1`,
        [tenantId, runId, name, handedOut],
      );
      return r.rows[0];
    });
  }

  /** Buffers signal `id` (`name`, `payload`) for run `runId`, received at `now`. */
  async buffer(tenantId: string, runId: string, id: string, name: string, payload: Json | undefined, now: Date): Promise<void> {
    await this.inTenant(tenantId, (m) =>
      sql(m, `INSERT INTO signals (tenant_id, id, run_id, name, payload, created_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`, [
        tenantId,
        id,
        runId,
        name,
        jsonb(payload),
        now,
      ]),
    );
  }

  /** Marks unconsumed signal `signalId` consumed by task `taskId` at `now`; returns the rows changed (0 or 1). */
  async consume(tenantId: string, signalId: string, taskId: string, now: Date): Promise<number> {
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `UPDATE signals SET consumed_at = $3, consumed_by_task_id = $4 WHERE tenant_id = $1 AND id = $2 AND consumed_at IS NULL`, [
        tenantId,
        signalId,
        now,
        taskId,
      ]);
      return r.rowCount;
    });
  }
}

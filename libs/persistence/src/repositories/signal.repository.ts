import type { DataSource, EntityManager } from 'typeorm';
import { jsonb, sql } from '../sql.js';
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
 * index `signals_pending` covers). Reads only: signal rows are written by the coordinator alone.
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
}

import type { DataSource } from 'typeorm';
import { mapDriverError } from './errors.js';

/** One queue's active worker tasks across tenants, as `weft_queue_stats` counts them. */
export interface QueueStats {
  queue: string;
  /** Tasks due and not yet running (their attempt's `not_before` passed). */
  backlog: number;
  /** Tasks not running and not due yet (a retry's backoff). */
  delayed: number;
  running: number;
  /** How long the longest-waiting due task has been due, ms of the database's clock; null without backlog. */
  oldestWaitMs: number | null;
}

/** Outbox rows committed and not yet enqueued on Bull, across tenants. */
export interface OutboxStats {
  unsent: number;
  /** Age of the oldest one, ms of the database's clock; null when there is none. */
  oldestAgeMs: number | null;
}

/** The runtime pool's connections: open in all, idle, and callers waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/**
 * Every queue with active worker tasks, across tenants (no tenant's ids or data: counts and times
 * only); `now` null is the database's clock. @throws the mapped driver error.
 */
export async function queueStats(ds: DataSource, now: Date | null = null): Promise<QueueStats[]> {
  const rows = await query<{ queue: string; backlog: string; delayed: string; running: string; oldest_wait_ms: number | null }>(
    ds,
    'SELECT * FROM weft_queue_stats($1)',
    [now],
  );
  return rows.map((r) => ({
    queue: r.queue,
    backlog: Number(r.backlog),
    delayed: Number(r.delayed),
    running: Number(r.running),
    oldestWaitMs: r.oldest_wait_ms,
  }));
}

/** The outbox's unsent rows across tenants. @throws the mapped driver error. */
export async function outboxStats(ds: DataSource): Promise<OutboxStats> {
  const [row] = await query<{ unsent: string; oldest_age_ms: number | null }>(ds, 'SELECT * FROM weft_outbox_stats()', []);
  return { unsent: Number(row?.unsent ?? 0), oldestAgeMs: row?.oldest_age_ms ?? null };
}

/** The node-postgres pool under `ds` (TypeORM keeps it as the driver's `master`). */
export function poolStats(ds: DataSource): PoolStats {
  const pool = (ds.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number; options?: { max?: number } } }).master;
  return { total: pool?.totalCount ?? 0, idle: pool?.idleCount ?? 0, waiting: pool?.waitingCount ?? 0, max: pool?.options?.max ?? 0 };
}

async function query<R>(ds: DataSource, text: string, params: unknown[]): Promise<R[]> {
  try {
    return (await ds.query(text, params)) as R[];
  } catch (err) {
    throw mapDriverError(err);
  }
}

import type { DataSource } from 'typeorm';
import { mapDriverError } from '../errors.js';

/** What a worker process says about itself when it registers. */
export interface WorkerIdentity {
  /** UUIDv7 chosen by the worker at start. */
  id: string;
  host: string;
  pid: number;
  /** The Weft version the worker runs. */
  version: string;
  /** The queues it consumes, lower case. */
  queues: string[];
  /** Jobs it runs at once per queue. */
  concurrency: number;
}

/** A row of `workers`: a worker as it registered, with the times the database recorded. */
export interface WorkerRecord extends WorkerIdentity {
  /** When it first registered, on the database's clock. */
  startedAt: Date;
  lastHeartbeatAt: Date;
  /** Its last heartbeat plus three heartbeat intervals: past it, the worker counts as gone. */
  expiresAt: Date;
  /** When it began draining (stopped taking jobs on SIGTERM); null while it takes jobs. */
  drainingSince: Date | null;
}

/** How many heartbeat intervals may be missed before a worker counts as gone. */
export const WORKER_MISSED_HEARTBEATS = 3;

const COLUMNS = `id, host, pid, version, queues, concurrency, started_at AS "startedAt", last_heartbeat_at AS "lastHeartbeatAt",
  expires_at AS "expiresAt", draining_since AS "drainingSince"`;

/**
 * The worker registry (`workers`): not tenant data, so no tenant transaction; each method is one
 * statement in its own implicit transaction on the runtime role, which may insert and delete rows
 * and move only `last_heartbeat_at`, `expires_at` and `draining_since`. Every time is the
 * database's clock (`clock_timestamp()`), so a worker whose clock is off is still judged right.
 * Driver errors are mapped by {@link mapDriverError}.
 */
export class WorkerRegistryRepository {
  constructor(private readonly ds: DataSource) {}

  /**
   * Registers `w` or, when its row exists, records a heartbeat: `last_heartbeat_at` = now and
   * `expires_at` = now + {@link WORKER_MISSED_HEARTBEATS} × `heartbeatMs`. A row pruned meanwhile
   * (the worker was unreachable for long) is inserted again with `startedAt` (default now).
   * Returns the row as stored.
   */
  async heartbeat(w: WorkerIdentity, heartbeatMs: number, startedAt: Date | null = null): Promise<WorkerRecord> {
    const [row] = await this.query<WorkerRecord>(
      `INSERT INTO workers (id, host, pid, version, queues, concurrency, started_at, last_heartbeat_at, expires_at)
       SELECT $1::uuid, $2::text, $3::int, $4::text, $5::text[], $6::int, COALESCE($7::timestamptz, now), now, now + $8::int * $9::int * interval '1 millisecond'
         FROM (SELECT clock_timestamp() AS now) c
       ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = EXCLUDED.last_heartbeat_at, expires_at = EXCLUDED.expires_at
       RETURNING ${COLUMNS}`,
      [w.id, w.host, w.pid, w.version, w.queues, w.concurrency, startedAt, WORKER_MISSED_HEARTBEATS, heartbeatMs],
    );
    return row!;
  }

  /** Records that worker `id` began draining (the first time only); false when it has no row. */
  async markDraining(id: string): Promise<boolean> {
    const rows = await this.query(`UPDATE workers SET draining_since = COALESCE(draining_since, clock_timestamp()) WHERE id = $1 RETURNING id`, [id]);
    return rows.length === 1;
  }

  /** Removes worker `id` (it stopped cleanly); false when it had no row. */
  async deregister(id: string): Promise<boolean> {
    const rows = await this.query(`DELETE FROM workers WHERE id = $1 RETURNING id`, [id]);
    return rows.length === 1;
  }

  /** Deletes the rows of workers gone for longer than `goneForMs` (past `expires_at` by that much); returns how many. */
  async prune(goneForMs: number): Promise<number> {
    const rows = await this.query(`DELETE FROM workers WHERE expires_at < clock_timestamp() - $1::int * interval '1 millisecond' RETURNING id`, [goneForMs]);
    return rows.length;
  }

  /** The live workers (`expires_at` after now), oldest first (by `started_at`, then id). */
  async live(): Promise<WorkerRecord[]> {
    return this.query<WorkerRecord>(`SELECT ${COLUMNS} FROM workers WHERE expires_at > clock_timestamp() ORDER BY started_at, id`, []);
  }

  private async query<R>(text: string, params: unknown[]): Promise<R[]> {
    let res: unknown;
    try {
      res = await this.ds.query(text, params);
    } catch (err) {
      throw mapDriverError(err);
    }
    // TypeORM answers an UPDATE or DELETE with [rows, count]; anything else with the rows.
    if (Array.isArray(res) && res.length === 2 && Array.isArray(res[0]) && typeof res[1] === 'number') return res[0] as R[];
    return res as R[];
  }
}

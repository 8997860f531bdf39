import type { DataSource } from 'typeorm';
import { callDefiner } from './claims.js';

/**
 * Fair dispatch across tenants: the calls of the fair-dispatch migration's SECURITY DEFINER
 * functions, which alone see every tenant's backlog. Each is one statement in its own implicit
 * transaction; driver errors are mapped by {@link mapDriverError}.
 */

/** One backlog row admitted by {@link dispatchBacklog}: its task is now PENDING; its job is the caller's to enqueue. */
export interface AdmittedAttempt {
  tenantId: string;
  taskId: string;
  attempt: number;
  /** `outbox.id` (bigint, as a string). */
  outboxId: string;
  /** Why it waited: the last limit that held it, else `QUEUE_BACKLOG`. */
  reason: string;
  /** How long it waited since it was ready (its backlog row's creation or due time), ms. */
  waitedMs: number;
  /** Its tenant came back from idle: its job goes ahead of the jobs already waiting on the queue. */
  ahead: boolean;
}

/** What one dispatch pass of a queue did. */
export interface DispatchPass {
  /** The attempts admitted, in fair order. */
  admitted: AdmittedAttempt[];
  /** The reasons of the rows it held (`CONCURRENCY_LIMIT`, `RATE_LIMIT`), one per row. */
  held: string[];
  /** The earliest time a held row of the queue is due to be looked at again, or null when none is held. */
  nextAt: Date | null;
  /** The database's clock when the pass ran (or the test clock). */
  dbNow: Date;
}

/**
 * Admits up to `max` ready backlog rows of `queue`, in fair order, within the queue's free window:
 * the live workers' slots on it (at least `windowFloor`) less its attempts already dispatched and
 * not yet claimed. Admitted tasks become PENDING with a dispatch lease of `leaseMs`; rows a node
 * limit blocks are held. `now`: null in production (the database's clock), a Date in tests.
 */
export async function dispatchBacklog(
  ds: DataSource,
  opts: { queue: string; now: Date | null; max: number; windowFloor: number; leaseMs: number },
): Promise<DispatchPass> {
  const rows = await callDefiner<{
    kind: 'admitted' | 'held' | 'end';
    tenant_id: string;
    task_id: string;
    attempt: number;
    outbox_id: string;
    reason: string;
    waited_ms: number;
    ahead: boolean;
    next_at: Date | null;
    db_now: Date;
  }>(ds, 'SELECT * FROM weft_dispatch($1, $2, $3, $4, $5)', [opts.queue, opts.now, opts.max, opts.windowFloor, opts.leaseMs]);
  const pass: DispatchPass = { admitted: [], held: [], nextAt: null, dbNow: opts.now ?? new Date() };
  for (const r of rows) {
    if (r.kind === 'end') Object.assign(pass, { nextAt: r.next_at, dbNow: r.db_now });
    else if (r.kind === 'held') pass.held.push(r.reason);
    else
      pass.admitted.push({
        tenantId: r.tenant_id,
        taskId: r.task_id,
        attempt: r.attempt,
        outboxId: String(r.outbox_id),
        reason: r.reason,
        waitedMs: Number(r.waited_ms),
        ahead: r.ahead === true,
      });
  }
  return pass;
}

/** The queues with a backlog row that is ready or whose hold is over at `now` (null: the database's clock). */
export async function backlogQueues(ds: DataSource, now: Date | null): Promise<string[]> {
  const rows = await callDefiner<{ queue: string }>(ds, 'SELECT queue FROM weft_backlog_queues($1)', [now]);
  return rows.map((r) => r.queue);
}

/** Deletes the rate-limit starts older than `before` (no window is longer than a day); returns how many. */
export async function pruneRateStarts(ds: DataSource, before: Date): Promise<number> {
  const rows = await callDefiner<{ n: number }>(ds, 'SELECT weft_prune_rate_starts($1) AS n', [before]);
  return rows[0]?.n ?? 0;
}

/**
 * Deletes up to `max` concurrency groups last admitted to before `before` that have no RUNNING
 * or QUEUED run (a later start of their key creates the row again); returns how many.
 */
export async function pruneConcurrencyGroups(ds: DataSource, before: Date, max: number): Promise<number> {
  const rows = await callDefiner<{ n: number }>(ds, 'SELECT weft_prune_concurrency_groups($1, $2) AS n', [before, max]);
  return rows[0]?.n ?? 0;
}

/** A concurrency group with QUEUED runs and a free slot: a promotion its runs' ends missed. */
export interface StalledGroup {
  tenantId: string;
  groupKey: string;
}

/** Every tenant's concurrency groups that have QUEUED runs and fewer RUNNING ones than their limit. */
export async function stalledGroups(ds: DataSource): Promise<StalledGroup[]> {
  const rows = await callDefiner<{ tenant_id: string; group_key: string }>(ds, 'SELECT * FROM weft_stalled_groups()', []);
  return rows.map((r) => ({ tenantId: r.tenant_id, groupKey: r.group_key }));
}

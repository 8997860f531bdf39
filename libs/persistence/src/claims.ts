import type { DataSource, EntityManager } from 'typeorm';
import { mapDriverError } from './errors.js';
import { sqlOutsideTenant } from './tenant-transaction.js';

/**
 * The cross-tenant claims: the only way the runtime role reaches rows of
 * every tenant. Each calls one SECURITY DEFINER function of the row-level-security migration,
 * which runs as the NOLOGIN role `weft_claimer`, marks what it claims (so other scheduler
 * replicas skip it) and returns ids only; the caller then handles each item inside its tenant's
 * transaction ({@link withTenant}). Every call is one statement in its own implicit transaction.
 * Driver errors are mapped by {@link mapDriverError}.
 */

/** A WAITING task whose timer is due, claimed by moving its `wake_at` to the lease end. */
export interface ClaimedTimer {
  tenantId: string;
  taskId: string;
  runId: string;
  nodeId: string;
  /** When the timer was due (its `wake_at` before the claim moved it), on the database's clock. */
  dueAt: Date;
  /** When it was claimed (the claim's now): `claimedAt - dueAt` is how late the scheduler took it. */
  claimedAt: Date;
}

/** An active run whose deadline passed, claimed by moving its `deadline_lease` ahead. */
export interface ClaimedDeadline {
  tenantId: string;
  runId: string;
  /** The run's deadline, on the database's clock. */
  dueAt: Date;
  /** The claim's now: `claimedAt - dueAt` is how late the scheduler took it. */
  claimedAt: Date;
}

/**
 * Claims up to `limit` active runs whose deadline passed (`deadline_at <= now`), earliest first,
 * skipping rows another transaction holds (a run's event, another replica's claim) or another
 * replica leased, and leases them for `leaseMs`, so they are claimed again only if the caller
 * dies before applying the time-out. `now`: as {@link claimDueTimers}.
 */
export async function claimDueDeadlines(ds: DataSource, now: Date | null, limit: number, leaseMs: number): Promise<ClaimedDeadline[]> {
  const rows = await callDefiner<{ tenant_id: string; run_id: string; due_at: Date; claimed_at: Date }>(
    ds,
    `SELECT * FROM weft_claim_due_deadlines($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`,
    [now, limit, leaseMs],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, runId: r.run_id, dueAt: r.due_at, claimedAt: r.claimed_at }));
}

/** A task attempt no worker started by its `schedule_to_start_seconds`, claimed by leasing its backlog row's `start_by`. */
export interface ClaimedStartDeadline {
  tenantId: string;
  runId: string;
  taskId: string;
  nodeId: string;
  /** The attempt (0-based) whose deadline passed. */
  attempt: number;
}

/**
 * Claims up to `limit` task attempts still waiting for a worker (QUEUED or PENDING at that
 * attempt) past their schedule-to-start deadline, earliest first, and leases them for
 * `leaseMs`; on the way, voids the deadlines of rows whose attempt started or moved on. Rows of
 * paused runs are left alone. `now`: as {@link claimDueTimers}.
 */
export async function claimStartDeadlines(ds: DataSource, now: Date | null, limit: number, leaseMs: number): Promise<ClaimedStartDeadline[]> {
  const rows = await callDefiner<{ tenant_id: string; run_id: string; task_id: string; node_id: string; attempt: number }>(
    ds,
    `SELECT * FROM weft_claim_start_deadlines($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`,
    [now, limit, leaseMs],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, runId: r.run_id, taskId: r.task_id, nodeId: r.node_id, attempt: r.attempt }));
}

/**
 * Claims up to `limit` RUNNING bulk actions whose next slice is due and whose lease ended, and
 * leases them for `leaseMs`. `now`: as {@link claimDueTimers}.
 */
export async function claimRunBatches(ds: DataSource, now: Date | null, limit: number, leaseMs: number): Promise<Array<{ tenantId: string; batchId: string }>> {
  const rows = await callDefiner<{ tenant_id: string; batch_id: string }>(
    ds,
    `SELECT * FROM weft_claim_run_batches($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`,
    [now, limit, leaseMs],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, batchId: r.batch_id }));
}

/**
 * Claims up to `limit` PENDING webhook deliveries that are due, earliest first, skipping rows
 * another replica holds, and leases them for `leaseMs` (their `next_attempt_at` moves to the
 * lease end, so a sender that dies mid-attempt leaves them to be claimed again then). `now`: as
 * {@link claimDueTimers}.
 */
export async function claimWebhookDeliveries(
  ds: DataSource,
  now: Date | null,
  limit: number,
  leaseMs: number,
): Promise<Array<{ tenantId: string; deliveryId: string }>> {
  const rows = await callDefiner<{ tenant_id: string; delivery_id: string }>(
    ds,
    `SELECT * FROM weft_claim_webhook_deliveries($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`,
    [now, limit, leaseMs],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, deliveryId: r.delivery_id }));
}

/** An outbox row (one task attempt to enqueue), claimed by the outbox relay. */
export interface ClaimedOutboxRow {
  /** `outbox.id` (bigint, as a string). */
  outboxId: string;
  tenantId: string;
  taskId: string;
  attempt: number;
}

/** An active API key whose display prefix matched: the raw key must still be compared with `keyHash`. */
export interface ApiKeyCandidate {
  tenantId: string;
  keyId: string;
  role: string;
  /** SHA-256 hex of the raw key. */
  keyHash: string;
}

/** Runs one call of a cross-tenant function, its driver errors mapped. */
export async function callDefiner<R>(ds: DataSource | EntityManager, query: string, params: unknown[]): Promise<R[]> {
  try {
    return (await ds.query(query, params)) as R[];
  } catch (err) {
    throw mapDriverError(err);
  }
}

/**
 * Claims up to `limit` WAITING tasks with `wake_at <= now`, oldest first, skipping rows another
 * replica holds, and moves their `wake_at` to the lease end, so they fire again only if the
 * caller dies before applying TimerFired.
 *
 * `now`: `null` (production) compares with the database's `now()`; a Date (tests with a fake
 * clock) is used as given. `lease`: the lease end as a Date, or its length in milliseconds after
 * that now.
 */
export async function claimDueTimers(ds: DataSource, now: Date | null, limit: number, lease: Date | number): Promise<ClaimedTimer[]> {
  const rows = await callDefiner<{ tenant_id: string; task_id: string; run_id: string; node_id: string; due_at: Date; claimed_at: Date }>(
    ds,
    typeof lease === 'number'
      ? `SELECT * FROM weft_claim_due_timers($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`
      : 'SELECT * FROM weft_claim_due_timers($1, $2, $3)',
    [now, limit, lease],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, taskId: r.task_id, runId: r.run_id, nodeId: r.node_id, dueAt: r.due_at, claimedAt: r.claimed_at }));
}

/**
 * Claims up to `limit` outbox rows not yet enqueued, at least `graceMs` old (the grace period
 * after commit, in which the committing process enqueues them itself), unclaimed or claimed at
 * least `leaseMs` ago (an expired relay lease); sets their `claimed_at` to now. Oldest first.
 * `now`: `null` (production) is the database's `now()`; a Date (tests) is used as given.
 */
export async function claimOutbox(ds: DataSource, opts: { now: Date | null; graceMs: number; leaseMs: number; limit: number }): Promise<ClaimedOutboxRow[]> {
  const rows = await callDefiner<OutboxIdRow>(
    ds,
    `SELECT * FROM weft_claim_outbox(COALESCE($1::timestamptz, now()) - $2 * interval '1 millisecond',
                                     COALESCE($1::timestamptz, now()) - $3 * interval '1 millisecond', $4, $1)`,
    [opts.now, opts.graceMs, opts.leaseMs, opts.limit],
  );
  return rows.map(outboxRow);
}

/** A worker task whose lease expired, claimed by the lease sweep (its lease moved ahead). */
export interface ClaimedLostTask {
  tenantId: string;
  taskId: string;
  runId: string;
  /** The task's current attempt when claimed. */
  attempt: number;
}

/**
 * Claims up to `limit` PENDING/QUEUED/RUNNING worker tasks whose lease (`lease_expires_at`)
 * expired at `now`, earliest expiry first, skipping rows another replica holds, and moves their
 * lease `leaseMs` past now — so other scheduler replicas skip them, and a task whose job turns
 * out to be live is not looked at again before then. `now`: `null` (production) is the
 * database's `now()`; a Date (tests) is used as given.
 */
export async function claimLostTasks(ds: DataSource, opts: { now: Date | null; limit: number; leaseMs: number }): Promise<ClaimedLostTask[]> {
  const rows = await callDefiner<{ tenant_id: string; task_id: string; run_id: string; attempt: number }>(
    ds,
    `SELECT * FROM weft_claim_lost_tasks($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`,
    [opts.now, opts.limit, opts.leaseMs],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, taskId: r.task_id, runId: r.run_id, attempt: r.attempt }));
}

/** A schedule with work to do (a fire due, buffered fires or a backfill that may proceed), claimed by the scheduler. */
export interface ClaimedSchedule {
  tenantId: string;
  scheduleId: string;
  /** When its next fire was due (null when it was claimed for buffered fires or a backfill). */
  dueAt: Date | null;
  /** The claim's now. */
  claimedAt: Date;
  /** Its place among its tenant's schedules with work, by due time: 1 for the earliest. */
  turn: number;
}

/**
 * Claims up to `limit` unpaused schedules with work round-robin by tenant (every tenant's
 * earliest due first, then every tenant's second…; by due time within a turn), skipping rows
 * another replica holds or still has claimed, and sets their claim lease (`claimed_until`) to
 * `lease` after now, so another replica skips them until the claimer has saved them (which ends
 * the claim) or died. Returns them in that order. `now`: `null` (production) is the database's
 * `now()`; a Date (tests) is used as given. `lease`: a Date, or its length in milliseconds after
 * that now.
 */
export async function claimDueSchedules(ds: DataSource, now: Date | null, limit: number, lease: Date | number): Promise<ClaimedSchedule[]> {
  const rows = await callDefiner<{ tenant_id: string; schedule_id: string; due_at: Date | null; claimed_at: Date; turn: string }>(
    ds,
    typeof lease === 'number'
      ? `SELECT * FROM weft_claim_due_schedules($1, $2, COALESCE($1::timestamptz, now()) + $3 * interval '1 millisecond')`
      : 'SELECT * FROM weft_claim_due_schedules($1, $2, $3)',
    [now, limit, lease],
  );
  const claimed = rows.map((r) => ({ tenantId: r.tenant_id, scheduleId: r.schedule_id, dueAt: r.due_at, claimedAt: r.claimed_at, turn: Number(r.turn) }));
  const due = (c: ClaimedSchedule) => c.dueAt?.getTime() ?? Infinity;
  return claimed.sort((a, b) => a.turn - b.turn || due(a) - due(b));
}

/**
 * The active API keys (at most 16) whose display prefix is `prefix`, across tenants. Sent as a
 * named prepared statement ({@link sqlOutsideTenant}): every request that is not answered from the
 * API's key cache runs it.
 */
export async function apiKeyCandidates(ds: DataSource | EntityManager, prefix: string): Promise<ApiKeyCandidate[]> {
  const { rows } = await sqlOutsideTenant<{ tenant_id: string; key_id: string; role: string; key_hash: string }>(
    ds,
    'SELECT tenant_id, key_id, role, key_hash FROM weft_api_key_candidates($1)',
    [prefix],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, keyId: r.key_id, role: r.role, keyHash: r.key_hash }));
}

/**
 * Groups items by their tenant, keeping each tenant's items in their original order, and tenants
 * in the order they first appear — for handling claimed items one tenant transaction at a time.
 */
export function byTenant<T extends { tenantId: string }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.tenantId);
    if (group) group.push(item);
    else groups.set(item.tenantId, [item]);
  }
  return groups;
}

interface OutboxIdRow {
  outbox_id: string;
  tenant_id: string;
  task_id: string;
  attempt: number;
}

function outboxRow(r: OutboxIdRow): ClaimedOutboxRow {
  return { outboxId: String(r.outbox_id), tenantId: r.tenant_id, taskId: r.task_id, attempt: r.attempt };
}

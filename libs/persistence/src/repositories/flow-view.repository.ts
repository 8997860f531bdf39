import type { DataSource, EntityManager } from 'typeorm';
import { CONCURRENCY_KEYS_PAGE_DEFAULT, CONCURRENCY_KEYS_PAGE_MAX, RATE_LIMITS_MAX } from '@weft/contract';
import { InvalidCursorError } from '../errors.js';
import { sql } from '../sql.js';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** Why a QUEUED run waits: the group it waits for a slot of, as its tenant sees it. */
export interface RunWait {
  /** The run's concurrency key as resolved (`runs.concurrency_key`); `""` for a workflow's one group. */
  key: string;
  /** The group's run limit (`concurrency_groups.run_limit`); null when the group has no row yet. */
  limit: number | null;
  /** The group's RUNNING runs. */
  active: number;
  /** The group's QUEUED runs, this one included. */
  queued: number;
}

/** The backlog row of a QUEUED task's current attempt: its queue and its hold, if any. */
export interface TaskWait {
  queue: string;
  /** `BACKOFF`, `CONCURRENCY_LIMIT`, `RATE_LIMIT`, or null for a row ready to be admitted. */
  holdReason: string | null;
  /** The hold's sentence (`rate limit "partner" 20 per 1 s, next start 12:00:01.250Z`); null without a hold. */
  holdDetail: string | null;
  heldUntil: Date | null;
  /** For a RATE_LIMIT hold: its key's window as it stands now (the stored sentence is the pass's, and ages). */
  rate?: RateWindowNow;
}

/** A rate key's window at the database's clock now. */
export interface RateWindowNow {
  key: string;
  limit: number;
  perSeconds: number;
  /** Attempts admitted (PENDING) and not started yet: they take their places in the window. */
  admitted: number;
  /** When the window has a place for one more start; null while admitted attempts fill it. */
  nextStartAt: Date | null;
}

/** One concurrency group of a tenant with its slots in use. */
export interface ConcurrencyKeyRow {
  scope: string;
  /** The workflow of a `workflow`-scoped group; null for a `tenant`-scoped one. */
  workflowId: string | null;
  key: string;
  limit: number;
  /** RUNNING runs of the group. */
  active: number;
  /** QUEUED runs of the group. */
  queued: number;
}

/** A page of {@link ConcurrencyKeyRow}s, Relay style. */
export interface ConcurrencyKeyPage {
  edges: { cursor: string; node: ConcurrencyKeyRow }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** One rate key of a tenant: its limit, its sliding window and the attempts it holds back. */
export interface RateLimitRow {
  key: string;
  /** From the most recent task with the key (started or held); null when no such task is left. */
  limit: number | null;
  perSeconds: number | null;
  /** Starts of the key within the last `perSeconds` seconds of the database's clock. */
  startedInWindow: number;
  /** Backlog rows held `RATE_LIMIT` on the key. */
  held: number;
  /** The earliest `held_until` of those; null when none is held. */
  nextStartAt: Date | null;
}

/**
 * Default and largest page size of {@link FlowViewRepository.concurrencyKeys} (larger requests are
 * refused by the API), and the most rate keys {@link FlowViewRepository.rateLimits} returns.
 */
export { CONCURRENCY_KEYS_PAGE_DEFAULT, CONCURRENCY_KEYS_PAGE_MAX, RATE_LIMITS_MAX };

/** A concurrency keys cursor: base64url of the JSON `[key, group_key]` of the last row of a page. */
function encodeKeyCursor(key: string, groupKey: string): string {
  return Buffer.from(JSON.stringify([key, groupKey]), 'utf8').toString('base64url');
}

function decodeKeyCursor(cursor: string): [string, string] {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // A NUL character can be in no stored key (PostgreSQL text refuses it): a forged cursor.
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && !`${v[0]}${v[1]}`.includes('\u0000')) return [v[0], v[1]];
  } catch {
    // not JSON: refused below
  }
  throw new InvalidCursorError();
}

/**
 * Flow control as a tenant sees it: why its runs and tasks wait, its concurrency groups and its
 * rate keys. Every query runs in the tenant's transaction (row-level security holds it to its
 * own rows) and counts only its own runs, tasks and starts: nothing of another tenant's backlog
 * is read. Writes belong to the coordinator and to `weft_dispatch`.
 */
export class FlowViewRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * For each of `runIds` that is QUEUED in a concurrency group: its key, the group's limit and
   * its active and queued runs. Runs that are not QUEUED, have no group or are not the
   * tenant's are absent. One statement (index `runs_concurrency_groups` for the counts).
   */
  async runWaits(tenantId: string, runIds: readonly string[]): Promise<Map<string, RunWait>> {
    const ids = [...new Set(runIds.filter(isUuid))];
    if (!ids.length) return new Map();
    const r = await this.inTenant(tenantId, (m) =>
      sql<{ id: string; key: string | null; limit: number | null; active: string; queued: string }>(
        m,
        `SELECT r.id, r.concurrency_key AS key, g.run_limit AS limit,
                (SELECT count(*) FROM runs a WHERE a.tenant_id = $1 AND a.concurrency_group = r.concurrency_group AND a.status = 'RUNNING') AS active,
                (SELECT count(*) FROM runs q WHERE q.tenant_id = $1 AND q.concurrency_group = r.concurrency_group AND q.status = 'QUEUED') AS queued
           FROM runs r
           LEFT JOIN concurrency_groups g ON g.tenant_id = r.tenant_id AND g.group_key = r.concurrency_group
          WHERE r.tenant_id = $1 AND r.id = ANY($2::uuid[]) AND r.status = 'QUEUED' AND r.concurrency_group IS NOT NULL`,
        [tenantId, ids],
      ),
    );
    return new Map(r.rows.map((row) => [row.id, { key: row.key ?? '', limit: row.limit, active: Number(row.active), queued: Number(row.queued) }]));
  }

  /**
   * For each of `taskIds` that is QUEUED: the backlog row of its current attempt (not admitted
   * yet), with its hold. Other tasks, and a QUEUED task whose row is gone, are absent.
   */
  async taskWaits(tenantId: string, taskIds: readonly string[]): Promise<Map<string, TaskWait>> {
    const ids = [...new Set(taskIds.filter(isUuid))];
    if (!ids.length) return new Map();
    const r = await this.inTenant(tenantId, (m) =>
      sql<{
        task_id: string;
        queue: string;
        hold_reason: string | null;
        hold_detail: string | null;
        held_until: Date | null;
        rate_key: string | null;
        rate_limit: number | null;
        per_seconds: number | null;
        admitted: number | null;
        edge: Date | null;
        now: Date;
      }>(
        m,
        // A RATE_LIMIT hold's window is read live: the next start is when the start that leaves a
        // place for one more (the admitted ones counted as starts to come) leaves the window.
        `SELECT w.*, r.admitted, r.edge, now() AS now FROM (
           SELECT DISTINCT ON (t.id) t.id AS task_id, o.queue, o.hold_reason, o.hold_detail, o.held_until,
                  CASE WHEN o.hold_reason = 'RATE_LIMIT' THEN t.flow_rate_key END AS rate_key, t.flow_rate_limit AS rate_limit, t.flow_rate_per_seconds AS per_seconds
             FROM tasks t
             JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.attempt = t.attempt AND o.enqueued_at IS NULL
            WHERE t.tenant_id = $1 AND t.id = ANY($2::uuid[]) AND t.status = 'QUEUED'
            ORDER BY t.id, o.id DESC
         ) w
         LEFT JOIN LATERAL (
           SELECT a.admitted,
                  (SELECT s.started_at + w.per_seconds * interval '1 second' FROM flow_rate_starts s
                    WHERE s.tenant_id = $1 AND s.rate_key = w.rate_key AND s.started_at > now() - w.per_seconds * interval '1 second'
                    ORDER BY s.started_at DESC OFFSET greatest(w.rate_limit - a.admitted - 1, 0) LIMIT 1) AS edge
             FROM (SELECT count(*)::int AS admitted FROM tasks p WHERE p.tenant_id = $1 AND p.flow_rate_key = w.rate_key AND p.status = 'PENDING') a
            WHERE w.rate_key IS NOT NULL
         ) r ON true`,
        [tenantId, ids],
      ),
    );
    return new Map(
      r.rows.map((row) => {
        const wait: TaskWait = { queue: row.queue, holdReason: row.hold_reason, holdDetail: row.hold_detail, heldUntil: row.held_until };
        if (row.rate_key !== null && row.rate_limit !== null && row.per_seconds !== null) {
          const admitted = row.admitted ?? 0;
          const full = admitted >= row.rate_limit;
          wait.rate = {
            key: row.rate_key,
            limit: row.rate_limit,
            perSeconds: row.per_seconds,
            admitted,
            nextStartAt: full ? null : (row.edge ?? row.now),
          };
        }
        return [row.task_id, wait];
      }),
    );
  }

  /**
   * A page of the tenant's concurrency groups by key (then group), each with its active and
   * queued runs: at most `first` (clamped to 1…{@link CONCURRENCY_KEYS_PAGE_MAX}) after the
   * cursor `after` of a previous page. With `workflowId`: that workflow's groups and the
   * tenant-scoped groups any run of that workflow joined. Throws {@link InvalidCursorError} for a
   * cursor this method did not produce.
   */
  async concurrencyKeys(tenantId: string, opts: { workflowId?: string; first?: number; after?: string | null } = {}): Promise<ConcurrencyKeyPage> {
    const limit = Math.min(CONCURRENCY_KEYS_PAGE_MAX, Math.max(1, Math.floor(opts.first ?? CONCURRENCY_KEYS_PAGE_DEFAULT)));
    const cursor = opts.after ? decodeKeyCursor(opts.after) : null;
    const r = await this.inTenant(tenantId, (m) =>
      sql<{ group_key: string; scope: string; workflow_id: string | null; key: string; run_limit: number; active: string; queued: string }>(
        m,
        `SELECT g.group_key, g.scope, g.workflow_id, g.key, g.run_limit,
                (SELECT count(*) FROM runs a WHERE a.tenant_id = $1 AND a.concurrency_group = g.group_key AND a.status = 'RUNNING') AS active,
                (SELECT count(*) FROM runs q WHERE q.tenant_id = $1 AND q.concurrency_group = g.group_key AND q.status = 'QUEUED') AS queued
           FROM concurrency_groups g
          WHERE g.tenant_id = $1
            AND ($2::text IS NULL OR g.workflow_id = $2
                 OR (g.scope = 'tenant' AND EXISTS (SELECT 1 FROM runs w WHERE w.tenant_id = $1 AND w.concurrency_group = g.group_key AND w.workflow_id = $2)))
            AND ($3::text IS NULL OR (g.key, g.group_key) > ($3, $4))
          ORDER BY g.key, g.group_key
          LIMIT $5`,
        [tenantId, opts.workflowId ?? null, cursor?.[0] ?? null, cursor?.[1] ?? null, limit + 1],
      ),
    );
    const edges = r.rows.slice(0, limit).map((row) => ({
      cursor: encodeKeyCursor(row.key, row.group_key),
      node: { scope: row.scope, workflowId: row.workflow_id, key: row.key, limit: row.run_limit, active: Number(row.active), queued: Number(row.queued) },
    }));
    return { edges, pageInfo: { hasNextPage: r.rows.length > limit, endCursor: edges.length ? edges[edges.length - 1]!.cursor : null } };
  }

  /**
   * The tenant's rate keys started in the last day or held now, by key (at most
   * {@link RATE_LIMITS_MAX}): each with the limit and window of its most recent task (the task
   * of its latest start or a held one, whichever was created last), its starts within that
   * window and the rows it holds back. Times are the database's clock.
   */
  async rateLimits(tenantId: string): Promise<RateLimitRow[]> {
    const r = await this.inTenant(tenantId, (m) =>
      sql<{ key: string; limit: number | null; per_seconds: number | null; started: string; held: string; next_start_at: Date | null }>(
        m,
        `WITH held AS (
           SELECT t.flow_rate_key AS key, t.created_at, t.flow_rate_limit, t.flow_rate_per_seconds, o.held_until
             FROM outbox o JOIN tasks t ON t.tenant_id = o.tenant_id AND t.id = o.task_id
            WHERE o.tenant_id = $1 AND o.enqueued_at IS NULL AND o.hold_reason = 'RATE_LIMIT' AND t.flow_rate_key IS NOT NULL
         ),
         keys AS (
           SELECT DISTINCT s.rate_key AS key FROM flow_rate_starts s WHERE s.tenant_id = $1 AND s.started_at > now() - interval '1 day'
           UNION SELECT key FROM held
           ORDER BY key LIMIT $2
         )
         SELECT k.key, lt.flow_rate_limit AS limit, lt.flow_rate_per_seconds AS per_seconds,
                (SELECT count(*) FROM flow_rate_starts s
                  WHERE s.tenant_id = $1 AND s.rate_key = k.key AND s.started_at > now() - COALESCE(lt.flow_rate_per_seconds, 0) * interval '1 second') AS started,
                (SELECT count(*) FROM held h WHERE h.key = k.key) AS held,
                (SELECT min(h.held_until) FROM held h WHERE h.key = k.key) AS next_start_at
           FROM keys k
           LEFT JOIN LATERAL (
             SELECT c.flow_rate_limit, c.flow_rate_per_seconds FROM (
               SELECT t.created_at, t.flow_rate_limit, t.flow_rate_per_seconds
                 FROM (SELECT s.task_id FROM flow_rate_starts s WHERE s.tenant_id = $1 AND s.rate_key = k.key ORDER BY s.started_at DESC LIMIT 1) ls
                 JOIN tasks t ON t.tenant_id = $1 AND t.id = ls.task_id
               UNION ALL
               SELECT h.created_at, h.flow_rate_limit, h.flow_rate_per_seconds FROM held h WHERE h.key = k.key
             ) c WHERE c.flow_rate_limit IS NOT NULL ORDER BY c.created_at DESC LIMIT 1
           ) lt ON true
          ORDER BY k.key`,
        [tenantId, RATE_LIMITS_MAX],
      ),
    );
    return r.rows.map((row) => ({
      key: row.key,
      limit: row.limit,
      perSeconds: row.per_seconds,
      startedInWindow: Number(row.started),
      held: Number(row.held),
      nextStartAt: row.next_start_at,
    }));
  }
}

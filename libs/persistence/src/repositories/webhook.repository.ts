import type { DataSource, EntityManager } from 'typeorm';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';
import type { WebhookEvent } from './webhook-delivery-write.js';

/** A webhook as stored (`webhooks`), without its secret. */
export interface WebhookRow {
  id: string;
  url: string;
  events: WebhookEvent[];
  createdAt: Date;
}

/** A delivery's state: PENDING until a 2xx (DELIVERED) or the last attempt failed (FAILED). */
export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

/** One delivery as the API lists it (`webhook_deliveries`). */
export interface WebhookDeliveryRow {
  id: string;
  webhookId: string;
  event: WebhookEvent;
  runId: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

/** A PENDING delivery with what sending it needs: its receiver, secret and payload's parts. */
export interface DeliveryToSend {
  id: string;
  event: WebhookEvent;
  /** The run as the event left it (`{id, workflowId, version, status, error, labels, finishedAt}`). */
  run: Record<string, unknown>;
  createdAt: Date;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secret: string;
}

/** What one attempt came to, as {@link WebhookRepository.recordAttempt} stores it. */
export interface AttemptOutcome {
  /** DELIVERED (a 2xx), PENDING (to be tried again after `retryInMs`) or FAILED (no attempt left). */
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  /** For PENDING: the backoff before the next attempt, ms. */
  retryInMs?: number;
}

const WEBHOOK_COLUMNS = `id, url, events, created_at AS "createdAt"`;
const DELIVERY_COLUMNS = `id, webhook_id AS "webhookId", event, run_id AS "runId", status, attempts, last_status_code AS "lastStatusCode",
  last_error AS "lastError", created_at AS "createdAt", next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt"`;

/**
 * A tenant's webhooks and their deliveries: created, listed and deleted by the API; read,
 * and their attempts recorded, by the scheduler's sender. The deliveries are inserted by the
 * events that end or pause runs ({@link webhookDeliveryPart}).
 */
export class WebhookRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /** Stores webhook `id` with its secret; returns it (without the secret). */
  async create(tenantId: string, w: { id: string; url: string; events: WebhookEvent[]; secret: string }): Promise<WebhookRow> {
    const r = await this.queryInTenant<WebhookRow>(
      tenantId,
      `INSERT INTO webhooks (tenant_id, id, url, events, secret, created_at) VALUES ($1, $2, $3, $4::text[], $5, clock_timestamp())
       RETURNING ${WEBHOOK_COLUMNS}`,
      [tenantId, w.id, w.url, w.events, w.secret],
    );
    return r.rows[0]!;
  }

  /** The tenant's webhooks, oldest first. */
  async list(tenantId: string): Promise<WebhookRow[]> {
    const r = await this.queryInTenant<WebhookRow>(tenantId, `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id`, [
      tenantId,
    ]);
    return r.rows;
  }

  /** The webhook, or null when the tenant has none with that id. */
  async get(tenantId: string, id: string): Promise<WebhookRow | null> {
    if (!isUuid(id)) return null;
    const r = await this.queryInTenant<WebhookRow>(tenantId, `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return r.rows[0] ?? null;
  }

  /** Deletes the webhook with its deliveries; false when the tenant has none with that id. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const r = await this.queryInTenant<{ id: string }>(tenantId, `DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING id`, [tenantId, id]);
    return r.rows.length === 1;
  }

  /** At most `first` + 1 deliveries of webhook `webhookId`, newest first, after delivery `after` (an id of a previous page). */
  async deliveries(tenantId: string, webhookId: string, first: number, after: string | null): Promise<WebhookDeliveryRow[]> {
    const r = await this.queryInTenant<WebhookDeliveryRow>(
      tenantId,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
        WHERE tenant_id = $1 AND webhook_id = $2 AND ($3::uuid IS NULL OR id < $3::uuid)
        ORDER BY id DESC LIMIT $4`,
      [tenantId, webhookId, after, first + 1],
    );
    return r.rows;
  }

  /** The delivery if it is still PENDING, with its webhook's url and secret; null otherwise (delivered, failed, or deleted with its webhook). */
  async toSend(tenantId: string, id: string): Promise<DeliveryToSend | null> {
    const r = await this.queryInTenant<DeliveryToSend>(
      tenantId,
      `SELECT d.id, d.event, d.run, d.created_at AS "createdAt", d.attempts, w.url, w.secret
         FROM webhook_deliveries d JOIN webhooks w ON w.tenant_id = d.tenant_id AND w.id = d.webhook_id
        WHERE d.tenant_id = $1 AND d.id = $2 AND d.status = 'PENDING'`,
      [tenantId, id],
    );
    return r.rows[0] ?? null;
  }

  /**
   * Records attempt number `attempts + 1` of PENDING delivery `id` (fenced by `attempts`, the count
   * the sender read: a second sender that claimed the row after a lost lease records nothing).
   * Times are the database's clock. Returns false when nothing was recorded.
   */
  async recordAttempt(tenantId: string, id: string, attempts: number, o: AttemptOutcome): Promise<boolean> {
    const r = await this.queryInTenant<{ id: string }>(
      tenantId,
      `UPDATE webhook_deliveries
          SET attempts = attempts + 1, status = $4, last_status_code = $5, last_error = $6,
              next_attempt_at = CASE WHEN $4 = 'PENDING' THEN clock_timestamp() + $7 * interval '1 millisecond' END,
              delivered_at = CASE WHEN $4 = 'DELIVERED' THEN clock_timestamp() END
        WHERE tenant_id = $1 AND id = $2 AND status = 'PENDING' AND attempts = $3
        RETURNING id`,
      [tenantId, id, attempts, o.status, o.statusCode, o.error, o.retryInMs ?? 0],
    );
    return r.rows.length === 1;
  }
}

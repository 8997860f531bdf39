import { Logger } from '@nestjs/common';
import { byTenant, claimWebhookDeliveries, WebhookRepository, type AttemptOutcome, type Database, type DeliveryToSend } from '@weft/persistence';
import { guardedConnector, normalizeHost, refusal, type WeftMetrics } from '@weft/platform';
import { Agent, request } from 'undici';
import { webhookRequest } from './webhook-request.js';

/** Options of {@link WebhookSender}. */
export interface WebhookSenderOptions {
  /** Reach loopback, private and other non-public addresses (WEFT_HTTP_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Hosts exempt from the address guard, `*.example.com` for subdomains (WEFT_HTTP_ALLOW_HOSTS). */
  allowHosts?: string[];
  /** The first backoff after a failed attempt, ms (default 1,000): attempt n waits 2^(n-1) times it, at most {@link MAX_BACKOFF_MS}. */
  backoffMs?: number;
  /** How long an attempt may take, answer included, ms (default 10,000). */
  timeoutMs?: number;
  /** Counts attempts in `weft_webhook_deliveries_total`. */
  metrics?: WeftMetrics;
}

/** The most attempts a delivery gets; the last one failing makes it FAILED. */
export const MAX_ATTEMPTS = 15;
/** The longest backoff between two attempts: an hour. */
export const MAX_BACKOFF_MS = 3_600_000;
/** The most characters of `lastError` stored. */
const MAX_ERROR_CHARS = 500;
/** Deliveries claimed per poll, and attempts in flight at once. */
const CLAIM_LIMIT = 50;
const IN_FLIGHT = 8;
/**
 * A claim's lease, in attempt time-outs: the claimed deliveries are sent {@link IN_FLIGHT} at a
 * time, so the last one may start after ceil(CLAIM_LIMIT / IN_FLIGHT) - 1 others; it must not end
 * before its own attempt did, or another sender claims and sends the delivery too. Two more for
 * the last attempt and a margin.
 */
const LEASE_TIMEOUTS = Math.ceil(CLAIM_LIMIT / IN_FLIGHT) + 2;

/**
 * The scheduler's webhook sender: claims due PENDING deliveries (`weft_claim_webhook_deliveries`,
 * SKIP LOCKED, leased for the time their attempts may take), POSTs each to its webhook's url, and
 * records the attempt: a 2xx is DELIVERED; anything else (another status, a 3xx, which is never
 * followed, a refused address, a time-out, a connection error) is tried again after 2^(n-1) times
 * the backoff (n: attempts made), or is FAILED after {@link MAX_ATTEMPTS}. Every connection passes
 * the address guard. An attempt is recorded fenced by the attempt count it read, so a second
 * sender that claimed the row after a lost lease records nothing twice.
 */
export class WebhookSender {
  private readonly log = new Logger('webhooks');
  private readonly repo: WebhookRepository;
  private readonly agent: Agent;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly ds: Database,
    private readonly opts: WebhookSenderOptions,
  ) {
    this.repo = new WebhookRepository(ds);
    this.backoffMs = opts.backoffMs ?? 1_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    const hosts = (opts.allowHosts ?? []).map(normalizeHost).filter((h) => h !== '');
    const allowed = (host: string) => opts.allowPrivate || hosts.some((h) => (h.startsWith('*.') ? host.endsWith(h.slice(1)) : host === h));
    this.agent = new Agent({ connect: guardedConnector(allowed, refusal('the scheduler')), headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
  }

  /** Claims the due deliveries (at most 50) and makes one attempt of each; resolves how many were attempted. */
  async sendDue(): Promise<number> {
    const claimed = await claimWebhookDeliveries(this.ds, null, CLAIM_LIMIT, this.timeoutMs * LEASE_TIMEOUTS);
    const queue = [...byTenant(claimed).values()].flat();
    let attempted = 0;
    const next = async (): Promise<void> => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        try {
          if (await this.attempt(c.tenantId, c.deliveryId)) attempted++;
        } catch (err) {
          // Left PENDING: its lease ends and it is claimed again.
          this.log.warn(`webhook delivery ${c.deliveryId}: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, queue.length) }, next));
    return attempted;
  }

  /** Closes the connections kept open to receivers. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** One attempt of delivery `id`, recorded; false when it was no longer PENDING. */
  private async attempt(tenantId: string, id: string): Promise<boolean> {
    const d = await this.repo.toSend(tenantId, id);
    if (!d) return false;
    const outcome = await this.post(d);
    await this.repo.recordAttempt(tenantId, id, d.attempts, outcome);
    const label = outcome.status === 'DELIVERED' ? 'delivered' : outcome.status === 'PENDING' ? 'retry' : 'failed';
    this.opts.metrics?.webhookDeliveries.inc({ event: d.event, outcome: label });
    return true;
  }

  /** POSTs `d` once and says what came of it. */
  private async post(d: DeliveryToSend): Promise<AttemptOutcome> {
    const { body, headers } = webhookRequest(d, new Date());
    let statusCode: number | null = null;
    let error: string | null;
    try {
      const res = await request(d.url, { method: 'POST', body, headers, dispatcher: this.agent, signal: AbortSignal.timeout(this.timeoutMs) });
      statusCode = res.statusCode;
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (statusCode >= 200 && statusCode < 300) return { status: 'DELIVERED', statusCode, error: null };
      error = statusCode >= 300 && statusCode < 400 ? `redirect ${statusCode} not followed` : `HTTP ${statusCode}`;
    } catch (err) {
      error = describe(err);
    }
    return failedAttempt(d.attempts + 1, statusCode, error, this.backoffMs);
  }
}

/**
 * What failed attempt number `n` (from 1) comes to: tried again after `backoffMs` × 2^(n-1) (at
 * most {@link MAX_BACKOFF_MS}), or FAILED when it was the {@link MAX_ATTEMPTS}th; the error cut
 * at 500 characters.
 */
export function failedAttempt(n: number, statusCode: number | null, error: string, backoffMs: number): AttemptOutcome {
  if (n >= MAX_ATTEMPTS) return { status: 'FAILED', statusCode, error: bounded(error) };
  return { status: 'PENDING', statusCode, error: bounded(error), retryInMs: Math.min(backoffMs * 2 ** (n - 1), MAX_BACKOFF_MS) };
}

/** An error's message, with its cause's (undici wraps connection errors). */
function describe(err: unknown): string {
  const e = err as Error & { cause?: Error; code?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  const cause = e.cause?.message && e.cause.message !== e.message ? `: ${e.cause.message}` : '';
  return `${e.message || e.code || String(err)}${cause}`;
}

function bounded(s: string): string {
  return s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS - 1)}…` : s;
}

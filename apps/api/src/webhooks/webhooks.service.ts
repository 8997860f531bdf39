import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { isUuid, WebhookRepository, type WebhookDeliveryRow, type WebhookEvent, type WebhookRow } from '@weft/persistence';
import { v7 as uuidv7 } from 'uuid';
import type { Principal } from '../auth/principal.js';
import { checkFirst } from '../common/page-size.js';
import { WEBHOOK_URL_MAX, type CreateWebhookInput } from './create-webhook.input.js';
import type { WebhookDeliveryConnection, WebhookEventName, WebhookObject } from './webhook.object.js';

/** Pages of deliveries: at most this many (default 50). */
const PAGE_MAX = 1000;
const PAGE_DEFAULT = 50;

/** `RUN_TIMED_OUT` ↔ `run.timed_out`. */
const toStored = (e: WebhookEventName) => e.toLowerCase().replace('_', '.') as WebhookEvent;
const toApi = (e: WebhookEvent) => e.toUpperCase().replace('.', '_') as WebhookEventName;

/** The webhooks of the caller's tenant and their deliveries. */
@Injectable()
export class WebhooksService {
  constructor(private readonly repo: WebhookRepository) {}

  /**
   * Creates a webhook with a new secret (`whsec_` and 32 random bytes in base64url), returned here
   * only. BAD_USER_INPUT naming `url` when it is not an absolute http or https URL.
   */
  async create(p: Principal, input: CreateWebhookInput): Promise<WebhookObject> {
    const url = checkedUrl(input.url);
    const events = [...new Set(input.events)];
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const row = await this.repo.create(p.tenantId, { id: uuidv7(), url, events: events.map(toStored), secret });
    return { ...shown(row), secret };
  }

  /** The tenant's webhooks, oldest first, without their secrets. */
  async list(p: Principal): Promise<WebhookObject[]> {
    return (await this.repo.list(p.tenantId)).map(shown);
  }

  /** Deletes a webhook with its deliveries; NOT_FOUND for an id the tenant has no webhook with. */
  async delete(p: Principal, id: string): Promise<boolean> {
    if (!(await this.repo.delete(p.tenantId, id))) throw notFound(id);
    return true;
  }

  /** A page of a webhook's deliveries, newest first; NOT_FOUND for an id the tenant has no webhook with. */
  async deliveries(p: Principal, webhookId: string, first: number | null | undefined, after: string | null | undefined): Promise<WebhookDeliveryConnection> {
    checkFirst(first, PAGE_MAX);
    const n = first ?? PAGE_DEFAULT;
    if (after != null && !isUuid(after)) throw new WeftError('BAD_USER_INPUT', `after: ${JSON.stringify(after)} is not a cursor of this list`);
    if (!(await this.repo.get(p.tenantId, webhookId))) throw notFound(webhookId);
    const rows = await this.repo.deliveries(p.tenantId, webhookId, n, after ?? null);
    const page = rows.slice(0, n);
    return {
      edges: page.map((d: WebhookDeliveryRow) => ({ cursor: d.id, node: { ...d, event: toApi(d.event) } })),
      pageInfo: { hasNextPage: rows.length > n, hasPreviousPage: after != null, startCursor: page[0]?.id ?? null, endCursor: page.at(-1)?.id ?? null },
    };
  }
}

function shown(row: WebhookRow): WebhookObject {
  return { id: row.id, url: row.url, events: row.events.map(toApi), secret: null, createdAt: row.createdAt };
}

function notFound(id: string): WeftError {
  return new WeftError('NOT_FOUND', `webhook ${id} not found`);
}

/** `url` when it is an absolute http or https URL without credentials; BAD_USER_INPUT naming `url` otherwise. */
function checkedUrl(url: string): string {
  const bad = (why: string) => new WeftError('BAD_USER_INPUT', `url: ${why}`, [{ path: 'url', message: why }]);
  if (url.length > WEBHOOK_URL_MAX) throw bad(`must be at most ${WEBHOOK_URL_MAX} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw bad(`${JSON.stringify(url.slice(0, 100))} is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw bad(`must be an http or https URL, not ${parsed.protocol.replace(/:$/, '')}`);
  if (parsed.username || parsed.password) throw bad('must not carry a user name or password');
  return url;
}

import { createHmac } from 'node:crypto';
import type { DeliveryToSend } from '@weft/persistence';

/**
 * What a webhook receiver gets: the JSON body and the headers of one attempt of a delivery.
 *
 * Body: `{id, event, createdAt, run: {id, workflowId, version, status, error, labels, finishedAt}}`
 * (`id` is the delivery's, the same on every attempt). Headers: `content-type: application/json`,
 * `weft-event: <event>`, `weft-delivery: <delivery id>` and
 * `weft-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 */
export interface WebhookRequest {
  body: string;
  headers: Record<string, string>;
}

/** The body and headers of an attempt of delivery `d`, signed at `now` with its webhook's secret. */
export function webhookRequest(d: Pick<DeliveryToSend, 'id' | 'event' | 'createdAt' | 'run' | 'secret'>, now: Date): WebhookRequest {
  const body = JSON.stringify({ id: d.id, event: d.event, createdAt: new Date(d.createdAt).toISOString(), run: d.run });
  const t = Math.floor(now.getTime() / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'weft-event': d.event,
      'weft-delivery': d.id,
      'weft-signature': `t=${t},v1=${webhookSignature(d.secret, t, body)}`,
    },
  };
}

/** The hex HMAC-SHA256 of `"<t>.<body>"` under `secret` (the whole secret string, `whsec_` included). */
export function webhookSignature(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

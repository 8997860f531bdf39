import type { CreateWebhookMutation, WebhookDeliveriesQuery, WebhookEvent, WebhooksQuery } from '../../api/generated/graphql.js';

/** The webhooks page's GraphQL documents and the shapes of their answers (generated from them). */

export type WebhookRow = WebhooksQuery['webhooks'][number];
export type CreatedWebhook = CreateWebhookMutation['createWebhook'];
export type DeliveryRow = WebhookDeliveriesQuery['webhookDeliveries']['edges'][number]['node'];

/** The events, as the form offers them and receivers get them in `weft-event`. */
export const EVENTS: { event: WebhookEvent; name: string }[] = [
  { event: 'RUN_SUCCEEDED', name: 'run.succeeded' },
  { event: 'RUN_FAILED', name: 'run.failed' },
  { event: 'RUN_CANCELLED', name: 'run.cancelled' },
  { event: 'RUN_TIMED_OUT', name: 'run.timed_out' },
  { event: 'RUN_PAUSED', name: 'run.paused' },
];

/** `RUN_TIMED_OUT` as `run.timed_out`. */
export function eventName(e: WebhookEvent): string {
  return EVENTS.find((x) => x.event === e)?.name ?? e;
}

export const WEBHOOKS = /* GraphQL */ `
  query Webhooks {
    webhooks { id url events createdAt }
  }
`;

export const CREATE_WEBHOOK = /* GraphQL */ `
  mutation CreateWebhook($input: CreateWebhookInput!) {
    createWebhook(input: $input) { id url events secret createdAt }
  }
`;

export const DELETE_WEBHOOK = /* GraphQL */ `
  mutation DeleteWebhook($id: ID!) {
    deleteWebhook(id: $id)
  }
`;

export const WEBHOOK_DELIVERIES = /* GraphQL */ `
  query WebhookDeliveries($webhookId: ID!) {
    webhookDeliveries(webhookId: $webhookId, first: 50) {
      edges { node { id event runId status attempts lastStatusCode lastError createdAt nextAttemptAt deliveredAt } }
    }
  }
`;

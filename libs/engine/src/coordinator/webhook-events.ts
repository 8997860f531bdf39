import { webhookDeliveryPart, type WebhookEvent, type WritePart } from '@weft/persistence';
import { RunStatus, type Action } from '../index.js';

/** The webhook event of each status a run may end in. */
const END_EVENTS: Partial<Record<RunStatus, WebhookEvent>> = {
  [RunStatus.Succeeded]: 'run.succeeded',
  [RunStatus.Failed]: 'run.failed',
  [RunStatus.Cancelled]: 'run.cancelled',
  [RunStatus.TimedOut]: 'run.timed_out',
};

/**
 * The write that queues the webhook deliveries of a run's end (FinishRun) or pause (PauseRun):
 * sent with the event's other writes, in its transaction (see {@link webhookDeliveryPart}), so
 * a delivery exists exactly when the change it tells of was committed. None for any other action.
 * `now` is the event's clock.
 */
export function webhookDeliveries(tenantId: string, runId: string, a: Action, now: Date): WritePart[] {
  if (a.type === 'PauseRun') return [webhookDeliveryPart(tenantId, runId, 'run.paused', { status: RunStatus.Paused, error: null, finishedAt: null }, now)];
  if (a.type !== 'FinishRun') return [];
  const event = END_EVENTS[a.status];
  return event ? [webhookDeliveryPart(tenantId, runId, event, { status: a.status, error: a.reason ?? null, finishedAt: now }, now)] : [];
}

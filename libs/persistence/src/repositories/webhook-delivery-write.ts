import type { WritePart } from './write-batch.js';

/** The events a webhook may subscribe to, as stored and sent (`weft-event`). */
export const WEBHOOK_EVENTS = ['run.succeeded', 'run.failed', 'run.cancelled', 'run.timed_out', 'run.paused'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The run as an event left it: the `run` of a delivery's payload. */
export interface DeliveredRun {
  /** The API's status of the run after the event (SUCCEEDED, FAILED, CANCELLED, TIMED_OUT or PAUSED). */
  status: string;
  /** The run's error (a failure's reason), or null. */
  error: string | null;
  /** When the run ended (the event's now), or null for a pause. */
  finishedAt: Date | null;
}

/**
 * A time-ordered id: the event's milliseconds in the first 48 bits, random bits after, so the
 * deliveries of a webhook sort by creation when ordered by id.
 */
const TIME_ORDERED_ID = `(substr(lpad(to_hex(floor(extract(epoch FROM $4::timestamptz) * 1000)::bigint), 12, '0'), 1, 8) || '-'
  || substr(lpad(to_hex(floor(extract(epoch FROM $4::timestamptz) * 1000)::bigint), 12, '0'), 9, 4)
  || substr(gen_random_uuid()::text, 14))::uuid`;

const INSERT_DELIVERIES = (
  where: string,
) => `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event, run_id, run_seq, run, created_at, next_attempt_at)
SELECT w.tenant_id, ${TIME_ORDERED_ID}, w.id, $3, r.id, r.event_seq + 1,
       jsonb_build_object('id', r.id, 'workflowId', r.workflow_id, 'version', r.version, 'status', $5::text, 'error', $6::text,
                          'labels', r.labels, 'finishedAt', $7::text),
       $4, $4
  FROM webhooks w JOIN runs r ON r.tenant_id = w.tenant_id AND r.id = $2
 WHERE w.tenant_id = $1 AND $3 = ANY (w.events)${where}
   FOR KEY SHARE OF w
ON CONFLICT (tenant_id, webhook_id, run_id, run_seq) DO NOTHING`;

const INSERT_DELIVERIES_TEXT = INSERT_DELIVERIES('');
const INSERT_DELIVERIES_GATED = INSERT_DELIVERIES(' AND /*gate*/');

/**
 * The write of an event that ends or pauses run `runId`: one delivery row per webhook of the
 * tenant subscribed to `event`, as one INSERT … SELECT sent with the event's other writes (a
 * part of its statement, so no round trip of its own; a tenant without webhooks costs one probe
 * of the `webhooks` primary key). It reads the run row as the statement's snapshot has it, before
 * the event's own run update: `run_seq` is the event's seq (`event_seq + 1`), which makes the
 * delivery once per webhook and event. It changes no run or task row and checks no count, and it
 * locks the webhooks it reads (`FOR KEY SHARE`), so a webhook deleted meanwhile is waited for and
 * left out rather than failing the foreign key: it can never make the event fail on its own.
 * `now` is the event's clock.
 */
export function webhookDeliveryPart(tenantId: string, runId: string, event: WebhookEvent, run: DeliveredRun, now: Date): WritePart {
  return {
    text: INSERT_DELIVERIES_TEXT,
    gated: INSERT_DELIVERIES_GATED,
    params: [tenantId, runId, event, now, run.status, run.error, run.finishedAt?.toISOString() ?? null],
  };
}

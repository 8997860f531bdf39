import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import type { DeliveryStatus } from '@weft/persistence';
import { GraphQLDateTime } from '../common/date-time.scalar.js';
import { PageInfo } from '../runs/run.object.js';

/** The API's names of the webhook events, with the names they are stored and sent under (`weft-event`). */
export const WebhookEventEnum = {
  RUN_SUCCEEDED: 'RUN_SUCCEEDED',
  RUN_FAILED: 'RUN_FAILED',
  RUN_CANCELLED: 'RUN_CANCELLED',
  RUN_TIMED_OUT: 'RUN_TIMED_OUT',
  RUN_PAUSED: 'RUN_PAUSED',
} as const;
export type WebhookEventName = keyof typeof WebhookEventEnum;

export const DeliveryStatusEnum = { PENDING: 'PENDING', DELIVERED: 'DELIVERED', FAILED: 'FAILED' } as const;

registerEnumType(WebhookEventEnum, {
  name: 'WebhookEvent',
  description: 'What a webhook is told of; sent as `weft-event: run.succeeded` (run.failed, run.cancelled, run.timed_out, run.paused).',
  valuesMap: {
    RUN_SUCCEEDED: { description: 'A run ended SUCCEEDED.' },
    RUN_FAILED: { description: 'A run ended FAILED.' },
    RUN_CANCELLED: { description: 'A run ended CANCELLED.' },
    RUN_TIMED_OUT: { description: 'A run ended TIMED_OUT (its timeout_seconds passed).' },
    RUN_PAUSED: { description: 'A run was paused (by an operator, its parent run, or a node with on_exhausted: pause).' },
  },
});
registerEnumType(DeliveryStatusEnum, {
  name: 'WebhookDeliveryStatus',
  description: 'PENDING until the receiver answered 2xx (DELIVERED) or the 15th attempt failed (FAILED).',
});

@ObjectType('Webhook', { description: 'A receiver told, by a signed POST, when a run of the tenant ends or pauses.' })
export class WebhookObject {
  @Field(() => ID)
  id: string;

  @Field(() => String)
  url: string;

  @Field(() => [WebhookEventEnum])
  events: WebhookEventName[];

  @Field(() => String, {
    nullable: true,
    description: 'The shared HMAC-SHA256 secret of `weft-signature` (`whsec_…`): in the answer of createWebhook only, null everywhere else.',
  })
  secret: string | null;

  @Field(() => GraphQLDateTime)
  createdAt: Date;
}

@ObjectType('WebhookDelivery', { description: 'One event of one run sent to one webhook, with its attempts so far.' })
export class WebhookDeliveryObject {
  @Field(() => ID, { description: 'The `weft-delivery` header and the body `id`, the same on every attempt.' })
  id: string;

  @Field(() => WebhookEventEnum)
  event: WebhookEventName;

  @Field(() => ID)
  runId: string;

  @Field(() => DeliveryStatusEnum)
  status: DeliveryStatus;

  @Field(() => Int, { description: 'Attempts made (at most 15).' })
  attempts: number;

  @Field(() => Int, { nullable: true, description: "The last attempt's HTTP status, or null when it got none (a refused address, a time-out)." })
  lastStatusCode: number | null;

  @Field(() => String, { nullable: true, description: 'Why the last attempt failed (at most 500 characters); null when it succeeded or none was made.' })
  lastError: string | null;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime, { nullable: true, description: 'When the next attempt is due (PENDING only).' })
  nextAttemptAt: Date | null;

  @Field(() => GraphQLDateTime, { nullable: true })
  deliveredAt: Date | null;
}

@ObjectType('WebhookDeliveryEdge')
export class WebhookDeliveryEdge {
  @Field(() => String)
  cursor: string;

  @Field(() => WebhookDeliveryObject)
  node: WebhookDeliveryObject;
}

@ObjectType('WebhookDeliveryConnection')
export class WebhookDeliveryConnection {
  @Field(() => [WebhookDeliveryEdge])
  edges: WebhookDeliveryEdge[];

  @Field(() => PageInfo)
  pageInfo: PageInfo;
}

import { Field, InputType } from '@nestjs/graphql';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsString, MaxLength } from 'class-validator';
import { WebhookEventEnum, type WebhookEventName } from './webhook.object.js';

/** The longest webhook url, in characters. */
export const WEBHOOK_URL_MAX = 2048;

@InputType({ description: 'A new webhook: where to POST, and on which events.' })
export class CreateWebhookInput {
  @Field(() => String, { description: `An http or https URL of at most ${WEBHOOK_URL_MAX} characters; redirects are not followed.` })
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX, { message: `url must be at most ${WEBHOOK_URL_MAX} characters` })
  url: string;

  @Field(() => [WebhookEventEnum], { description: 'At least one event; a repeated one counts once.' })
  @IsArray()
  @ArrayNotEmpty({ message: 'events must name at least one event' })
  @ArrayMaxSize(Object.keys(WebhookEventEnum).length * 4)
  @IsIn(Object.values(WebhookEventEnum), { each: true, message: `each of events must be one of ${Object.values(WebhookEventEnum).join(', ')}` })
  events: WebhookEventName[];
}

import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { CreateWebhookInput } from './create-webhook.input.js';
import { WebhookDeliveryConnection, WebhookObject } from './webhook.object.js';
import { WebhooksService } from './webhooks.service.js';

const validate = createValidationPipe();

/** Webhooks and their deliveries; every operation here, reads included, is for admins only (a webhook's url may carry a token). */
@Resolver(() => WebhookObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class WebhooksResolver {
  constructor(private readonly service: WebhooksService) {}

  @Query(() => [WebhookObject], { description: "The tenant's webhooks, oldest first (admin). Secrets are never listed." })
  @Requires('administer', 'list webhooks')
  webhooks(@Context('principal') principal: Principal): Promise<WebhookObject[]> {
    return this.service.list(principal);
  }

  @Mutation(() => WebhookObject, {
    description:
      'Creates a webhook (admin); its secret is in this answer only. BAD_USER_INPUT naming the field for a url that is not http or https or longer than 2,048 characters, or no events.',
  })
  @Requires('administer', 'manage webhooks')
  createWebhook(
    @Args('input', { type: () => CreateWebhookInput }, validate) input: CreateWebhookInput,
    @Context('principal') principal: Principal,
  ): Promise<WebhookObject> {
    return this.service.create(principal, input);
  }

  @Mutation(() => Boolean, { description: "Deletes a webhook and its deliveries (admin). NOT_FOUND for an unknown or another tenant's id." })
  @Requires('administer', 'manage webhooks')
  deleteWebhook(@Args('id', { type: () => ID }, validate) id: string, @Context('principal') principal: Principal): Promise<boolean> {
    return this.service.delete(principal, id);
  }

  @Query(() => WebhookDeliveryConnection, { description: "A webhook's deliveries, newest first (admin). NOT_FOUND for an unknown or another tenant's id." })
  @Requires('administer', 'list webhooks')
  webhookDeliveries(
    @Args('webhookId', { type: () => ID }) webhookId: string,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
    @Context('principal') principal: Principal,
  ): Promise<WebhookDeliveryConnection> {
    return this.service.deliveries(principal, webhookId, first, after);
  }
}

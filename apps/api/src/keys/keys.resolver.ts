import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { ApiKeyObject, CreatedApiKeyObject } from './api-key.object.js';
import { CreateApiKeyInput } from './create-api-key.input.js';
import { KeysService } from './keys.service.js';

const validate = createValidationPipe();

/** API key management; every operation here, listing included, is for admins only. */
@Resolver(() => ApiKeyObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class KeysResolver {
  constructor(private readonly keys: KeysService) {}

  @Query(() => [ApiKeyObject], { description: "The tenant's API keys, oldest first, revoked ones included (admin). Secrets are never listed." })
  @Requires('administer', 'list API keys')
  apiKeys(@Context('principal') principal: Principal): Promise<ApiKeyObject[]> {
    return this.keys.list(principal);
  }

  @Mutation(() => CreatedApiKeyObject, { description: 'Creates an API key (admin); its secret is in this answer only.' })
  @Requires('administer', 'manage API keys')
  createApiKey(
    @Args('input', { type: () => CreateApiKeyInput }, validate) input: CreateApiKeyInput,
    @Context('principal') principal: Principal,
  ): Promise<CreatedApiKeyObject> {
    return this.keys.create(principal, input);
  }

  @Mutation(() => ApiKeyObject, {
    description:
      "Revokes an API key (admin); a revoked key is returned unchanged. An unknown or another tenant's id is NOT_FOUND; the tenant's last active admin key is CONFLICT.",
  })
  @Requires('administer', 'manage API keys')
  revokeApiKey(@Args('id', { type: () => ID }, validate) id: string, @Context('principal') principal: Principal): Promise<ApiKeyObject> {
    return this.keys.revoke(principal, id);
  }
}

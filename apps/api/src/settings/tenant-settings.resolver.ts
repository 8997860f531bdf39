import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Mutation, Query, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { TenantSettingsObject } from './tenant-settings.object.js';
import { TenantSettingsService } from './tenant-settings.service.js';
import { UpdateTenantSettingsInput } from './update-tenant-settings.input.js';

/** The tenant's settings (run retention); reading them too is for admins only. */
@Resolver(() => TenantSettingsObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class TenantSettingsResolver {
  constructor(private readonly settings: TenantSettingsService) {}

  @Query(() => TenantSettingsObject, { description: "The tenant's settings (admin)." })
  @Requires('administer', 'read tenant settings')
  tenantSettings(@Context('principal') principal: Principal): Promise<TenantSettingsObject> {
    return this.settings.get(principal);
  }

  @Mutation(() => TenantSettingsObject, {
    description:
      "Changes the tenant's settings (admin): the fields given, an absent one is kept. retentionDays outside 1–3,650 is BAD_USER_INPUT on `retentionDays`.",
  })
  @Requires('administer', 'change tenant settings')
  updateTenantSettings(
    @Args('input', { type: () => UpdateTenantSettingsInput }, createValidationPipe()) input: UpdateTenantSettingsInput,
    @Context('principal') principal: Principal,
  ): Promise<TenantSettingsObject> {
    return this.settings.update(principal, input);
  }
}

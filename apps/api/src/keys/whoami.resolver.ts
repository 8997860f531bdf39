import { UseFilters, UseGuards } from '@nestjs/common';
import { Context, Query, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { CallerObject } from './caller.object.js';
import { KeysService } from './keys.service.js';

/** `whoami`: any valid key may ask who it is (the console reads its role from it). */
@Resolver(() => CallerObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class WhoamiResolver {
  constructor(private readonly keys: KeysService) {}

  @Query(() => CallerObject, { description: 'The API key this request authenticated with: its tenant, name, prefix and role.' })
  whoami(@Context('principal') principal: Principal): Promise<CallerObject> {
    return this.keys.whoami(principal);
  }
}

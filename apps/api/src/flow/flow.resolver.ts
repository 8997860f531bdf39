import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Int, Query, Resolver } from '@nestjs/graphql';
import { CONCURRENCY_KEYS_PAGE_DEFAULT, CONCURRENCY_KEYS_PAGE_MAX, RATE_LIMITS_MAX } from '@weft/persistence';
import type { Principal } from '../auth/principal.js';
import { RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { ConcurrencyKeyConnection, RateLimitObject } from './flow.object.js';
import { FlowService } from './flow.service.js';

const validate = createValidationPipe();

/** The tenant's flow control: concurrency groups and rate keys (every role may read them). */
@Resolver()
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class FlowResolver {
  constructor(private readonly flow: FlowService) {}

  @Query(() => ConcurrencyKeyConnection, {
    description:
      `The tenant's concurrency groups by key, each with its limit and its RUNNING (active) and QUEUED runs, Relay style; ` +
      `first defaults to ${CONCURRENCY_KEYS_PAGE_DEFAULT} (at most ${CONCURRENCY_KEYS_PAGE_MAX}). ` +
      "With workflowId: that workflow's groups and the tenant-scoped groups its runs joined.",
  })
  concurrencyKeys(
    @Args('workflowId', { type: () => String, nullable: true }, validate) workflowId: string | null | undefined,
    @Args('first', { type: () => Int, nullable: true }) first: number | null | undefined,
    @Args('after', { type: () => String, nullable: true }, validate) after: string | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<ConcurrencyKeyConnection> {
    return this.flow.concurrencyKeys(principal, workflowId, first, after);
  }

  @Query(() => [RateLimitObject], {
    description: `The tenant's rate keys that started an attempt in the last day or hold attempts back now, by key (the first ${RATE_LIMITS_MAX}).`,
  })
  rateLimits(@Context('principal') principal: Principal): Promise<RateLimitObject[]> {
    return this.flow.rateLimits(principal);
  }
}

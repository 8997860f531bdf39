import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, ID, Int, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { CreateRunBatchInput } from './create-run-batch.input.js';
import { RunBatchConnection, RunBatchItemConnection, RunBatchObject } from './run-batch.object.js';
import { RunBatchesService } from './run-batches.service.js';

/** Bulk actions over runs: create, read, stop. */
@Resolver(() => RunBatchObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class RunBatchesResolver {
  constructor(private readonly service: RunBatchesService) {}

  @Mutation(() => RunBatchObject, {
    description:
      'Creates a bulk action over the runs the filter matches now (their ids are fixed here: at most 100,000, oldest first; `total` says how many). The scheduler acts on each run once, at most WEFT_BATCH_RUNS_PER_SECOND a second; a run the action does not apply to is SKIPPED with why. BAD_USER_INPUT for an empty filter, more than 100,000 runs, or a RETRY without fromNodeId. A repeated idempotencyKey returns the same batch.',
  })
  @Requires('operate')
  createRunBatch(
    @Args('input', { type: () => CreateRunBatchInput }, createValidationPipe()) input: CreateRunBatchInput,
    @Context('principal') principal: Principal,
  ): Promise<RunBatchObject> {
    return this.service.create(principal, input);
  }

  @Mutation(() => RunBatchObject, { description: 'Stops a running bulk action: its pending runs are left as they are. NOT_FOUND for an unknown id.' })
  @Requires('operate')
  stopRunBatch(@Args('id', { type: () => ID }) id: string, @Context('principal') principal: Principal): Promise<RunBatchObject> {
    return this.service.stop(principal, id);
  }

  @Query(() => RunBatchObject, { description: 'One bulk action of the tenant. NOT_FOUND for an unknown id.' })
  runBatch(@Args('id', { type: () => ID }) id: string, @Context('principal') principal: Principal): Promise<RunBatchObject> {
    return this.service.get(principal, id);
  }

  @Query(() => RunBatchConnection, { description: "The tenant's bulk actions, newest first." })
  runBatches(
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
    @Context('principal') principal: Principal,
  ): Promise<RunBatchConnection> {
    return this.service.list(principal, first, after);
  }

  @ResolveField(() => RunBatchItemConnection, { description: 'The runs of the batch in order, with what came of each.' })
  items(
    @Parent() batch: RunBatchObject,
    @Args('first', { type: () => Int, nullable: true }) first: number | null,
    @Args('after', { type: () => String, nullable: true }) after: string | null,
  ): Promise<RunBatchItemConnection> {
    return this.service.items(batch, first, after);
  }
}

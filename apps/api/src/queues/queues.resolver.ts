import { UseFilters, UseGuards } from '@nestjs/common';
import { Context, Query, Resolver } from '@nestjs/graphql';
import type { Principal } from '../auth/principal.js';
import { RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { QueueObject, WorkerObject } from './queue.object.js';
import { QueuesService } from './queues.service.js';

/** The tenant's view of the queues and of the workers serving them (every role may read it). */
@Resolver(() => QueueObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class QueuesResolver {
  constructor(private readonly queuesService: QueuesService) {}

  @Query(() => [QueueObject], {
    description:
      "The queues the caller's tenant has tasks on or a live worker serves, by name: backlog, running, delayed and the oldest wait count the tenant's own tasks only; workers are the live ones serving each. A queue reserved for other tenants is listed only while the tenant has tasks on it.",
  })
  queues(@Context('principal') principal: Principal): Promise<QueueObject[]> {
    return this.queuesService.queues(principal);
  }

  @Query(() => [WorkerObject], {
    description:
      "The live workers serving a queue the caller's tenant may use, oldest first; host and pid are always null (operator-only: `weft admin workers`).",
  })
  workers(@Context('principal') principal: Principal): Promise<WorkerObject[]> {
    return this.queuesService.workers(principal);
  }
}

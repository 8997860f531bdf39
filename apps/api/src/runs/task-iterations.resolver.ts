import { UseFilters } from '@nestjs/common';
import { Int, ResolveField, Resolver } from '@nestjs/graphql';
import { RunRepository } from '@weft/persistence';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { TaskObject } from './run.object.js';

/**
 * `Task.failedIterations`, derived from the iteration rows (nothing is stored twice). The
 * aggregate tasks asked for in the same turn of the event loop are read in one query per tenant.
 */
@Resolver(() => TaskObject)
@UseFilters(RethrowFilter)
export class TaskIterationsResolver {
  private readonly open = new Map<string, { ids: Set<string>; rows: Promise<Map<string, number[]>> }>();

  constructor(private readonly runs: RunRepository) {}

  @ResolveField(() => [Int], {
    nullable: true,
    description:
      "On a for_each node's aggregate task (iteration null): the indexes of its iterations that failed for good (status FAILED), ascending; empty when none failed. A retryRun with failedIterationsOnly re-runs these and the SKIPPED and CANCELLED ones. Null for an iteration task and for a node without iterations.",
  })
  failedIterations(task: TaskObject): Promise<number[] | null> | null {
    // Only a worker node's own task can be an aggregate.
    if (task.iteration !== null || task.queue !== null || (task.nodeType !== 'HTTP' && task.nodeType !== 'CODE')) return null;
    return this.batch(task.tenantId, task.id);
  }

  private async batch(tenantId: string, taskId: string): Promise<number[] | null> {
    let batch = this.open.get(tenantId);
    if (!batch) {
      const ids = new Set<string>();
      const rows = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.open.delete(tenantId);
        return this.runs.failedIterations(tenantId, [...ids]);
      });
      this.open.set(tenantId, (batch = { ids, rows }));
    }
    batch.ids.add(taskId);
    return (await batch.rows).get(taskId) ?? null;
  }
}

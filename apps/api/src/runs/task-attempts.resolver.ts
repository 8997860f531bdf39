import { Inject, UseFilters } from '@nestjs/common';
import { ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { AttemptLogRepository, type AttemptLogSize, type AttemptLogText } from '@weft/persistence';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { responseScope } from './response-budget.js';
import { TaskObject } from './run.object.js';
import { RunsService } from './runs.service.js';
import { TaskAttemptObject } from './task-attempt.object.js';
import { AttemptLogLoader } from './attempt-logs.loader.js';

/** Statuses in which a task's current attempt has ended on a worker. */
const ENDED = new Set<string>(['COMPLETED', 'FAILED']);

/**
 * `Task.attempts`: one entry per attempt of a worker task that ran, oldest first, with the logs
 * stored for it. The attempts of every task of an answer are read together, one query per tenant
 * (see {@link AttemptLogLoader}): first their sizes, charged to the answer's budget
 * (WEFT_MAX_RESPONSE_BYTES), then, once every size of the answer is charged and within it, their
 * texts; an answer over the budget is refused without reading any.
 */
@Resolver(() => TaskObject)
@UseFilters(RethrowFilter)
export class TaskAttemptsResolver {
  constructor(
    private readonly logs: AttemptLogRepository,
    private readonly runService: RunsService,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
  ) {}

  @ResolveField(() => [TaskAttemptObject], {
    description:
      'The executions of a worker task (HTTP, CODE), oldest first: every attempt before the current one, and the current one once it ended or recorded logs. Empty for other nodes and before the first attempt ends.',
  })
  async attempts(task: TaskObject, _args: unknown, ctx: object, info: GraphQLResolveInfo): Promise<TaskAttemptObject[]> {
    if (task.queue === null) return [];
    const scope = responseScope(ctx, info, this.config.maxResponseBytes);
    if (scope.budget.refused) return [];
    const loader = (scope.attempts ??= new AttemptLogLoader(this.logs));
    // Sizes first, charged before any text is read: an answer over its budget reads none.
    const sizes = await scope.budget.sizing(loader.sizes(task.tenantId, task.id));
    scope.budget.charge(sizes.reduce((n, r) => n + r.bytes, 0));
    let texts: Map<number, AttemptLogText> = new Map();
    if (sizes.length > 0) {
      await scope.budget.charged();
      texts = new Map((await loader.texts(task.tenantId, task.id)).map((t) => [t.attempt, t]));
    }
    const byAttempt = new Map<number, AttemptLogSize & Partial<AttemptLogText>>(sizes.map((r) => [r.attempt, { ...r, ...texts.get(r.attempt) }]));
    const last = ENDED.has(task.status) || byAttempt.has(task.attempt) ? task.attempt : task.attempt - 1;
    const out: TaskAttemptObject[] = [];
    for (let attempt = 0; attempt <= last; attempt++) {
      const row = byAttempt.get(attempt);
      // A row deleted between the two reads (its task retried from a node) answers no logs.
      if (row) out.push({ attempt, logs: row.logs ?? null, startedAt: row.startedAt, finishedAt: row.finishedAt, error: row.error ?? null });
      else if (attempt < task.attempt) out.push({ attempt, logs: null, startedAt: null, finishedAt: null, error: null });
      else {
        const error = await this.runService.storedText(ctx, info, task, { table: 'tasks', tenantId: task.tenantId, id: task.id, column: 'error' });
        out.push({ attempt, logs: null, startedAt: null, finishedAt: task.finishedAt, error });
      }
    }
    return out;
  }
}

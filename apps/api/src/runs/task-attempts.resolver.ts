import { Inject, UseFilters } from '@nestjs/common';
import { ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { AttemptLogRepository } from '@weft/persistence';
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
 * stored for it. The logs of every task of an answer are read together, one query per tenant
 * (see {@link AttemptLogLoader}), and charged to the answer's budget (WEFT_MAX_RESPONSE_BYTES).
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
    const rows = await (scope.attempts ??= new AttemptLogLoader(this.logs)).load(task.tenantId, task.id);
    scope.budget.charge(rows.reduce((n, r) => n + Buffer.byteLength(r.logs) + Buffer.byteLength(r.error ?? ''), 0));
    const byAttempt = new Map(rows.map((r) => [r.attempt, r]));
    const last = ENDED.has(task.status) || byAttempt.has(task.attempt) ? task.attempt : task.attempt - 1;
    const out: TaskAttemptObject[] = [];
    for (let attempt = 0; attempt <= last; attempt++) {
      const row = byAttempt.get(attempt);
      if (row) out.push({ attempt, logs: row.logs, startedAt: row.startedAt, finishedAt: row.finishedAt, error: row.error });
      else if (attempt < task.attempt) out.push({ attempt, logs: null, startedAt: null, finishedAt: null, error: null });
      else {
        const error = await this.runService.storedText(ctx, info, task, { table: 'tasks', tenantId: task.tenantId, id: task.id, column: 'error' });
        out.push({ attempt, logs: null, startedAt: null, finishedAt: task.finishedAt, error });
      }
    }
    return out;
  }
}

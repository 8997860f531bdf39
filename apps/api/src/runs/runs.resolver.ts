import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, ID, Info, Int, Mutation, Parent, Query, ResolveField, Resolver, Subscription } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { allNodes, isLoop, loopSpec, NodeType, recordedDecision, type JsonValue, type SwitchDecision } from '@weft/engine';
import { RUN_CHILDREN_MAX, RUN_ITEMS_PAGE_DEFAULT, RUN_ITEMS_PAGE_MAX } from '@weft/persistence';
import { RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX } from '@weft/contract';
import type { GqlContext } from '../auth/gql-context.js';
import { GraphQLJSON } from '../common/json.scalar.js';
import type { Principal } from '../auth/principal.js';
import { Requires, RolesGuard } from '../auth/roles.guard.js';
import { RethrowFilter } from '../common/rethrow.filter.js';
import { createValidationPipe } from '../common/validation.pipe.js';
import { CancelRunInput, PauseRunInput, ResumeRunInput, RetryRunInput, SendSignalInput, StartRunInput } from './run-mutations.input.js';
import { GraphObject } from '../common/graph.object.js';
import type { DagShape } from '../common/graph.js';
import { RunFilter } from './run-filter.input.js';
import { RunConnection, RunEventObject, RunObject, SignalResult, TaskObject } from './run.object.js';
import { RunChangeObject, type RunChangedPayload } from './run-change.object.js';
import { RunUpdatesService, type RunUpdatedPayload } from './run-updates.service.js';
import { RunsService, type MaybePromise } from './runs.service.js';
import { WaitReasonEnum, type WaitReason } from '../flow/wait-reason.js';
import { TaskDecisionObject } from './task-decision.object.js';
import { mayWait } from './run-waits.js';

const validate = createValidationPipe();
const validateFilter = createValidationPipe(RunFilter);

/**
 * The run queries, mutations and subscriptions, and the fields of a run. A field resolver
 * without arguments here (and in the resolvers of tasks and history events below) takes
 * graphql-js's own `(parent, args, context, info)`, with no parameter decorators: @nestjs/graphql
 * then calls it as it is, without extracting its parameters and wrapping it in promises on each
 * call (a watched run's every update resolves them for each of its tasks). Field resolvers run
 * no guards, filters or interceptors either way (the GraphQL options set no
 * `fieldResolverEnhancers`).
 */
@Resolver(() => RunObject)
@UseGuards(RolesGuard)
@UseFilters(RethrowFilter)
export class RunsResolver {
  constructor(
    private readonly runService: RunsService,
    private readonly updates: RunUpdatesService,
  ) {}

  @Query(() => RunObject, {
    nullable: true,
    description: "A run of the caller's tenant. An unknown id, an id that is not a UUID and another tenant's run are all a NOT_FOUND error (never null).",
  })
  run(
    @Args('id', { type: () => ID }) id: string,
    @Context('principal') principal: Principal,
    @Context() ctx: GqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<RunObject> {
    return this.runService.sizing(ctx, info, () => this.runService.get(principal, id, info), `run:${principal.tenantId}:${id}`);
  }

  @Query(() => RunConnection, { description: `Runs newest first, Relay style; first defaults to ${RUNS_PAGE_DEFAULT} (at most ${RUNS_PAGE_MAX}).` })
  runs(
    @Args('filter', { type: () => RunFilter, nullable: true }, validateFilter) filter: RunFilter | null | undefined,
    @Args('first', { type: () => Int, nullable: true }) first: number | null | undefined,
    @Args('after', { type: () => String, nullable: true }, validate) after: string | null | undefined,
    @Context('principal') principal: Principal,
    @Context() ctx: GqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<RunConnection> {
    return this.runService.sizing(ctx, info, () => this.runService.list(principal, filter, first, after, info));
  }

  @Query(() => Int, { description: "How many of the caller's runs match filter (the same filter as runs)." })
  countRuns(
    @Args('filter', { type: () => RunFilter, nullable: true }, validateFilter) filter: RunFilter | null | undefined,
    @Context('principal') principal: Principal,
  ): Promise<number> {
    return this.runService.count(principal, filter);
  }

  @Mutation(() => RunObject, {
    description:
      'Starts a run; a repeated idempotencyKey returns the run it first started when the workflow, version, input and config are the same, else CONFLICT.',
  })
  @Requires('operate')
  startRun(
    @Args('input', { type: () => StartRunInput }, validate) input: StartRunInput,
    @Context('principal') principal: Principal,
    @Context('traceparent') traceparent?: string,
  ): Promise<RunObject> {
    return this.runService.start(principal, input, traceparent);
  }

  @Mutation(() => SignalResult, { description: 'Sends a signal; delivered is false when it was buffered for a later waiter.' })
  @Requires('operate')
  sendSignal(
    @Args('input', { type: () => SendSignalInput }, validate) input: SendSignalInput,
    @Context('principal') principal: Principal,
  ): Promise<SignalResult> {
    return this.runService.signal(principal, input);
  }

  @Mutation(() => RunObject)
  @Requires('operate')
  cancelRun(@Args('input', { type: () => CancelRunInput }, validate) input: CancelRunInput, @Context('principal') principal: Principal): Promise<RunObject> {
    return this.runService.control(principal, input, (c, t) => c.cancelRun(t, { runId: input.runId, reason: input.reason ?? undefined }));
  }

  @Mutation(() => RunObject, {
    description:
      'Pauses an active run and its active child runs: attempts already with workers finish, timers fire and signals are delivered, but nothing is dispatched (ready tasks wait QUEUED with wait reason RUN_PAUSED) and no child run starts until resumeRun. A paused run ends only after its resume, or by cancelRun; a run QUEUED for a concurrency slot is not started by one while paused. CONFLICT for a finished run; a repeated pause changes nothing.',
  })
  @Requires('operate')
  pauseRun(@Args('input', { type: () => PauseRunInput }, validate) input: PauseRunInput, @Context('principal') principal: Principal): Promise<RunObject> {
    return this.runService.control(principal, input, (c, t) => c.pauseRun(t, { runId: input.runId, reason: input.reason ?? undefined }));
  }

  @Mutation(() => RunObject, {
    description:
      "Resumes a paused run and its paused child runs: what waited is dispatched in flow control's order, and a node whose attempts ran out (on_exhausted: pause) gets its max_attempts again. CONFLICT for a finished run; on a running run it changes nothing.",
  })
  @Requires('operate')
  resumeRun(@Args('input', { type: () => ResumeRunInput }, validate) input: ResumeRunInput, @Context('principal') principal: Principal): Promise<RunObject> {
    return this.runService.control(principal, input, (c, t) => c.resumeRun(t, { runId: input.runId, reason: input.reason ?? undefined }));
  }

  @Mutation(() => RunObject, {
    description:
      'Restarts a finished run from a node; that node and its descendants are reset. With failedIterationsOnly (a for_each node), only its failed, skipped and cancelled iterations run again and its descendants are reset.',
  })
  @Requires('operate')
  retryRun(@Args('input', { type: () => RetryRunInput }, validate) input: RetryRunInput, @Context('principal') principal: Principal): Promise<RunObject> {
    const { runId, fromNodeId } = input;
    const retried = {
      runId,
      fromNodeId,
      version: input.version ?? undefined,
      input: input.input ?? undefined,
      config: input.config ?? undefined,
      ...(input.failedIterationsOnly ? { failedIterationsOnly: true } : {}),
    };
    return this.runService.control(principal, input, (c, t) => c.retryRun(t, retried));
  }

  @Subscription(() => RunObject, { description: 'The run as it is now, then again after every change.' })
  runUpdated(@Args('runId', { type: () => ID }) runId: string, @Context('principal') principal: Principal): Promise<AsyncIterableIterator<RunUpdatedPayload>> {
    // One channel per run whatever the case the id was written in (updates carry it in lower case).
    const id = runId.toLowerCase();
    return this.updates.watch(
      principal.tenantId,
      id,
      () => this.runService.loadShared(principal.tenantId, id),
      (run, change) => this.runService.patchShared(run, change),
      () => this.runService.seqOf(principal.tenantId, id),
    );
  }

  @Subscription(() => RunChangeObject, {
    description:
      "Every change to any run of the caller's tenant from now on (new runs included): its id, status and seq. A subscriber that falls behind gets each changed run once, in its latest state.",
  })
  runChanged(@Context('principal') principal: Principal): Promise<AsyncIterableIterator<RunChangedPayload>> {
    return this.updates.watchTenant(principal.tenantId);
  }

  @ResolveField(() => GraphQLJSON, { nullable: true })
  input(run: RunObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue | null> {
    return this.runService.storedJson(ctx, info, run, { table: 'runs', tenantId: run.tenantId, id: run.id, column: 'input' });
  }

  @ResolveField(() => GraphQLJSON, { nullable: true })
  config(run: RunObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue | null> {
    return this.runService.storedJson(ctx, info, run, { table: 'runs', tenantId: run.tenantId, id: run.id, column: 'config' });
  }

  @ResolveField(() => GraphQLJSON, { nullable: true, description: 'Set once the run succeeded.' })
  output(run: RunObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue | null> {
    return this.runService.storedJson(ctx, info, run, { table: 'runs', tenantId: run.tenantId, id: run.id, column: 'output' });
  }

  @ResolveField(() => GraphQLJSON, { description: 'The labels the run was started with: a JSON object of string values ({} for none).' })
  labels(run: RunObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): Record<string, string> {
    return this.runService.charged(ctx, info, run.labels, {});
  }

  @ResolveField(() => String, { nullable: true, description: 'Why the run failed or was cancelled.' })
  error(run: RunObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<string | null> {
    return this.runService.storedText(ctx, info, run, { table: 'runs', tenantId: run.tenantId, id: run.id, column: 'error' });
  }

  @ResolveField(() => [TaskObject], {
    description:
      `A page of the run's tasks in creation order; a for_each node's iteration tasks follow its aggregate task (iteration null) in index order. ` +
      `first: at most ${RUN_ITEMS_PAGE_MAX} (default ${RUN_ITEMS_PAGE_DEFAULT}); after: the id of the last task of the previous page. A page shorter than first is the last.`,
  })
  tasks(
    @Parent() run: RunObject,
    @Args('first', { type: () => Int, nullable: true }) first: number | null | undefined,
    @Args('after', { type: () => ID, nullable: true }) after: string | null | undefined,
    @Context() ctx: GqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<TaskObject[]> {
    const rows = this.runService.sizing(ctx, info, () => this.runService.tasks(run, first, after, info), `tasks:${run.tenantId}:${run.id}:${first}:${after}`);
    return rows.then((r) => this.runService.within(ctx, info, r));
  }

  @ResolveField(() => [RunEventObject], {
    description:
      `A page of the applied events, oldest first. first: at most ${RUN_ITEMS_PAGE_MAX} (default ${RUN_ITEMS_PAGE_DEFAULT}); ` +
      'after: the seq of the last event of the previous page. A page shorter than first is the last.',
  })
  history(
    @Parent() run: RunObject,
    @Args('first', { type: () => Int, nullable: true }) first: number | null | undefined,
    @Args('after', { type: () => Int, nullable: true }) after: number | null | undefined,
    @Context() ctx: GqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<RunEventObject[]> {
    const rows = this.runService.sizing(
      ctx,
      info,
      () => this.runService.history(run, first, after, info),
      `history:${run.tenantId}:${run.id}:${first}:${after}`,
    );
    return rows.then((r) => this.runService.within(ctx, info, r));
  }

  @ResolveField(() => [RunObject], {
    description: `The child runs this run's SUBWORKFLOW tasks started (every attempt of each; same tenant), oldest first; only the first ${RUN_CHILDREN_MAX}. Empty for a run without SUBWORKFLOW tasks.`,
  })
  children(run: RunObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): Promise<RunObject[]> {
    const rows = this.runService.sizing(ctx, info, () => this.runService.children(run, info), `children:${run.tenantId}:${run.id}`);
    return rows.then((r) => this.runService.within(ctx, info, r));
  }

  @ResolveField(() => WaitReasonEnum, {
    nullable: true,
    description: 'Why a QUEUED run is not running yet: CONCURRENCY_LIMIT (its concurrency key has no free slot); null for a run that is not QUEUED.',
  })
  waitReason(run: RunObject): Promise<WaitReason | null> | null {
    // runWait answers null, without a read, for a run that is not QUEUED.
    return run.status === 'QUEUED' ? this.runService.runWait(run).then((w) => w?.reason ?? null) : null;
  }

  @ResolveField(() => String, {
    nullable: true,
    description: 'Why a QUEUED run waits, as a sentence: `concurrency limit 2 reached for key "acme" (2 active, 3 queued)`; null for a run that is not QUEUED.',
  })
  waitDetail(run: RunObject): Promise<string | null> | null {
    return run.status === 'QUEUED' ? this.runService.runWait(run).then((w) => w?.detail ?? null) : null;
  }

  @ResolveField(() => String, {
    description:
      "The run's DAG as a Mermaid flowchart, each reached node with its status (a for_each node's also with its iteration counts; a SUBWORKFLOW node drawn as a subroutine).",
  })
  mermaid(run: RunObject): Promise<string> {
    return this.runService.mermaid(run);
  }

  @ResolveField(() => GraphObject, {
    description:
      "The run's DAG as data, in definition order: each node with its task's status (a for_each node's with its iteration counts), each edge TAKEN, SKIPPED or OPEN. The same facts as mermaid.",
  })
  graph(run: RunObject): Promise<DagShape> {
    return this.runService.graph(run);
  }
}

/** The stored JSON fields and the error of a task, read after their size was charged to the answer's budget. */
@Resolver(() => TaskObject)
@UseFilters(RethrowFilter)
export class TaskFieldsResolver {
  constructor(private readonly runService: RunsService) {}

  @ResolveField(() => GraphQLJSON, { nullable: true, description: 'The resolved input; null for a sensitive node.' })
  input(task: TaskObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue | null> {
    if (task.redacted) return null;
    return this.runService.storedJson(ctx, info, task, { table: 'tasks', tenantId: task.tenantId, id: task.id, column: 'input' });
  }

  @ResolveField(() => GraphQLJSON, { nullable: true, description: 'The output; null for a sensitive node.' })
  output(task: TaskObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue | null> {
    if (task.redacted) return null;
    return this.runService.storedJson(ctx, info, task, { table: 'tasks', tenantId: task.tenantId, id: task.id, column: 'output' });
  }

  @ResolveField(() => WaitReasonEnum, {
    nullable: true,
    description:
      "Why a QUEUED task is not running yet: CONCURRENCY_LIMIT or RATE_LIMIT (its node's limits hold it), QUEUE_BACKLOG (it waits for a worker slot on its queue), RUN_PAUSED (its run is paused); " +
      'NO_LIVE_WORKER for a QUEUED or PENDING task that has waited over a minute on a queue no live worker serves; ' +
      'null for a retry waiting out its backoff (see waitDetail) and for a task that waits for nothing.',
  })
  waitReason(task: TaskObject): Promise<WaitReason | null> | null {
    // taskWait answers null, without a read, for a task that is not QUEUED or PENDING.
    return mayWait(task.status) ? this.runService.taskWait(task).then((w) => w?.reason ?? null) : null;
  }

  @ResolveField(() => String, {
    nullable: true,
    description:
      'Why a QUEUED task waits, as a sentence (`rate limit "partner" 20 per 1 s, next start 12:00:01.250Z`, `waiting for a worker slot on queue "http"`, ' +
      '`waiting 3m on queue "gpu": no live worker serves it`, also for a PENDING task); null for a task that waits for nothing.',
  })
  waitDetail(task: TaskObject): Promise<string | null> | null {
    return mayWait(task.status) ? this.runService.taskWait(task).then((w) => w?.detail ?? null) : null;
  }

  @ResolveField(() => TaskDecisionObject, {
    nullable: true,
    description:
      "A SWITCH task's decision: the branches it selected, whether its default was taken, and each other outgoing edge's condition with its value " +
      '(branches empty and defaultTaken false: no branch taken). Null for a task of another node type or a SWITCH without a recorded decision.',
  })
  decision(task: TaskObject): Promise<SwitchDecision | null> | null {
    const branches = task.branches;
    if (task.nodeType !== NodeType.Switch || branches === null || !task.runDefinition) return null;
    return task.runDefinition().then((def) => {
      const node = allNodes(def.nodes).find((n) => n.node_id === task.nodeId);
      if (!node) return null;
      // A SWITCH in a DO_WHILE body routes over its body's edges.
      const loop = def.nodes.find((n) => isLoop(n) && loopSpec(n).bodyNodes.some((b) => b.node_id === task.nodeId));
      return recordedDecision(node, loop ? loopSpec(loop).bodyEdges : (def.edges ?? []), branches);
    });
  }

  @ResolveField(() => String, { nullable: true })
  error(task: TaskObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<string | null> {
    return this.runService.storedText(ctx, info, task, { table: 'tasks', tenantId: task.tenantId, id: task.id, column: 'error' });
  }
}

/** The stored JSON fields and the error of a history event, read after their size was charged to the answer's budget. */
@Resolver(() => RunEventObject)
@UseFilters(RethrowFilter)
export class RunEventFieldsResolver {
  constructor(private readonly runService: RunsService) {}

  @ResolveField(() => GraphQLJSON, { nullable: true })
  payload(e: RunEventObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue | null> {
    return this.runService.storedJson(ctx, info, e, { table: 'run_events', tenantId: e.tenantId, runId: e.runId, seq: e.seq, column: 'payload' });
  }

  @ResolveField(() => GraphQLJSON, { description: 'The actions the event produced.' })
  actions(e: RunEventObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<JsonValue> {
    const value = this.runService.storedJson(ctx, info, e, { table: 'run_events', tenantId: e.tenantId, runId: e.runId, seq: e.seq, column: 'actions' });
    return value instanceof Promise ? value.then((v) => v ?? []) : (value ?? []);
  }

  @ResolveField(() => String, { nullable: true, description: 'Why the event was rejected.' })
  error(e: RunEventObject, _args: unknown, ctx: GqlContext, info: GraphQLResolveInfo): MaybePromise<string | null> {
    return this.runService.storedText(ctx, info, e, { table: 'run_events', tenantId: e.tenantId, runId: e.runId, seq: e.seq, column: 'error' });
  }
}

import { RunEventRepository, TransientDbError, type NewRun, type RunEntity, type RunState, type Transaction } from '@weft/persistence';
import { runFlowOf, RunStatus, type RunEvent, type WorkflowDag } from '../index.js';
import type { Applied, ApplyLocked } from './applied.js';
import type { Admission, RunSlots } from './run-slots.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { DEFAULT_RUN_PRIORITY, type StartRunInput } from './inputs.js';
import { snapshotNodes } from './snapshot-cache.js';
import { newRunTrace } from './trace-context.js';
import { versionToRun } from './versions.js';

/** A run start inside a caller's transaction: the run, whether it is new, and what applying its RunStarted did. */
export interface StartedIn {
  runId: string;
  /** False when the idempotency key already named a run (that run is returned, nothing is written). */
  created: boolean;
  /** Set when the run was created: for {@link AfterCommit} once the caller's transaction committed. */
  applied?: Applied;
  /**
   * The new run's row as the caller's transaction leaves it, when the start left it RUNNING or
   * QUEUED (without output or error): for an answer that would otherwise read it back. Absent for
   * a run that ended at its start (its output or error were computed by the machine) and for a
   * run an idempotency key already named. Its `input` and `config` are the values as given, not
   * as read back from `jsonb` (which orders object keys its own way).
   */
  row?: RunEntity;
}

/** The schedule a run is started by, and the nominal time it fires for (stored on the run row). */
export interface ScheduledBy {
  scheduleId: string;
  nominalTime: Date;
}

/**
 * Starting and cancelling top-level runs inside a transaction the caller owns — the user's
 * `startRun` (its own transaction) and a schedule's fire (the schedule's transaction, so the run
 * and the schedule's next fire time commit together). The same RunStarted and RunCancelled events
 * as every other path, applied by the event pipeline on the locked run row.
 */
export class RunStarts {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly apply: ApplyLocked,
    private readonly slots: RunSlots,
  ) {}

  /**
   * Creates a run (UUIDv7 id, RUNNING) and applies its RunStarted in `m`, or returns the run an
   * already used `idempotencyKey` names (also when a concurrent start with the key committed
   * first: the partial unique index decides). Input values must have been checked by the caller.
   *
   * A workflow with `concurrency` whose key's group has no free slot: by its strategy, the run is
   * created QUEUED with no task (`queue`: it starts when a slot frees), or CANCELLED at once
   * (`cancel_newest`), or the group's oldest running run is cancelled in `m` and this one starts
   * (`cancel_oldest`).
   * @throws WeftError NOT_FOUND (unknown workflow or version), BAD_USER_INPUT (deprecated
   * version, a concurrency key that does not resolve); MachineError when the machine rejects the
   * start (it rolls back with `m`).
   */
  async startIn(m: Transaction, tenantId: string, input: StartRunInput, scheduled?: ScheduledBy): Promise<StartedIn> {
    const { ctx } = this;
    const events = new RunEventRepository(m);
    if (input.idempotencyKey !== undefined) {
      const existing = await events.runIdByIdempotencyKey(tenantId, input.idempotencyKey);
      if (existing) return { runId: existing, created: false };
    }
    const { version, dbNow } = await versionToRun(m, tenantId, input.workflowId, input.version);
    const dag = await ctx.dag(m, tenantId, input.workflowId, version);
    const now = ctx.testClock?.() ?? dbNow;
    const runId = ctx.newId();
    const group = this.slots.groupOf(dag, input.workflowId, input.input ?? {}, input.config ?? {});
    const admission: Admission = group ? await this.slots.admission(m, tenantId, group, dag, now) : { start: true };
    const trace = newRunTrace(input.traceparent);
    const run: RunState = {
      id: runId,
      workflowId: input.workflowId,
      version,
      status: RunStatus.Running,
      input: input.input ?? {},
      config: input.config ?? {},
      eventSeq: 0,
      parentRunId: null,
      parentTaskId: null,
      parentAttempt: null,
      depth: 0,
      rootRunId: null,
      createdAt: now,
      traceparent: trace.traceparent,
      traceCallerSpan: trace.callerSpan,
      priority: input.priority ?? runFlowOf(dag.definition).priority ?? DEFAULT_RUN_PRIORITY,
      concurrencyGroup: group?.groupKey ?? null,
    };
    const row: NewRun = {
      id: runId,
      workflowId: run.workflowId,
      version,
      input: run.input,
      config: run.config,
      idempotencyKey: input.idempotencyKey ?? null,
      startNodeId: input.startNodeId ?? null,
      traceparent: trace.traceparent,
      traceCallerSpan: trace.callerSpan,
      scheduleId: scheduled?.scheduleId ?? null,
      nominalTime: scheduled?.nominalTime ?? null,
      priority: run.priority,
      status: !admission.start && admission.strategy === 'queue' ? RunStatus.Queued : RunStatus.Running,
      concurrencyGroup: group?.groupKey ?? null,
      concurrencyKey: group?.key ?? null,
      now,
    };
    const inserted = await events.insertRun(tenantId, row);
    if (!inserted) {
      // A concurrent start with the same key committed first: return the winner.
      const winner = await events.runIdByIdempotencyKey(tenantId, input.idempotencyKey!);
      if (!winner) throw new TransientDbError(undefined, 'idempotency key owner vanished; retrying');
      return { runId: winner, created: false };
    }
    if (!admission.start) {
      const why = `concurrency limit ${admission.limit} reached for key ${JSON.stringify(group!.key)}`;
      if (admission.strategy === 'queue') {
        this.ctx.observe((o) => o.flowHeld?.({ reason: 'CONCURRENCY_LIMIT', count: 1 }));
        const applied: Applied = { status: RunStatus.Queued, seq: 0, jobs: [], now };
        return { runId, created: true, applied, row: startedRow(tenantId, run, row, applied) };
      }
      if (admission.strategy === 'cancel_newest') {
        this.ctx.observe((o) => o.concurrencyCancelled?.({ tenantId, runId, strategy: 'cancel_newest' }));
        const cancelled = await this.apply(m, tenantId, run, new Map(), dag, { type: 'RunCancelled', reason: `${why} (cancel_newest)` }, now, { rejectedRollsBack: true });
        return { runId, created: true, applied: cancelled };
      }
      const oldest = await this.slots.oldestActive(m, tenantId, group!.groupKey);
      const superseded = oldest === undefined ? undefined : await this.cancelIn(m, tenantId, oldest, `superseded by run ${runId} (cancel_oldest)`, now);
      if (superseded) this.ctx.observe((o) => o.concurrencyCancelled?.({ tenantId, runId: oldest!, strategy: 'cancel_oldest' }));
      const applied = await this.start(m, tenantId, run, dag, input, now);
      if (superseded) (applied.nested ??= []).push({ runId: oldest!, applied: superseded });
      return { runId, created: true, applied, row: startedRow(tenantId, run, row, applied) };
    }
    const applied = await this.start(m, tenantId, run, dag, input, now);
    return { runId, created: true, applied, row: startedRow(tenantId, run, row, applied) };
  }

  /** Applies the RunStarted of new run `run` in `m`. */
  private start(m: Transaction, tenantId: string, run: RunState, dag: WorkflowDag, input: StartRunInput, now: Date): Promise<Applied> {
    const ev: RunEvent = input.startNodeId ? { type: 'RunStarted', startNodeId: input.startNodeId } : { type: 'RunStarted' };
    return this.apply(m, tenantId, run, new Map(), dag, ev, now, { rejectedRollsBack: true });
  }

  /**
   * Applies RunCancelled with `reason` to run `runId` in `m` when it is still RUNNING; returns
   * what it did (for {@link AfterCommit}), or undefined when the run is gone or already ended.
   */
  async cancelIn(m: Transaction, tenantId: string, runId: string, reason: string, now: Date): Promise<Applied | undefined> {
    const events = new RunEventRepository(m);
    const run = await events.lock(tenantId, runId);
    if (!run || (run.status !== RunStatus.Running && run.status !== RunStatus.Queued)) return undefined;
    const tasks = await events.taskStates(tenantId, runId);
    const dag = await this.ctx.dag(m, tenantId, run.workflowId, run.version);
    const applied = await this.apply(m, tenantId, run, snapshotNodes(tasks), dag, { type: 'RunCancelled', reason }, now, { rejectedRollsBack: false });
    return applied.rejected ? undefined : applied;
  }
}

/**
 * The row of new run `run` (inserted as `inserted`) once `applied` was applied to it: its
 * `event_seq`, status and `updated_at` (the event's clock) as the event's history write sets them.
 * Undefined when the start ended the run (the machine wrote its output, error and end).
 */
function startedRow(tenantId: string, run: RunState, inserted: NewRun, applied: Applied): RunEntity | undefined {
  if (applied.status !== RunStatus.Running && applied.status !== RunStatus.Queued) return undefined;
  return {
    ...run,
    tenantId,
    status: applied.status,
    output: null,
    error: null,
    idempotencyKey: inserted.idempotencyKey,
    startNodeId: inserted.startNodeId,
    scheduleId: inserted.scheduleId ?? null,
    nominalTime: inserted.nominalTime ?? null,
    concurrencyKey: inserted.concurrencyKey,
    eventSeq: applied.seq,
    updatedAt: applied.now,
    finishedAt: null,
  };
}

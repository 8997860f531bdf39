import { RunEventRepository, TransientDbError, type NewRun, type RunEntity, type RunState, type Transaction } from '@weft/persistence';
import { runFlowOf, RunStatus, type RunEvent, type WorkflowDag } from '../index.js';
import type { Admission, RunSlots } from './run-slots.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { refuseDifferentStart, runOfKey } from './idempotent-starts.js';
import type { AppliedOutcome, EventOutcome, LockedRunEvents } from './event-outcome.js';
import { DEFAULT_RUN_PRIORITY, type StartRunInput } from './inputs.js';
import { snapshotNodes } from './snapshot-cache.js';
import { newRunTrace } from './trace-context.js';
import { versionToRun } from './versions.js';

/**
 * A run start inside a caller's transaction: the run, and whether it is new. A new run comes with
 * what its start did, for {@link AfterCommit} once the caller's transaction committed.
 */
export type StartedIn = { runId: string; created: false } | CreatedIn;

/** A run created inside a caller's transaction (see {@link StartedIn}). */
export interface CreatedIn {
  runId: string;
  created: true;
  /** What the start did: its RunStarted applied, the run queued for a slot, or the run cancelled at once. */
  outcome: EventOutcome;
  /**
   * The new run's row as the caller's transaction leaves it, when the start left it RUNNING or
   * QUEUED (without output or error): for an answer that would otherwise read it back. Absent for
   * a run that ended at its start (its output or error were computed by the machine). Its `input`
   * and `config` are the values as given, not as read back from `jsonb` (which orders object keys
   * its own way).
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
 * as every other path, applied on the locked run row through the same {@link LockedRunEvents} as
 * the event pipeline's.
 */
export class RunStarts {
  /** `events` applies the starts and cancellations; `slots` admits a run of a concurrency key. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly events: LockedRunEvents,
    private readonly slots: RunSlots,
  ) {}

  /**
   * Creates a run (UUIDv7 id, RUNNING) and applies its RunStarted in `m`, or returns the run an
   * already used `idempotencyKey` names (also when a concurrent start with the key committed
   * first: the partial unique index decides) when it was started with the same workflow, version,
   * input and config ({@link refuseDifferentStart}); a schedule's fire returns it whatever they
   * are (the key names the fire). Input values must have been checked by the caller.
   *
   * A workflow with `concurrency` whose key's group has no free slot: by its strategy, the run is
   * created QUEUED with no task (`queue`: it starts when a slot frees), or CANCELLED at once
   * (`cancel_newest`), or the group's oldest running run is cancelled in `m` and this one starts
   * (`cancel_oldest`).
   * @throws WeftError NOT_FOUND (unknown workflow or version), BAD_USER_INPUT (deprecated
   * version, a concurrency key that does not resolve), CONFLICT (the key names a run started
   * with something else); MachineError when the machine rejects the
   * start (it rolls back with `m`).
   */
  async startIn(m: Transaction, tenantId: string, input: StartRunInput, scheduled?: ScheduledBy): Promise<StartedIn> {
    const { ctx } = this;
    const events = new RunEventRepository(m);
    if (input.idempotencyKey !== undefined) {
      const existing = await runOfKey(m, tenantId, input);
      if (existing && !scheduled) await refuseDifferentStart(m, tenantId, input, existing);
      if (existing) return { runId: existing.id, created: false };
    }
    const { version, dbNow } = await versionToRun(m, tenantId, input.workflowId, input.version);
    ctx.noteDbClock(dbNow);
    if (!scheduled) ctx.startVersions.set(tenantId, input.workflowId, input.version, version);
    const dag = await ctx.dag(m, tenantId, input.workflowId, version);
    const now = ctx.testClock?.() ?? dbNow;
    const runId = ctx.newId();
    const group = this.slots.groupOf(dag, input.workflowId, input.input ?? {}, input.config ?? {});
    const admission: Admission = group ? await this.slots.admission(m, tenantId, group, dag, now) : { start: true };
    const { run, row } = newTopRun(runId, input, version, dag, now, {
      status: !admission.start && admission.strategy === 'queue' ? RunStatus.Queued : RunStatus.Running,
      group,
      scheduled,
    });
    const inserted = await events.insertRun(tenantId, row);
    if (!inserted) {
      // A concurrent start with the same key committed first: return the winner, if it is the same start.
      const winner = await runOfKey(m, tenantId, input);
      if (!winner) throw new TransientDbError(undefined, 'idempotency key owner vanished; retrying');
      if (!scheduled) await refuseDifferentStart(m, tenantId, input, winner, version);
      return { runId: winner.id, created: false };
    }
    if (!admission.start) {
      const why = `concurrency limit ${admission.limit} reached for key ${JSON.stringify(group!.key)}`;
      if (admission.strategy === 'queue') {
        this.ctx.observe((o) => o.flowHeld?.({ reason: 'CONCURRENCY_LIMIT', count: 1 }));
        // No event: the run waits, QUEUED, for a slot (event_seq 0).
        const outcome: EventOutcome = { kind: 'direct', status: RunStatus.Queued, seq: 0, now, nested: [], wakes: [] };
        return { runId, created: true, outcome, row: startedRow(tenantId, run, row, outcome) };
      }
      if (admission.strategy === 'cancel_newest') {
        this.ctx.observe((o) => o.concurrencyCancelled?.({ tenantId, runId, strategy: 'cancel_newest' }));
        const ev: RunEvent = { type: 'RunCancelled', reason: `${why} (cancel_newest)` };
        const cancelled = await this.events.applyCommand({ m, tenantId, run, nodes: new Map(), dag, ev, now });
        return { runId, created: true, outcome: cancelled };
      }
      const oldest = await this.slots.oldestActive(m, tenantId, group!.groupKey);
      const superseded = oldest === undefined ? undefined : await this.cancelIn(m, tenantId, oldest, `superseded by run ${runId} (cancel_oldest)`, now);
      if (superseded) this.ctx.observe((o) => o.concurrencyCancelled?.({ tenantId, runId: oldest!, strategy: 'cancel_oldest' }));
      const started = await this.start(m, tenantId, run, dag, input, now);
      if (superseded) started.nested.push({ runId: oldest!, outcome: superseded });
      return { runId, created: true, outcome: started, row: startedRow(tenantId, run, row, started) };
    }
    const started = await this.start(m, tenantId, run, dag, input, now);
    return { runId, created: true, outcome: started, row: startedRow(tenantId, run, row, started) };
  }

  /** Applies the RunStarted of new run `run` in `m`. @throws MachineError when the machine rejects it. */
  private start(m: Transaction, tenantId: string, run: RunState, dag: WorkflowDag, input: StartRunInput, now: Date): Promise<AppliedOutcome> {
    const ev: RunEvent = input.startNodeId ? { type: 'RunStarted', startNodeId: input.startNodeId } : { type: 'RunStarted' };
    return this.events.applyCommand({ m, tenantId, run, nodes: new Map(), dag, ev, now });
  }

  /**
   * Applies RunCancelled with `reason` to run `runId` in `m` when it is still RUNNING; returns
   * what it did (for {@link AfterCommit}), or undefined when the run is gone or already ended.
   */
  async cancelIn(m: Transaction, tenantId: string, runId: string, reason: string, now: Date): Promise<AppliedOutcome | undefined> {
    const events = new RunEventRepository(m);
    const run = await events.lock(tenantId, runId);
    if (!run || (run.status !== RunStatus.Running && run.status !== RunStatus.Queued)) return undefined;
    const tasks = await events.taskStates(tenantId, runId);
    const dag = await this.ctx.dag(m, tenantId, run.workflowId, run.version);
    const cancelled = await this.events.applyReport({ m, tenantId, run, nodes: snapshotNodes(tasks), dag, ev: { type: 'RunCancelled', reason }, now });
    return cancelled.kind === 'rejected' ? undefined : cancelled;
  }
}

/**
 * The row of new run `run` (inserted as `inserted`) once `outcome` was applied to it: its
 * `event_seq`, status and `updated_at` (the event's clock) as the event's history write sets them.
 * Undefined when the start ended the run (the machine wrote its output, error and end).
 */
export function startedRow(tenantId: string, run: RunState, inserted: NewRun, outcome: EventOutcome): RunEntity | undefined {
  if (outcome.status !== RunStatus.Running && outcome.status !== RunStatus.Queued) return undefined;
  const armed = outcome.kind === 'applied' ? outcome.transition.actions.find((a) => a.type === 'ArmDeadline') : undefined;
  return {
    ...run,
    deadlineAt: armed?.deadlineAt ?? null,
    tenantId,
    status: outcome.status,
    output: null,
    error: null,
    idempotencyKey: inserted.idempotencyKey,
    startNodeId: inserted.startNodeId,
    scheduleId: inserted.scheduleId ?? null,
    nominalTime: inserted.nominalTime ?? null,
    concurrencyKey: inserted.concurrencyKey,
    labels: inserted.labels,
    eventSeq: outcome.seq,
    updatedAt: outcome.now,
    finishedAt: null,
    pauseReason: null,
  };
}

/**
 * A new top-level run of `input` on `version` of `dag`, created at `now` with id `runId`: its
 * state for the machine (`event_seq` 0) and its row as a start inserts it, with its row `status`,
 * its concurrency group and key (`group`) and the schedule that fires it, when any.
 */
export function newTopRun(
  runId: string,
  input: StartRunInput,
  version: number,
  dag: WorkflowDag,
  now: Date,
  opts: { status: NewRun['status']; group?: { groupKey: string; key: string | null }; scheduled?: ScheduledBy },
): { run: RunState; row: NewRun } {
  const trace = newRunTrace(input.traceparent);
  const run: RunState = {
    id: runId,
    workflowId: input.workflowId,
    version,
    status: RunStatus.Running,
    input: input.input ?? {},
    config: input.config ?? {},
    eventSeq: 0,
    pausedAt: null,
    pauseReason: null,
    deadlineAt: null,
    decidedStatus: null,
    decidedError: null,
    decidedOutput: null,
    parentRunId: null,
    parentTaskId: null,
    parentAttempt: null,
    depth: 0,
    rootRunId: null,
    createdAt: now,
    traceparent: trace.traceparent,
    traceCallerSpan: trace.callerSpan,
    priority: input.priority ?? runFlowOf(dag.definition).priority ?? DEFAULT_RUN_PRIORITY,
    concurrencyGroup: opts.group?.groupKey ?? null,
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
    scheduleId: opts.scheduled?.scheduleId ?? null,
    nominalTime: opts.scheduled?.nominalTime ?? null,
    priority: run.priority,
    status: opts.status,
    concurrencyGroup: opts.group?.groupKey ?? null,
    concurrencyKey: opts.group?.key ?? null,
    labels: input.labels ?? {},
    now,
  };
  return { run, row };
}

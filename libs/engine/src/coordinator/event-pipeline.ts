import {
  AttemptLogRepository,
  attemptLogWrite,
  HistoryRepository,
  RunEventRepository,
  isInvalidDataError,
  isUuid,
  type AttemptLogRecord,
  type RunState,
  type TaskState,
  type Transaction,
} from '@weft/persistence';
import {
  assertNever,
  isWithWorker,
  RunStatus,
  TaskStatus,
  WeftError,
  type Action,
  type NodeFailed,
  type NodeState,
  type RunChange,
  type RunEvent,
  type TimerFired,
} from '../index.js';
import { ActionWriter } from './action-writer.js';
import { AfterCommit, type TimerFiring } from './after-commit.js';
import type { BacklogDispatch } from './backlog-dispatch.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message, userError } from './error-mapping.js';
import type { AppliedOutcome, DirectOutcome, EventOutcome, LockedEvent, LockedRunEvents, RejectedOutcome } from './event-outcome.js';
import type { FencedSteps } from './fenced-steps.js';
import { historyEntry, type EventRecord } from './history.js';
import type { FireTimerInput, ReportResult } from './inputs.js';
import { isAttempt, reportField } from './input-checks.js';
import { finishedNote } from './run-notes.js';
import type { RunSlots } from './run-slots.js';
import { decidedAfter } from './run-finally.js';
import { snapshotNodes } from './snapshot-cache.js';
import { sanitizeText } from './storable.js';

const RUN_NOT_FOUND = 'run not found';

/** What an event is built from: the locked run's state gives the event and, for a retry, the version to decide with. */
export type BuildEvent = (run: RunState) => { ev: RunEvent; version?: number };

/** How {@link EventPipeline} applies an event to an existing run. */
interface ToRun {
  /** True for user commands: a machine rejection rolls back and is thrown; false records it in the history. */
  rejectedRollsBack: boolean;
  /** A worker's lease token: a report for its task's current, active attempt under another token is ignored. */
  leaseToken?: string;
  /** Eager dispatch: the reporting worker's queue. */
  takeFrom?: string;
  /** The task the event reports on, read with the run's lock (null: none). */
  taskId?: string | null;
}

/** An outcome with what the snapshot cache keeps of it once committed: the node states and, when known, the run row. */
interface Kept {
  outcome: EventOutcome;
  keep?: { nodes: Map<string, NodeState>; run?: RunState };
}

/**
 * The event pipeline: the only code that turns events into persisted state. Every event runs in
 * one tenant transaction:
 *
 * BEGIN with `set_config('app.tenant_id', …, true)`; lock the run row (which serializes a run's
 * events across processes) and, in the same statement, read the database clock (the event's
 * now) and the reported task; the node states are those this process kept after the run's
 * previous event (the snapshot cache), else every task row (no inputs or outputs); get the DAG
 * from the per-version cache; apply the event through the {@link LockedRunEvents} (the machine,
 * its actions' rows, whose last writes go in one statement with the history row and the run
 * update); COMMIT. The opening travels with the lock and the last write with the COMMIT
 * (`withTenant`), so a chain's step is two round trips. Then {@link AfterCommit}.
 *
 * A transient failure retries the whole event with a small jittered backoff, then throws
 * WeftError `TRANSIENT`. A rejected user command rolls back and leaves no history row; an ignored
 * or rejected worker or scheduler report keeps its history row. What the database still refuses
 * as data ({@link isInvalidDataError}, e.g. a NUL character a template computed) is never
 * retried: a report is applied once more as its failure, a user command is refused with
 * BAD_USER_INPUT. So no report can leave a run RUNNING for good.
 */
export class EventPipeline implements TimerFiring {
  /** What follows each committed event; the parents' tasks it wakes are fired through this pipeline. */
  readonly after: AfterCommit;

  /**
   * `events` applies an event to a locked run, `slots` readmits a retried run and frees a failed
   * run's slot, `fenced` writes workers' reports without the lock when it can, and `backlog` gets
   * the attempts committed events dispatch.
   */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly events: LockedRunEvents,
    private readonly slots: RunSlots,
    private readonly fenced: FencedSteps,
    backlog: BacklogDispatch,
  ) {
    this.after = new AfterCommit(ctx, backlog, this);
  }

  /**
   * Applies a worker/scheduler event; unknown runs and machine rejections are reported as ignored.
   * An event the database refuses to store is applied once more as its failure: a NodeFailed of
   * the same attempt, or, for a timer, the failure of the waiting task and the run. `leaseToken`
   * fences a worker's report: one whose token is not its task's current, active attempt's is
   * recorded as ignored (`stale lease: …`) without reaching the machine.
   *
   * `log`, a report's attempt logs, is written while that attempt is RUNNING under the report's
   * lease, so a stale report leaves none: on the fenced path as a part of the event's statement,
   * else on its own just before the locking path (a write that fails then throws, a transient
   * error: the worker tries the report again).
   */
  async report(tenantId: string, runId: string, ev: RunEvent, leaseToken?: string, takeFrom?: string, log?: AttemptLogRecord): Promise<ReportResult> {
    if (!isUuid(tenantId) || !isUuid(runId)) return { ignored: RUN_NOT_FOUND };
    if ('attempt' in ev && !isAttempt(ev.attempt)) return { ignored: `invalid attempt ${String(ev.attempt)}` };
    if (this.ctx.fencedSteps && (ev.type === 'NodeCompleted' || ev.type === 'NodeFailed') && isUuid(leaseToken) && isUuid(ev.taskId)) {
      const fenced = await this.fenced.apply(tenantId, runId, ev, leaseToken, takeFrom, log);
      if (fenced) {
        await this.after.run(tenantId, runId, fenced);
        return reportResultOf(fenced);
      }
    }
    if (log) await this.writeLog(tenantId, log);
    let outcome: EventOutcome | undefined;
    try {
      outcome = await this.applyToRun(tenantId, runId, () => ({ ev }), { rejectedRollsBack: false, leaseToken, takeFrom, taskId: reportedTask(ev) });
    } catch (err) {
      if (!isInvalidDataError(err) || (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed' && ev.type !== 'TimerFired')) throw err;
      const reason = sanitizeText(`could not store the ${ev.type} of node ${ev.nodeId}: ${message(err)} (INVALID_DATA)`);
      this.ctx.log.warn(`run ${runId}: ${reason}; applying it as a failure`);
      if (ev.type === 'TimerFired') {
        outcome = await this.failWait(tenantId, runId, ev, reason);
      } else {
        const failed: NodeFailed = { type: 'NodeFailed', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, error: reason };
        if (ev.type === 'NodeFailed' && ev.retryable === false) failed.retryable = false;
        outcome = await this.applyToRun(tenantId, runId, () => ({ ev: failed }), {
          rejectedRollsBack: false,
          leaseToken,
          takeFrom,
          taskId: reportedTask(failed),
        });
      }
    }
    if (!outcome) return { ignored: RUN_NOT_FOUND };
    await this.after.run(tenantId, runId, outcome);
    return reportResultOf(outcome);
  }

  /**
   * Writes a report's logs on their own, fenced by the attempt's lease: through the step committer
   * (one more statement in a message that carries other reports), or alone should its message fail.
   */
  private async writeLog(tenantId: string, log: AttemptLogRecord): Promise<void> {
    try {
      await this.fenced.committer.submit({ tenantId, ...attemptLogWrite(tenantId, log) });
    } catch {
      await new AttemptLogRepository(this.ctx.ds).write(tenantId, log);
    }
  }

  /** The scheduler's RunTimedOut for a run whose deadline passed; see {@link report}. */
  async timeOut(tenantId: string, runId: string): Promise<ReportResult> {
    return this.report(tenantId, runId, { type: 'RunTimedOut' });
  }

  /** The scheduler's StartTimedOut for an attempt no worker started in time; see {@link report}. */
  async startTimedOut(tenantId: string, runId: string, t: { taskId: string; nodeId: string; attempt: number }): Promise<ReportResult> {
    return this.report(tenantId, runId, { type: 'StartTimedOut', ...t });
  }

  /** The scheduler's (or an ended child run's) TimerFired for a WAITING task; see {@link report}. */
  async fireTimer(tenantId: string, t: FireTimerInput): Promise<ReportResult> {
    return this.report(tenantId, t.runId, { type: 'TimerFired', taskId: reportField(t.taskId), nodeId: reportField(t.nodeId) });
  }

  /**
   * Applies a user command; unknown runs and rejections become WeftErrors. A rejected command
   * rolls back and writes nothing (no history row), so refused commands cannot grow a run's
   * history; a value the database refuses becomes BAD_USER_INPUT naming `what`. Resolves the
   * outcome once committed and followed by {@link AfterCommit}.
   */
  async command(tenantId: string, runId: string, what: string, build: BuildEvent): Promise<EventOutcome> {
    if (!isUuid(tenantId) || !isUuid(runId)) throw new WeftError('NOT_FOUND', `run ${runId} not found`);
    let outcome: EventOutcome | undefined;
    try {
      outcome = await this.applyToRun(tenantId, runId, build, { rejectedRollsBack: true });
    } catch (err) {
      throw userError(err, what);
    }
    if (!outcome) throw new WeftError('NOT_FOUND', `run ${runId} not found`);
    await this.after.run(tenantId, runId, outcome);
    return outcome;
  }

  /**
   * The last resort for a TimerFired the database refused: in one transaction, the waiting task
   * (if it is still waiting) and the run (if not finished) fail with `reason`, like a permanent
   * routing error fails the run in the machine; the history row carries the timer and the reason.
   */
  private async failWait(tenantId: string, runId: string, ev: TimerFired, reason: string): Promise<DirectOutcome | undefined> {
    return this.ctx.inTenant('event', tenantId, async (m) => {
      const events = new RunEventRepository(m);
      const run = await events.lock(tenantId, runId);
      if (!run) return undefined;
      const waiting = isUuid(ev.taskId) ? await events.isWaiting(tenantId, runId, ev.taskId) : false;
      const actions: Action[] = [];
      if (waiting) actions.push({ type: 'ResolveWait', taskId: ev.taskId, nodeId: ev.nodeId, status: TaskStatus.Failed, reason });
      const finished = run.status !== RunStatus.Running;
      if (!finished) actions.push({ type: 'FinishRun', status: RunStatus.Failed, reason });
      const now = await this.ctx.clock(m, tenantId);
      const dag = await this.ctx.dag(m, tenantId, run.workflowId, run.version);
      const written = await new ActionWriter(m, tenantId, run, now, dag).write(actions);
      const seq = run.eventSeq + 1;
      const ignored = actions.length === 0 ? 'timer no longer pending' : undefined;
      await this.appendHistory(m, tenantId, runId, { seq, ev, now, actions, ...(ignored ? { ignored } : {}), error: reason, patch: written.run });
      const outcome: DirectOutcome = {
        kind: 'direct',
        status: finished ? (run.status as RunStatus) : RunStatus.Failed,
        seq,
        now,
        ...(finished ? {} : { finished: finishedNote(run, RunStatus.Failed, now, new Map(), reason) }),
        nested: [],
        wakes: [],
      };
      if (!finished && run.concurrencyGroup) await this.slots.promote(m, tenantId, run.concurrencyGroup, outcome, 0);
      return outcome;
    });
  }

  /**
   * One event on an existing run, in its own tenant transaction, retried when transient.
   * Returns undefined when the tenant has no such run. The event's clock reading is the
   * database's `clock_timestamp()` taken after the run lock (or the test clock).
   */
  private async applyToRun(tenantId: string, runId: string, build: BuildEvent, opts: ToRun): Promise<EventOutcome | undefined> {
    const { ctx } = this;
    const done = await ctx.inTenant('event', tenantId, async (m): Promise<Kept | undefined> => {
      const events = new RunEventRepository(m);
      const locked = await events.lockForEvent(tenantId, runId, opts.taskId ?? null, opts.takeFrom ?? null);
      if (!locked) return undefined;
      ctx.noteDbClock(locked.dbNow);
      const { run, task } = locked;
      const { ev, version } = build(run);
      // The node states: those this process left after the run's previous event when nothing
      // else has applied one since (same event_seq, checked under the row lock) — then the
      // reported task's row read with the lock is all that is needed — else every task row,
      // read now (a statement after the lock, so it sees every event committed before it).
      const reported = reportedTask(ev);
      const cached = reported === null || reported === task?.id ? ctx.snapshots.take(tenantId, runId, run.eventSeq) : undefined;
      const rows = cached ? (task ? [task] : []) : await events.taskStates(tenantId, runId);
      const now = ctx.testClock?.() ?? locked.dbNow;
      const stale = opts.leaseToken === undefined ? undefined : staleLease(ev, rows, opts.leaseToken);
      if (stale !== undefined) {
        const seq = run.eventSeq + 1;
        await this.appendHistory(m, tenantId, run.id, { seq, ev, now, actions: [], ignored: stale, patch: {} });
        // The node states taken from the cache are as they were: the cache keeps them.
        return { outcome: { kind: 'ignored', reason: stale, status: run.status as RunStatus, seq, now }, ...(cached ? { keep: { nodes: cached } } : {}) };
      }
      const nodes = cached ?? snapshotNodes(rows);
      const dag = await ctx.dag(m, tenantId, run.workflowId, version ?? run.version);
      // A retried run that ended takes its concurrency key's slot again, or the retry is refused.
      if (ev.type === 'RunRetried') await this.slots.readmit(m, tenantId, run, dag, ev.input ?? run.input, ev.config ?? run.config, now);
      // A queue reserved for other tenants gives this tenant nothing, not even by eager dispatch.
      const takeFrom = locked.mayTake === false ? undefined : opts.takeFrom;
      const e: LockedEvent = { m, tenantId, run, nodes, dag, ev, now, ...(takeFrom === undefined ? {} : { takeFrom }) };
      const result: AppliedOutcome | RejectedOutcome = opts.rejectedRollsBack ? await this.events.applyCommand(e) : await this.events.applyReport(e);
      if (locked.slotQueue && (ev.type === 'NodeCompleted' || ev.type === 'NodeFailed')) result.slotFreedOn = locked.slotQueue;
      if (result.kind === 'rejected') return { outcome: result };
      if (ev.type === 'TimerFired' && result.transition.ignored !== undefined && isUuid(ev.taskId)) {
        // A timer nobody will act on again must not be claimed again after its lease; one that
        // came too early for a retry is set again for the retry's due time.
        await events.rearmTimer(tenantId, ev.taskId, result.transition.rearmAt ?? null);
        // A write the change does not list: watchers read the run again.
        const change = result.change;
        result.change = () => rereadOf(change());
      }
      // The run row as this event leaves it, for the run's next report decided from memory; not
      // after a retry, which may change the version, input and config.
      const paused = result.status === RunStatus.Paused;
      const runAfter =
        ev.type === 'RunRetried'
          ? undefined
          : {
              ...run,
              eventSeq: result.seq,
              status: result.status,
              pausedAt: paused ? (run.pausedAt ?? result.now) : null,
              // A paused run's events never take the fenced path, which alone reads these.
              pauseReason: paused ? run.pauseReason : null,
              ...decidedAfter(run, result.transition.actions),
            };
      return { outcome: result, keep: { nodes: result.nodes, ...(runAfter ? { run: runAfter } : {}) } };
    });
    // Committed: the node states now match the database at the new event_seq.
    if (done?.keep) ctx.snapshots.put(tenantId, runId, done.outcome.seq, done.keep.nodes, done.keep.run, done.outcome.now);
    return done?.outcome;
  }

  /** Appends the history row of `record` and updates the run with it, in one statement. */
  private async appendHistory(m: Transaction, tenantId: string, runId: string, record: EventRecord): Promise<void> {
    await new HistoryRepository(m).append(tenantId, runId, historyEntry(record));
  }
}

/**
 * The caller's answer to a report with `outcome`: why it changed nothing (`ignored`: the
 * coordinator's or the machine's reason, or the machine's rejection), or the attempt the
 * reporting worker took.
 */
function reportResultOf(outcome: EventOutcome): ReportResult {
  switch (outcome.kind) {
    case 'ignored':
      return { ignored: outcome.reason };
    case 'rejected':
      return { ignored: outcome.error.message };
    case 'direct':
      return {};
    case 'applied':
      if (outcome.transition.ignored !== undefined) return { ignored: outcome.transition.ignored };
      return outcome.taken ? { taken: outcome.taken } : {};
    default:
      return assertNever(outcome);
  }
}

/** The task an event reports on (NodeCompleted, NodeFailed, TimerFired), or null when it names none or no UUID. */
export function reportedTask(ev: RunEvent): string | null {
  return 'taskId' in ev && isUuid(ev.taskId) ? ev.taskId : null;
}

/**
 * Why a worker report carrying `token` is ignored as stale, or undefined when it is not: only a
 * NodeCompleted/NodeFailed for its task's current, active attempt is checked, against the task's
 * `lease_token` (other stale reports are the machine's to ignore, with its own reason).
 */
function staleLease(ev: RunEvent, tasks: readonly TaskState[], token: string): string | undefined {
  if (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed') return undefined;
  const task = tasks.find((n) => n.id === ev.taskId);
  if (!task || task.attempt !== ev.attempt || !isWithWorker(task.status) || task.leaseToken === token.toLowerCase()) return undefined;
  return `stale lease: attempt ${ev.attempt} of node ${task.nodeId} was re-dispatched; this execution's lease was superseded`;
}

/** `change` marked to be read again rather than applied (undefined stays undefined). */
function rereadOf(change: RunChange | undefined): RunChange | undefined {
  return change && { ...change, reread: true };
}

import { v4 as uuidv4 } from 'uuid';
import { HistoryRepository, RunEventRepository, isInvalidDataError, isUuid, type HistoryEntry, type RunState, type TaskState, type Transaction } from '@weft/persistence';
import {
  isWithWorker,
  Machine,
  MachineError,
  RunStatus,
  TaskStatus,
  WeftError,
  type Action,
  type NodeFailed,
  type RunChange,
  type RunEvent,
  type RunSnapshot,
  type TimerFired,
  type Transition,
} from '../index.js';
import { ActionWriter } from './action-writer.js';
import type { AfterCommit } from './after-commit.js';
import { noteFinished, noteRunChanges } from './run-notes.js';
import { buildRunChange } from './run-change.js';
import type { Applied, ApplyLocked, ApplyOptions } from './applied.js';
import { ChildRuns } from './child-runs.js';
import { FencedSteps } from './fenced-steps.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message, userError } from './error-mapping.js';
import { historyEntry, historyEvent, type EventRecord } from './history.js';
import type { ReportResult } from './inputs.js';
import { isAttempt } from './input-checks.js';
import { RunSlots } from './run-slots.js';
import { RunStore } from './run-store.js';
import { refuseOverfullSignalBuffer } from './signal-buffer.js';
import { snapshotNodes } from './snapshot-cache.js';
import { sanitizeText } from './storable.js';

const RUN_NOT_FOUND = 'run not found';

/** What an event is built from: the locked run's state gives the event and, for a retry, the version to decide with. */
export type BuildEvent = (run: RunState) => { ev: RunEvent; version?: number };

/**
 * The event pipeline: the only code that turns events into persisted state. Every event runs in
 * one tenant transaction:
 *
 * BEGIN with `set_config('app.tenant_id', …, true)`; lock the run row (which serializes a run's
 * events across processes) and, in the same statement, read the database clock (the event's
 * now) and the reported task; the node states are those this process kept after the run's
 * previous event (the snapshot cache), else every task row (no inputs or outputs); get the DAG
 * from the per-version cache; `Machine.apply`; persist the actions in order
 * ({@link ActionWriter}), whose last writes go in one statement with the history row and the run
 * update; COMMIT. The opening travels with the lock and the last write with the COMMIT
 * (`withTenant`), so a chain's step is two round trips. Then {@link AfterCommit}.
 *
 * A transient failure retries the whole event with a small jittered backoff, then throws
 * WeftError `TRANSIENT`. A rejected user command rolls back and leaves no history row; an ignored
 * or rejected worker or scheduler report keeps its history row. What the database still refuses
 * as data ({@link isInvalidDataError}, e.g. a NUL character a template computed) is never
 * retried: a report is applied once more as its failure, a user command is refused with
 * BAD_USER_INPUT. So no report can leave a run RUNNING for good.
 */
export class EventPipeline {
  private readonly linked: ChildRuns;
  /** Run slots of concurrency keys: a run that ends frees one. */
  readonly slots: RunSlots;
  /** Reports decided from memory and written fenced, when they can be. */
  readonly fenced: FencedSteps;

  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly after: AfterCommit,
  ) {
    this.linked = new ChildRuns(ctx, this.applyLocked);
    this.slots = new RunSlots(ctx, this.applyLocked);
    this.fenced = new FencedSteps(ctx);
  }

  /**
   * Applies a worker/scheduler event; unknown runs and machine rejections are reported as ignored.
   * An event the database refuses to store is applied once more as its failure: a NodeFailed of
   * the same attempt, or, for a timer, the failure of the waiting task and the run. `leaseToken`
   * fences a worker's report: one whose token is not its task's current, active attempt's is
   * recorded as ignored (`stale lease: …`) without reaching the machine.
   */
  async report(tenantId: string, runId: string, ev: RunEvent, leaseToken?: string, takeFrom?: string): Promise<ReportResult> {
    if (!isUuid(tenantId) || !isUuid(runId)) return { ignored: RUN_NOT_FOUND };
    if ('attempt' in ev && !isAttempt(ev.attempt)) return { ignored: `invalid attempt ${String(ev.attempt)}` };
    let applied: Applied | undefined;
    if (this.ctx.fencedSteps && (ev.type === 'NodeCompleted' || ev.type === 'NodeFailed') && isUuid(leaseToken) && isUuid(ev.taskId)) {
      applied = await this.fenced.apply(tenantId, runId, ev, leaseToken, takeFrom);
      if (applied) {
        await this.after.run(tenantId, runId, applied);
        return applied.taken ? { taken: applied.taken } : {};
      }
    }
    try {
      applied = await this.applyToRun(tenantId, runId, () => ({ ev }), { rejectedRollsBack: false, leaseToken, takeFrom, taskId: reportedTask(ev) });
    } catch (err) {
      if (!isInvalidDataError(err) || (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed' && ev.type !== 'TimerFired')) throw err;
      const reason = sanitizeText(`could not store the ${ev.type} of node ${ev.nodeId}: ${message(err)} (INVALID_DATA)`);
      this.ctx.log.warn(`run ${runId}: ${reason}; applying it as a failure`);
      if (ev.type === 'TimerFired') {
        applied = await this.failWait(tenantId, runId, ev, reason);
      } else {
        const failed: NodeFailed = { type: 'NodeFailed', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, error: reason };
        if (ev.type === 'NodeFailed' && ev.retryable === false) failed.retryable = false;
        applied = await this.applyToRun(tenantId, runId, () => ({ ev: failed }), { rejectedRollsBack: false, leaseToken, takeFrom, taskId: reportedTask(failed) });
      }
    }
    if (!applied) return { ignored: RUN_NOT_FOUND };
    await this.after.run(tenantId, runId, applied);
    if (applied.ignored !== undefined) return { ignored: applied.ignored };
    if (applied.rejected) return { ignored: applied.rejected.message };
    if (applied.transition?.ignored !== undefined) return { ignored: applied.transition.ignored };
    return applied.taken ? { taken: applied.taken } : {};
  }

  /**
   * Applies a user command; unknown runs and rejections become WeftErrors. A rejected command
   * rolls back and writes nothing (no history row), so refused commands cannot grow a run's
   * history; a value the database refuses becomes BAD_USER_INPUT naming `what`.
   */
  async command(tenantId: string, runId: string, what: string, build: BuildEvent): Promise<Applied> {
    if (!isUuid(tenantId) || !isUuid(runId)) throw new WeftError('NOT_FOUND', `run ${runId} not found`);
    let applied: Applied | undefined;
    try {
      applied = await this.applyToRun(tenantId, runId, build, { rejectedRollsBack: true });
    } catch (err) {
      throw userError(err, what);
    }
    if (!applied) throw new WeftError('NOT_FOUND', `run ${runId} not found`);
    await this.after.run(tenantId, runId, applied);
    return applied;
  }

  /**
   * The last resort for a TimerFired the database refused: in one transaction, the waiting task
   * (if it is still waiting) and the run (if not finished) fail with `reason`, like a permanent
   * routing error fails the run in the machine; the history row carries the timer and the reason.
   */
  private async failWait(tenantId: string, runId: string, ev: TimerFired, reason: string): Promise<Applied | undefined> {
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
      const applied: Applied = { status: finished ? (run.status as RunStatus) : RunStatus.Failed, seq, jobs: [], now };
      if (!finished) noteFinished(applied, run, RunStatus.Failed, now, new Map(), reason);
      if (!finished && run.concurrencyGroup) await this.slots.promote(m, tenantId, run.concurrencyGroup, applied, 0);
      return applied;
    });
  }

  /**
   * One event on an existing run, in its own tenant transaction, retried when transient.
   * Returns undefined when the tenant has no such run. The event's clock reading is the
   * database's `clock_timestamp()` taken after the run lock (or the test clock).
   */
  private async applyToRun(
    tenantId: string,
    runId: string,
    build: BuildEvent,
    opts: ApplyOptions & { leaseToken?: string; taskId?: string | null },
  ): Promise<Applied | undefined> {
    const { ctx } = this;
    let runAfter: RunState | undefined;
    const applied = await ctx.inTenant('event', tenantId, async (m) => {
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
        return { ignored: stale, status: run.status as RunStatus, seq, jobs: [], now, ...(cached ? { nodes: cached } : {}) } satisfies Applied;
      }
      const nodes = cached ?? snapshotNodes(rows);
      const dag = await ctx.dag(m, tenantId, run.workflowId, version ?? run.version);
      // A retried run that ended takes its concurrency key's slot again, or the retry is refused.
      if (ev.type === 'RunRetried') await this.slots.readmit(m, tenantId, run, dag, ev.input ?? run.input, ev.config ?? run.config, now);
      // A queue reserved for other tenants gives this tenant nothing, not even by eager dispatch.
      const result = await this.applyLocked(m, tenantId, run, nodes, dag, ev, now, locked.mayTake === false ? { ...opts, takeFrom: undefined } : opts);
      if (locked.slotQueue && (ev.type === 'NodeCompleted' || ev.type === 'NodeFailed')) result.slotFreedOn = locked.slotQueue;
      if (ev.type === 'TimerFired' && result.transition?.ignored !== undefined && isUuid(ev.taskId)) {
        // A timer nobody will act on again must not be claimed again after its lease; one that
        // came too early for a retry is set again for the retry's due time.
        await events.rearmTimer(tenantId, ev.taskId, result.transition.rearmAt ?? null);
        // A write the change does not list: watchers read the run again.
        const change = result.change;
        if (change) result.change = () => rereadOf(change());
      }
      // The run row as this event leaves it, for the run's next report decided from memory; not
      // after a retry, which may change the version, input and config.
      runAfter = ev.type === 'RunRetried' ? undefined : { ...run, eventSeq: result.seq, status: result.status };
      return result;
    });
    // Committed: the node states now match the database at the new event_seq.
    if (applied?.nodes) ctx.snapshots.put(tenantId, runId, applied.seq, applied.nodes, runAfter, applied.now);
    return applied;
  }

  /**
   * The heart of an event, on a run row this transaction locked (or just inserted): builds the
   * snapshot, applies the machine, persists the actions and the history record, then follows the
   * linked runs. A machine rejection either rolls back (`rejectedRollsBack`, for user commands:
   * the MachineError is thrown) or, for worker/scheduler reports, is recorded in the history
   * (`error`) and returned as `rejected`.
   */
  readonly applyLocked: ApplyLocked = async (m, tenantId, run, nodes, dag, ev, now, opts) => {
    const { ctx } = this;
    // A run QUEUED for a slot of its concurrency key has no task yet; the machine takes it for a
    // running one (a cancel ends it, a signal is buffered for it), and it stays QUEUED otherwise.
    const queued = run.status === RunStatus.Queued;
    const snapshot: RunSnapshot = {
      id: run.id,
      workflowId: run.workflowId,
      version: run.version,
      status: queued ? RunStatus.Running : (run.status as RunStatus),
      context: { input: run.input, config: run.config, tasks: new Map() },
      nodes,
      depth: run.depth,
    };
    const deps = ctx.machineDeps(new RunStore(m, tenantId, run.id, run.rootRunId ?? run.id), now);
    const seq = run.eventSeq + 1;

    let transition: Transition;
    try {
      transition = await new Machine(dag, snapshot, deps).apply(ev);
    } catch (err) {
      if (!(err instanceof MachineError) || opts.rejectedRollsBack) throw err;
      await this.appendHistory(m, tenantId, run.id, { seq, ev: historyEvent(ev, dag, nodes), now, actions: [], error: err.message, patch: {} });
      return { rejected: err, status: run.status as RunStatus, seq, jobs: [], now };
    }

    // A signal no node waits for is buffered only within the run's caps (the run row is locked).
    await refuseOverfullSignalBuffer(m, tenantId, run.id, transition.actions, ctx.signalCaps);
    const take = opts.takeFrom === undefined ? undefined : { queue: opts.takeFrom, leaseToken: uuidv4(), leaseMs: ctx.runLeaseMs };
    const history = new HistoryRepository(m);
    // The history row and the run update go in the same statement as the actions' last writes.
    const writer = new ActionWriter(m, tenantId, run, now, dag, take);
    let entry: HistoryEntry | undefined;
    const written = await writer.write(transition.actions, (w) =>
      history.parts(
        tenantId,
        run.id,
        (entry = historyEntry({ seq, ev: historyEvent(ev, dag, nodes), now, actions: transition.actions, ...(transition.ignored === undefined ? {} : { ignored: transition.ignored }), patch: w.run })),
      ),
    );
    const status = queued && snapshot.status === RunStatus.Running ? RunStatus.Queued : snapshot.status;
    const applied: Applied = { transition, status, seq, jobs: written.jobs, now, nodes, ...(written.taken ? { taken: written.taken } : {}) };
    const recorded = entry!;
    applied.change = () => buildRunChange({ seq, now, patch: written.run, log: writer.log, entry: recorded, dag });
    noteRunChanges(applied, run, ev, transition, nodes, now);
    await this.linked.follow(m, tenantId, run, transition.actions, written.children, applied, opts.nesting ?? 0);
    if (applied.finished && run.concurrencyGroup) await this.slots.promote(m, tenantId, run.concurrencyGroup, applied, opts.nesting ?? 0);
    return applied;
  };

  /** Appends the history row of `record` and updates the run with it, in one statement. */
  private async appendHistory(m: Transaction, tenantId: string, runId: string, record: EventRecord): Promise<void> {
    await new HistoryRepository(m).append(tenantId, runId, historyEntry(record));
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

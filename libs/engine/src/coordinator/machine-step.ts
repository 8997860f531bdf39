import { v4 as uuidv4 } from 'uuid';
import { HistoryRepository, type HistoryEntry } from '@weft/persistence';
import { Machine, MachineError, RunStatus, type RunEvent, type RunSnapshot, type Transition } from '../index.js';
import { ActionWriter } from './action-writer.js';
import { appliedOutcome } from './applied-outcome.js';
import { ChildRuns } from './child-runs.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { AppliedOutcome, LockedEvent, LockedRunEvents, RejectedOutcome } from './event-outcome.js';
import { historyEntry, historyEvent } from './history.js';
import { RunSlots } from './run-slots.js';
import { decidedOf } from './run-finally.js';
import { RunStore } from './run-store.js';
import { refuseOverfullSignalBuffer } from './signal-buffer.js';

/**
 * The heart of an event, on a run row its transaction locked (or just inserted): builds the
 * snapshot, applies the machine, persists the actions and the history record in the statement of
 * their last writes ({@link ActionWriter}), then follows the linked runs ({@link ChildRuns}) and,
 * when the run ended, starts the queued runs its concurrency key's freed slot admits
 * ({@link RunSlots}). Both apply their own events through this step.
 */
export class MachineStep implements LockedRunEvents {
  /** Run slots of concurrency keys: a run that ends frees one. */
  readonly slots: RunSlots;
  private readonly linked: ChildRuns;

  constructor(private readonly ctx: CoordinatorContext) {
    this.linked = new ChildRuns(ctx, this);
    this.slots = new RunSlots(ctx, this);
  }

  /** See {@link LockedRunEvents.applyCommand}. @throws MachineError when the machine rejects `e.ev`. */
  async applyCommand(e: LockedEvent): Promise<AppliedOutcome> {
    const snapshot = snapshotOf(e);
    const recordedEv = historyEvent(e.ev, e.dag, e.nodes);
    const transition = await this.decide(e, snapshot);
    return this.write(e, snapshot, transition, recordedEv);
  }

  /** See {@link LockedRunEvents.applyReport}: the rejection's history row carries the MachineError's message. */
  async applyReport(e: LockedEvent): Promise<AppliedOutcome | RejectedOutcome> {
    const snapshot = snapshotOf(e);
    // Read off the node states before the machine changes them (a loop's iteration moves on).
    const recordedEv = historyEvent(e.ev, e.dag, e.nodes);
    let transition: Transition;
    try {
      transition = await this.decide(e, snapshot);
    } catch (err) {
      if (!(err instanceof MachineError)) throw err;
      const { m, tenantId, run, now } = e;
      const seq = run.eventSeq + 1;
      await new HistoryRepository(m).append(tenantId, run.id, historyEntry({ seq, ev: recordedEv, now, actions: [], error: err.message, patch: {} }));
      return { kind: 'rejected', error: err, status: run.status as RunStatus, seq, now };
    }
    return this.write(e, snapshot, transition, recordedEv);
  }

  /** The machine's transition for `e` on `snapshot` (which it updates). @throws MachineError. */
  private decide(e: LockedEvent, snapshot: RunSnapshot): Promise<Transition> {
    const { m, tenantId, run, dag, ev, now } = e;
    const deps = this.ctx.machineDeps(new RunStore(m, tenantId, run.id, run.rootRunId ?? run.id), now);
    return new Machine(dag, snapshot, deps).apply(ev);
  }

  /** Writes `transition`'s actions and history row for `e`, then follows the linked runs and the freed slot. */
  private async write(e: LockedEvent, snapshot: RunSnapshot, transition: Transition, recordedEv: RunEvent): Promise<AppliedOutcome> {
    const { ctx } = this;
    const { m, tenantId, run, nodes, dag, ev, now } = e;
    const nesting = e.nesting ?? 0;
    const seq = run.eventSeq + 1;
    // A signal no node waits for is buffered only within the run's caps (the run row is locked).
    await refuseOverfullSignalBuffer(m, tenantId, run.id, transition.actions, ctx.signalCaps);
    const take = e.takeFrom === undefined ? undefined : { queue: e.takeFrom, leaseToken: uuidv4(), leaseMs: ctx.runLeaseMs };
    const history = new HistoryRepository(m);
    // The history row and the run update go in the same statement as the actions' last writes.
    const writer = new ActionWriter(m, tenantId, run, now, dag, take);
    let entry: HistoryEntry | undefined;
    const written = await writer.write(transition.actions, (w) =>
      history.parts(
        tenantId,
        run.id,
        (entry = historyEntry({
          seq,
          ev: recordedEv,
          now,
          actions: transition.actions,
          ...(transition.ignored === undefined ? {} : { ignored: transition.ignored }),
          patch: w.run,
        })),
      ),
    );
    // A run QUEUED for a slot stays QUEUED unless the event ended it (see snapshotOf).
    const status = run.status === RunStatus.Queued && snapshot.status === RunStatus.Running ? RunStatus.Queued : snapshot.status;
    const recorded = entry!;
    const outcome = appliedOutcome({ run, ev, transition, status, seq, now, writer, written, entry: recorded, dag, nodes });
    await this.linked.follow(m, tenantId, run, transition.actions, written.children, outcome, nesting, status);
    if (outcome.finished && run.concurrencyGroup) await this.slots.promote(m, tenantId, run.concurrencyGroup, outcome, nesting);
    return outcome;
  }
}

/**
 * The machine's view of `e`'s run. A run QUEUED for a slot of its concurrency key has no task
 * yet; the machine takes it for a running one (a cancel ends it, a signal is buffered for it). A
 * RUNNING or QUEUED row with `paused_at` set is PAUSED (a QUEUED one stays QUEUED in the table, out
 * of its group's promotions, and is QUEUED again at its resume).
 */
function snapshotOf(e: LockedEvent): RunSnapshot {
  const { run, nodes } = e;
  return {
    id: run.id,
    workflowId: run.workflowId,
    version: run.version,
    status:
      run.pausedAt != null && (run.status === RunStatus.Running || run.status === RunStatus.Queued)
        ? RunStatus.Paused
        : run.status === RunStatus.Queued
          ? RunStatus.Running
          : (run.status as RunStatus),
    context: { input: run.input, config: run.config, tasks: new Map() },
    nodes,
    depth: run.depth,
    ...(run.deadlineAt ? { deadlineAt: run.deadlineAt } : {}),
    ...decidedOf(run),
  };
}

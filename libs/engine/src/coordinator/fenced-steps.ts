import { v4 as uuidv4 } from 'uuid';
import {
  attemptLogPart,
  fencedWrite,
  HistoryRepository,
  RunStoreRepository,
  StepCommitter,
  withTenant,
  type AttemptLogRecord,
  type HistoryEntry,
  type Json,
  type RunState,
  type WritePart,
} from '@weft/persistence';
import {
  Machine,
  RunStatus,
  type FinishRun,
  type JsonValue,
  type NodeCompleted,
  type NodeFailed,
  type RunEvent,
  type RunSnapshot,
  type WorkflowDag,
  type Store,
  type Transition,
} from '../index.js';
import { ActionWriter, NotFenceable, type EagerTake, type KeptCompletion } from './action-writer.js';
import { appliedOutcome } from './applied-outcome.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { AppliedOutcome } from './event-outcome.js';
import { historyEntry, historyEvent, summarizeAction } from './history.js';
import { decidedOf } from './run-finally.js';

/** A worker's report that may take the fenced path. */
export type FencedReport = NodeCompleted | NodeFailed;

/**
 * A worker's report decided from memory and written without locking the run first: the run's
 * node states and row as this process's previous event of the run left them (the snapshot
 * cache), the machine, and the event's writes as one fenced statement ({@link fencedWrite})
 * handed to the process's {@link StepCommitter}, which commits it with the other reports queued
 * meanwhile. The statement writes only if the run is still at the event_seq the decision was made
 * on and the reported attempt is still RUNNING under the worker's lease; when the worker asks to
 * take its next attempt, it holds the event's writes with the take and without it (the attempt
 * QUEUED), and `weft_may_take` decides which are written. Every other writer of a run (cancel, signal, retry,
 * timers, the lease sweep, another process) locks the run row and bumps its event_seq or the
 * task's lease, so a decision made on an older state can never be written.
 *
 * {@link apply} resolves undefined, having written nothing, whenever the report must take the
 * locking path instead: no cached state (no event of the run in this process, and no claim
 * that read it), a definition not cached, an action that needs a row read or a statement of its
 * own (a retry, a release of a for_each iteration, a child run…), an end that frees a run slot or
 * wakes a parent, a node with a concurrency limit, a machine rejection, a fence that failed, or
 * any error of the message (the locking path then meets the error alone and gives it its usual
 * meaning).
 */
export class FencedSteps {
  /** The process's committer of fenced writes (it holds a connection only while it has work). */
  readonly committer: StepCommitter;

  constructor(private readonly ctx: CoordinatorContext) {
    this.committer = new StepCommitter(ctx.ds);
  }

  /**
   * Applies `ev` of run `runId` on the fenced path, with the attempt's `log` as a part of its
   * statement (written exactly when the event's writes are); its outcome once committed,
   * undefined when it must take the locking path.
   */
  async apply(
    tenantId: string,
    runId: string,
    ev: FencedReport,
    leaseToken: string,
    takeFrom?: string,
    log?: AttemptLogRecord,
  ): Promise<AppliedOutcome | undefined> {
    const { ctx } = this;
    const entry = ctx.snapshots.takeEntry(tenantId, runId);
    const run = entry?.run;
    // A paused run's events hold what they dispatch: the locking path writes them.
    if (!entry || !run || !entry.at || run.status !== RunStatus.Running || run.pausedAt != null) return undefined;
    const dag = ctx.cachedDag(tenantId, run.workflowId, run.version);
    const clock = ctx.estimatedClock();
    if (!dag || !clock || dag.getNode(ev.nodeId)?.concurrency) return undefined;
    // Never before the run's previous event, whatever the clocks did meanwhile.
    const now = clock.getTime() < entry.at.getTime() ? entry.at : clock;
    const nodes = entry.nodes;
    const snapshot: RunSnapshot = {
      id: run.id,
      workflowId: run.workflowId,
      version: run.version,
      status: RunStatus.Running,
      context: { input: run.input, config: run.config, tasks: new Map() },
      nodes,
      depth: run.depth,
      ...decidedOf(run),
    };
    const deps = ctx.machineDeps(new OutputsOnlyStore(ctx, tenantId, runId), now);
    // Read off the node states before the machine changes them (a loop's iteration moves on).
    const recordedEvent = historyEvent(ev, dag, nodes);
    let transition: Transition;
    try {
      transition = await new Machine(dag, snapshot, deps).apply(ev);
    } catch {
      return undefined; // a rejection or a read the store does not do: the locking path records it
    }
    if (transition.ignored !== undefined || !endsAlone(transition, run)) return undefined;
    const seq = run.eventSeq + 1;
    // Summarized once for the history entry of every form of the event, and for a kept completion.
    const summaries = transition.actions.map(summarizeAction);
    const kept = keptOnTask(ev, recordedEvent, transition, seq, summaries);
    const take = takeFrom === undefined ? undefined : { queue: takeFrom, leaseToken: uuidv4(), leaseMs: ctx.runLeaseMs };
    // The event's writes as the worker takes its next attempt, and, should fair dispatch refuse
    // the take, as they are without it: one statement holds both, and the take decides.
    const taking = await this.capture(tenantId, run, now, dag, transition, seq, recordedEvent, summaries, kept, take);
    if (!taking) return undefined;
    // A take of a new row carries its refusal in the same parts; a take of an existing row needs
    // the event's second form, without the take.
    const inline = taking.writer.takeRefusalInline;
    const queued = taking.written.taken && !inline ? await this.capture(tenantId, run, now, dag, transition, seq, recordedEvent, summaries, kept) : undefined;
    if (taking.written.taken && !inline && !queued) return undefined;
    const fence = { seq: run.eventSeq, taskId: ev.taskId, attempt: ev.attempt, leaseToken, ...(taking.written.taken ? { takeFrom } : {}) };
    // The log is one part of both forms of the event, so written whichever form the take chose.
    const logPart = log && attemptLogPart(tenantId, run.id, ev.nodeId, log);
    const withLog = (parts: readonly WritePart[]): readonly WritePart[] => (logPart ? [...parts, logPart] : parts);
    const statement = fencedWrite(tenantId, run.id, fence, withLog(taking.writer.parts), inline ? 'inline' : queued && withLog(queued.writer.parts));
    // The committer refuses a value that would fail its whole message (jsonb holds no NUL): alone, on the locking path.
    if (!statement) return undefined;
    let took: boolean;
    try {
      const [row] = await this.committer.submit({ tenantId, ...statement });
      if (row?.ok !== true || (row.took !== true && !queued && !inline)) return undefined;
      took = row.took === true;
    } catch {
      return undefined;
    }
    // A refused inline take wrote the event as it is without the take: what it left (its job for
    // fair dispatch, the attempt QUEUED) is that form's, built now from the same transition.
    const chosen = took ? taking : (queued ?? (await this.capture(tenantId, run, now, dag, transition, seq, recordedEvent, summaries, kept)));
    if (!chosen) {
      // Not expected (the same actions were captured with the take). The write stands: its QUEUED
      // attempt waits for the scheduler's pass over the backlog, and the report, stale now, is
      // recorded as such on the locking path.
      ctx.log.warn(`run ${runId}: the event committed at seq ${seq} could not be built again without its refused take`);
      return undefined;
    }
    const { writer, written, recorded } = chosen;
    const status = snapshot.status;
    // An event with linked work takes the locking path (see endsAlone): none to add.
    const outcome = appliedOutcome({ run, ev, transition, status, seq, now, writer, written, entry: recorded, dag, nodes });
    ctx.snapshots.put(tenantId, runId, seq, nodes, { ...run, eventSeq: seq, status }, now);
    return outcome;
  }

  /**
   * The event's writes as statement parts (see {@link ActionWriter.capturing}), with its history
   * row (or, with `kept`, the completion that keeps the event on its task's row); undefined when
   * an action needs the run locked.
   */
  private async capture(
    tenantId: string,
    run: RunState,
    now: Date,
    dag: WorkflowDag,
    transition: Transition,
    seq: number,
    event: RunEvent,
    summaries: Json[],
    kept: KeptCompletion | undefined,
    take?: EagerTake,
  ) {
    const writer = ActionWriter.capturing(this.ctx.ds.manager, tenantId, run, now, dag, take, kept);
    const history = new HistoryRepository(this.ctx.ds.manager);
    let recorded: HistoryEntry | undefined;
    try {
      const written = await writer.write(transition.actions, (w) =>
        history.parts(
          tenantId,
          run.id,
          (recorded = historyEntry({ seq, ev: event, now, actions: transition.actions, summaries, patch: w.run })),
          kept !== undefined,
        ),
      );
      return { writer, written, recorded: recorded! };
    } catch (err) {
      if (err instanceof NotFenceable) return undefined;
      throw err;
    }
  }
}

/**
 * The completion of `ev` as its task's row can keep it, so that no history row repeats the task:
 * when the history records the event exactly as reported (`recorded` is `ev`: no output trimmed or
 * redacted, no iteration), the event carries nothing but the task's id, node, attempt and output,
 * and the transition completes that attempt with that same output (`summaries`: its actions',
 * kept as they are). Undefined otherwise (the event
 * then gets its `run_events` row, as on the locking path).
 */
export function keptOnTask(ev: FencedReport, recorded: RunEvent, transition: Transition, seq: number, summaries: Json[]): KeptCompletion | undefined {
  // An absent output is stored as no key at all; the row would give it back as null.
  if (ev.type !== 'NodeCompleted' || recorded !== ev || ev.output === undefined || Object.keys(ev).length !== REPORTED_KEYS) return undefined;
  const completes = transition.actions.some((a) => a.type === 'CompleteTask' && a.taskId === ev.taskId && a.attempt === ev.attempt && a.output === ev.output);
  if (!completes) return undefined;
  return { taskId: ev.taskId, seq, actions: JSON.stringify(summaries) };
}

/** A NodeCompleted's keys: type, taskId, nodeId, attempt, output. */
const REPORTED_KEYS = 5;

/**
 * True when nothing outside the event's own rows follows from `transition`: no end of the run, or
 * a success of a run with no parent to wake and no run slot to free (the locking path does those
 * in the event's transaction).
 */
function endsAlone(transition: Transition, run: { parentRunId: string | null; concurrencyGroup: string | null }): boolean {
  const finish = transition.actions.find((a): a is FinishRun => a.type === 'FinishRun');
  return finish === undefined || (finish.status === RunStatus.Succeeded && run.parentRunId === null && run.concurrencyGroup === null);
}

/**
 * The machine's Store for a decision made without a lock: completed nodes' outputs, read in a
 * transaction of their own (a completed output never changes; a reset of the node bumps the
 * run's event_seq, and the fence then refuses the write). Any other read needs the run locked.
 */
export class OutputsOnlyStore implements Store {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly tenantId: string,
    private readonly runId: string,
  ) {}

  async outputs(nodeIds: string[]): Promise<Map<string, JsonValue>> {
    const outputs = await withTenant(this.ctx.ds, this.tenantId, (m) => new RunStoreRepository(m).outputs(this.tenantId, this.runId, nodeIds));
    return outputs as Map<string, JsonValue>;
  }

  iterationOutputs(): never {
    throw new NotFenceable('CreateIterations');
  }

  taskInput(): never {
    throw new NotFenceable('ReleaseIteration');
  }

  childRun(): never {
    throw new NotFenceable('StartChildRun');
  }

  treeRuns(): never {
    throw new NotFenceable('StartChildRun');
  }

  startableVersion(): never {
    throw new NotFenceable('StartChildRun');
  }

  pendingSignal(): never {
    throw new NotFenceable('ConsumeSignal');
  }
}

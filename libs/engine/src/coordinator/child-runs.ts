import { ChildRunRepository, RunEventRepository, RunPauseRepository, type RunState, type Transaction } from '@weft/persistence';
import { RunStatus, type Action, type FinishRun, type RunEvent, type StartChildRun } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { DirectOutcome, LinkedWork, LockedRunEvents, RejectedOutcome } from './event-outcome.js';
import { finishedNote, startedNote } from './run-notes.js';
import { newRunTrace } from './trace-context.js';
import { snapshotNodes } from './snapshot-cache.js';

/**
 * The effects of one applied transition on other runs of the tenant, in the same transaction:
 * each StartChildRun creates its child run and, unless this run was itself started by this
 * transaction (`nesting` > 0), applies its RunStarted — so one transaction starts one level of
 * children, never a whole recursive tree; a run that is cancelled, or ends without succeeding,
 * cancels its running children; a child run that ends wakes its parent's waiting SUBWORKFLOW
 * task (its `wake_at` becomes now, so a lost fast path is still fired by the scheduler). A pause
 * reaches the run's active children (and so theirs), and so does a resume; while the run is
 * paused no child run of it is created, and its resume wakes the SUBWORKFLOW tasks whose child
 * waited, which then start it. Locks go parent before child; a child ending while its parent is
 * cancelled may deadlock, which PostgreSQL breaks and the event retries.
 */
export class ChildRuns {
  /** `events` applies an event to a linked run, as the event pipeline applies one to its own run. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly events: LockedRunEvents,
  ) {}

  /**
   * Starts, cancels, pauses, resumes or wakes the runs linked to `run` that `actions` (with
   * `children` written) affect, at `linked.now`, `run` being `status` after them; what they did
   * joins `linked` for after-commit work.
   */
  async follow(
    m: Transaction,
    tenantId: string,
    run: RunState,
    actions: readonly Action[],
    children: readonly StartChildRun[],
    linked: LinkedWork,
    nesting: number,
    status: RunStatus,
  ): Promise<void> {
    // A paused run starts no child: the SUBWORKFLOW task waits, and its resume wakes it.
    if (status !== RunStatus.Paused) for (const c of children) await this.start(m, tenantId, run, c, linked, nesting);
    if (actions.some((a) => a.type === 'PauseRun'))
      await this.toChildren(m, tenantId, run.id, { type: 'RunPaused', reason: parentPause(run.id), byParent: true }, linked);
    if (actions.some((a) => a.type === 'ResumeRun')) {
      await this.toChildren(m, tenantId, run.id, { type: 'RunResumed' }, linked);
      for (const w of await new RunPauseRepository(m).wakeHeldChildStarts(tenantId, run.id, linked.now)) linked.wakes.push({ runId: run.id, ...w });
    }
    const finish = actions.find((a): a is FinishRun => a.type === 'FinishRun');
    if (actions.some((a) => a.type === 'CancelTasks') || (finish !== undefined && finish.status !== RunStatus.Succeeded)) {
      const status = finish?.status === RunStatus.Failed ? 'failed' : finish?.status === RunStatus.TimedOut ? 'timed out' : 'was cancelled';
      await this.cancel(m, tenantId, run.id, `parent run ${run.id} ${status}`, linked);
    }
    if (finish !== undefined) await this.wakeParent(m, tenantId, run, linked);
  }

  /**
   * Creates the child run of a StartChildRun (same tenant, `depth` + 1, linked to the parent's
   * task attempt and to the top of its tree) unless it exists, and applies its RunStarted — or,
   * when `nesting` > 0 (the parent run was itself started in this transaction), leaves it created
   * but not started and makes the parent's task due now, so the child starts in the parent's next
   * event (after commit, or from the scheduler). A child whose start the machine rejects (its
   * entry node cannot be routed) is recorded FAILED with the reason, and its parent is woken.
   */
  private async start(m: Transaction, tenantId: string, parent: RunState, c: StartChildRun, linked: LinkedWork, nesting: number): Promise<void> {
    const now = linked.now;
    const repo = new ChildRunRepository(m);
    // The child's span is a child of its parent run's (a new trace for a parent older than tracing).
    const trace = newRunTrace(parent.traceparent);
    await repo.insert(
      tenantId,
      {
        id: c.childRunId,
        workflowId: c.workflowId,
        version: c.version,
        input: c.input,
        config: c.config,
        parentRunId: parent.id,
        parentTaskId: c.taskId,
        parentAttempt: c.attempt,
        depth: parent.depth + 1,
        rootRunId: parent.rootRunId ?? parent.id,
        traceparent: trace.traceparent,
        traceCallerSpan: trace.callerSpan,
        // A child's tasks are dispatched as urgently as its parent's.
        priority: parent.priority,
      },
      now,
    );
    if (nesting > 0) {
      if (await repo.wakeTask(tenantId, c.taskId, c.attempt, now)) linked.wakes.push({ runId: parent.id, taskId: c.taskId, nodeId: c.nodeId });
      return;
    }
    const row = await new RunEventRepository(m).lock(tenantId, c.childRunId);
    if (!row || row.eventSeq > 0 || row.status !== RunStatus.Running) return; // started (or ended) already
    const dag = await this.ctx.dag(m, tenantId, row.workflowId, row.version);
    const started = await this.events.applyReport({ m, tenantId, run: row, nodes: new Map(), dag, ev: { type: 'RunStarted' }, now, nesting: nesting + 1 });
    const outcome = started.kind === 'rejected' ? await this.failUnstarted(m, tenantId, row, started) : started;
    linked.nested.push({ runId: row.id, outcome });
  }

  /**
   * Records child run `row`, whose start the machine rejected (`rejected`), FAILED with the
   * reason, as started and finished, and wakes its parent.
   */
  private async failUnstarted(m: Transaction, tenantId: string, row: RunState, rejected: RejectedOutcome): Promise<DirectOutcome> {
    const { now, seq, error } = rejected;
    await new ChildRunRepository(m).failUnstarted(tenantId, row.id, `the child run could not start: ${error.message}`, now);
    const failed: DirectOutcome = {
      kind: 'direct',
      status: RunStatus.Failed,
      seq,
      now,
      started: startedNote(row),
      finished: finishedNote(row, RunStatus.Failed, now, new Map(), error.message),
      nested: [],
      wakes: [],
    };
    await this.wakeParent(m, tenantId, row, failed);
    return failed;
  }

  /** Applies RunCancelled with `reason` to every active child run of `runId` (and so to theirs). */
  private cancel(m: Transaction, tenantId: string, runId: string, reason: string, linked: LinkedWork): Promise<void> {
    return this.toChildren(m, tenantId, runId, { type: 'RunCancelled', reason }, linked);
  }

  /**
   * Applies `ev` to every active child run of `runId` that has started (one created but not
   * started yet waits for its parent's next event, which starts it, not for this one); a pause
   * or resume then reaches their children in turn.
   */
  private async toChildren(m: Transaction, tenantId: string, runId: string, ev: RunEvent, linked: LinkedWork): Promise<void> {
    const events = new RunEventRepository(m);
    for (const kid of await new ChildRunRepository(m).lockRunning(tenantId, runId)) {
      // A pause reaches the children not paused already; a resume, those this run's pause paused
      // (one paused on its own, by an operator or its exhausted node, stays paused).
      const resumable = kid.pausedAt != null && kid.pauseReason === parentPause(runId);
      const applies = ev.type === 'RunCancelled' || (kid.eventSeq > 0 && (ev.type === 'RunResumed' ? resumable : kid.pausedAt == null));
      if (!applies) continue;
      const tasks = await events.taskStates(tenantId, kid.id);
      const dag = await this.ctx.dag(m, tenantId, kid.workflowId, kid.version);
      const outcome = await this.events.applyReport({ m, tenantId, run: kid, nodes: snapshotNodes(tasks), dag, ev, now: linked.now });
      linked.nested.push({ runId: kid.id, outcome });
    }
  }

  /** A child run ended: its parent's SUBWORKFLOW task, if still waiting on this attempt, is due now. */
  private async wakeParent(m: Transaction, tenantId: string, run: RunState, linked: LinkedWork): Promise<void> {
    if (run.parentRunId === null || run.parentTaskId === null) return;
    const nodeId = await new ChildRunRepository(m).wakeParentTask(tenantId, run.parentRunId, run.parentTaskId, run.parentAttempt, linked.now);
    if (nodeId !== undefined) linked.wakes.push({ runId: run.parentRunId, taskId: run.parentTaskId, nodeId });
  }
}

/** The pause reason of a child run its parent's pause paused: how its parent's resume knows it. */
function parentPause(parentId: string): string {
  return `parent run ${parentId} paused`;
}

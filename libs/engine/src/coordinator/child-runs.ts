import { ChildRunRepository, RunEventRepository, type RunState, type Transaction } from '@weft/persistence';
import { RunStatus, type Action, type FinishRun, type StartChildRun } from '../index.js';
import type { Applied, ApplyLocked } from './applied.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { noteFinished } from './run-notes.js';
import { newRunTrace } from './trace-context.js';
import { snapshotNodes } from './snapshot-cache.js';

/**
 * The effects of one applied transition on other runs of the tenant, in the same transaction:
 * each StartChildRun creates its child run and, unless this run was itself started by this
 * transaction (`nesting` > 0), applies its RunStarted — so one transaction starts one level of
 * children, never a whole recursive tree; a run that is cancelled, or ends without succeeding,
 * cancels its running children; a child run that ends wakes its parent's waiting SUBWORKFLOW
 * task (its `wake_at` becomes now, so a lost fast path is still fired by the scheduler). Locks go
 * parent before child; a child ending while its parent is cancelled may deadlock, which
 * PostgreSQL breaks and the event retries.
 */
export class ChildRuns {
  /** `apply` applies an event to a child run, as the event pipeline applies one to its own run. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly apply: ApplyLocked,
  ) {}

  /** Starts, cancels or wakes the runs linked to `run` that `actions` (with `children` written) affect. */
  async follow(
    m: Transaction,
    tenantId: string,
    run: RunState,
    actions: readonly Action[],
    children: readonly StartChildRun[],
    applied: Applied,
    nesting: number,
  ): Promise<void> {
    for (const c of children) await this.start(m, tenantId, run, c, applied, nesting);
    const finish = actions.find((a): a is FinishRun => a.type === 'FinishRun');
    if (actions.some((a) => a.type === 'CancelTasks') || (finish !== undefined && finish.status !== RunStatus.Succeeded)) {
      const status = finish?.status === RunStatus.Failed ? 'failed' : 'was cancelled';
      await this.cancel(m, tenantId, run.id, `parent run ${run.id} ${status}`, applied);
    }
    if (finish !== undefined) await this.wakeParent(m, tenantId, run, applied);
  }

  /**
   * Creates the child run of a StartChildRun (same tenant, `depth` + 1, linked to the parent's
   * task attempt and to the top of its tree) unless it exists, and applies its RunStarted — or,
   * when `nesting` > 0 (the parent run was itself started in this transaction), leaves it created
   * but not started and makes the parent's task due now, so the child starts in the parent's next
   * event (after commit, or from the scheduler). A child whose start the machine rejects (its
   * entry node cannot be routed) is recorded FAILED with the reason, and its parent is woken.
   */
  private async start(m: Transaction, tenantId: string, parent: RunState, c: StartChildRun, applied: Applied, nesting: number): Promise<void> {
    const now = applied.now;
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
      if (await repo.wakeTask(tenantId, c.taskId, c.attempt, now)) (applied.wakes ??= []).push({ runId: parent.id, taskId: c.taskId, nodeId: c.nodeId });
      return;
    }
    const row = await new RunEventRepository(m).lock(tenantId, c.childRunId);
    if (!row || row.eventSeq > 0 || row.status !== RunStatus.Running) return; // started (or ended) already
    const dag = await this.ctx.dag(m, tenantId, row.workflowId, row.version);
    const started = await this.apply(m, tenantId, row, new Map(), dag, { type: 'RunStarted' }, now, { rejectedRollsBack: false, nesting: nesting + 1 });
    if (started.rejected) {
      await repo.failUnstarted(tenantId, row.id, `the child run could not start: ${started.rejected.message}`, now);
      started.status = RunStatus.Failed;
      started.started = { workflowId: row.workflowId, version: row.version, parentRunId: row.parentRunId };
      noteFinished(started, row, RunStatus.Failed, now, new Map(), started.rejected.message);
      await this.wakeParent(m, tenantId, row, started);
    }
    (applied.nested ??= []).push({ runId: row.id, applied: started });
  }

  /** Applies RunCancelled with `reason` to every RUNNING child run of `runId` (and so to theirs). */
  private async cancel(m: Transaction, tenantId: string, runId: string, reason: string, applied: Applied): Promise<void> {
    const events = new RunEventRepository(m);
    for (const kid of await new ChildRunRepository(m).lockRunning(tenantId, runId)) {
      const tasks = await events.taskStates(tenantId, kid.id);
      const dag = await this.ctx.dag(m, tenantId, kid.workflowId, kid.version);
      const cancelled = await this.apply(m, tenantId, kid, snapshotNodes(tasks), dag, { type: 'RunCancelled', reason }, applied.now, { rejectedRollsBack: false });
      (applied.nested ??= []).push({ runId: kid.id, applied: cancelled });
    }
  }

  /** A child run ended: its parent's SUBWORKFLOW task, if still waiting on this attempt, is due now. */
  private async wakeParent(m: Transaction, tenantId: string, run: RunState, applied: Applied): Promise<void> {
    if (run.parentRunId === null || run.parentTaskId === null) return;
    const nodeId = await new ChildRunRepository(m).wakeParentTask(tenantId, run.parentRunId, run.parentTaskId, run.parentAttempt, applied.now);
    if (nodeId !== undefined) (applied.wakes ??= []).push({ runId: run.parentRunId, taskId: run.parentTaskId, nodeId });
  }
}

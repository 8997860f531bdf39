/**
 * How each action evolves the in-memory run snapshot. Kept apart from
 * machine.ts so the per-event working state (step.ts) can use it without an import cycle.
 */
import { NodeType, RunStatus, TaskStatus } from '../model/workflow-types.js';
import type { Action } from './actions.js';
import { assertNever } from './errors.js';
import type { Journal } from './journal.js';
import { runIndex, type RunCounts, type RunIndex } from './run-index.js';
import { isNodeActive, type NodeState, type RunSnapshot } from './state.js';

/**
 * Evolves the in-memory snapshot the way persisting `action` evolves the stored run. DispatchTask, BufferSignal and ConsumeSignal change nothing routing reads.
 * With a `journal`, every change is recorded there first, so the event can be rolled back. Keeps
 * the snapshot's derived counts (`liveCounts`) and readiness progress up to date when it has them.
 */
export function applyAction(run: RunSnapshot, a: Action, journal?: Journal): void {
  const ix = runIndex(run);
  const counts = ix.counts;
  /** Replaces (or adds) a node's state. */
  const put = (id: string, n: NodeState): void => {
    const old = run.nodes.get(id);
    if (old) {
      if (counts) count(counts, old, -1);
      forgetReadiness(ix); // a reached node recorded anew: what readiness read of it may change
    }
    journal?.settingNode(id);
    run.nodes.set(id, n);
    if (counts) count(counts, n, 1);
    if (isNodeActive(n)) ix.activeWitness = id;
    ix.readiness?.byNode.delete(id);
  };
  /** Changes a node's (or iteration's) state in place, keeping the derived facts right. */
  const change = (id: string, n: NodeState, mutate: (n: NodeState) => void): void => {
    journal?.touch(n);
    const top = run.nodes.get(id) === n;
    if (!top) {
      mutate(n);
      return;
    }
    const status = n.status;
    const branches = n.branches;
    if (counts) count(counts, n, -1);
    mutate(n);
    if (counts) count(counts, n, 1);
    // Readiness progress read settled sources only: a settled node that changes invalidates it.
    if (isSettled(status) && (n.status !== status || (branches !== undefined && n.branches !== branches))) forgetReadiness(ix);
  };
  /** Forgets the states and cached outputs of nodes `ids` (a retry's reset, a loop's ended iteration). */
  const drop = (ids: readonly string[]): void => {
    forgetReadiness(ix);
    for (const id of ids) {
      const old = run.nodes.get(id);
      if (old) {
        if (counts) count(counts, old, -1);
        journal?.deletingNode();
        run.nodes.delete(id);
      }
      if (run.context.tasks.has(id)) {
        journal?.deletingOutput();
        run.context.tasks.delete(id);
      }
    }
  };
  switch (a.type) {
    case 'CreateTask':
      put(a.node.node_id, {
        taskId: a.taskId,
        status: a.status,
        attempt: 0,
        branches: a.branches,
        awaitedSignal: a.awaitedSignal,
        ...(a.error !== undefined ? { error: a.error } : {}),
        ...(a.node.type === NodeType.DoWhile ? { loop: { iteration: a.loopIteration ?? 0, previous: null } } : {}),
      });
      return;
    case 'NextLoopIteration': {
      drop(a.bodyNodeIds);
      const n = run.nodes.get(a.nodeId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.loop = { iteration: a.iteration, previous: a.previous };
        });
      return;
    }
    case 'DispatchTask':
    case 'BufferSignal':
    case 'ConsumeSignal':
      return;
    case 'CompleteTask': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.status = TaskStatus.Completed;
        });
      return;
    }
    case 'FailTask': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.status = TaskStatus.Failed;
          x.error = a.reason;
        });
      return;
    }
    case 'RetryTask': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.status = TaskStatus.Pending;
          x.attempt = a.attempt + 1;
          if (a.attemptLimit !== undefined) x.attemptLimit = a.attemptLimit;
          delete x.error;
        });
      return;
    }
    case 'RecordBranches': {
      const n = run.nodes.get(a.nodeId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.branches = [...a.branches];
        });
      return;
    }
    case 'ResolveWait': {
      const n = run.nodes.get(a.nodeId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.status = a.status;
          x.awaitedSignal = undefined;
          if (a.status === TaskStatus.Failed && a.reason !== undefined) x.error = a.reason;
        });
      return;
    }
    case 'CreateIterations':
      put(a.node.node_id, {
        taskId: a.taskId,
        status: TaskStatus.Running,
        attempt: 0,
        iterations: a.iterations.map((it, i) => ({ taskId: it.taskId, status: i < a.dispatch ? TaskStatus.Pending : TaskStatus.Waiting, attempt: 0 })),
      });
      return;
    case 'ReleaseIteration': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.status = TaskStatus.Pending;
        });
      return;
    }
    case 'SkipIterations':
      for (const id of a.taskIds) {
        const n = slot(run, a.nodeId, id);
        if (n)
          change(a.nodeId, n, (x) => {
            x.status = TaskStatus.Skipped;
          });
      }
      return;
    case 'ReopenIterations': {
      const agg = run.nodes.get(a.nodeId);
      if (!agg) return;
      for (const r of a.iterations) {
        const it = slot(run, a.nodeId, r.taskId);
        if (it)
          change(a.nodeId, it, (x) => {
            x.status = TaskStatus.Waiting;
            x.attempt = r.attempt + 1;
            x.attemptLimit = r.attemptLimit;
            delete x.error;
          });
      }
      change(a.nodeId, agg, (x) => {
        x.status = TaskStatus.Running;
        delete x.error;
        delete x.branches; // the routing of its failure: decided again when it settles
      });
      if (run.context.tasks.has(a.nodeId)) {
        journal?.deletingOutput();
        run.context.tasks.delete(a.nodeId);
      }
      return;
    }
    case 'StartChildRun': {
      const n = run.nodes.get(a.nodeId);
      if (n?.retryAt !== undefined) change(a.nodeId, n, (x) => delete x.retryAt);
      return;
    }
    case 'RetryChild': {
      const n = run.nodes.get(a.nodeId);
      if (n)
        change(a.nodeId, n, (x) => {
          x.attempt = a.attempt + 1;
          x.retryAt = a.notBefore;
          if (a.attemptLimit !== undefined) {
            x.attemptLimit = a.attemptLimit;
            x.status = TaskStatus.Waiting;
          }
          delete x.error;
        });
      return;
    }
    case 'ReopenRun':
      drop(a.resetNodes);
      run.context.input = a.input;
      run.context.config = a.config;
      run.version = a.version;
      run.status = RunStatus.Running;
      delete run.decided;
      return;
    case 'CancelTasks':
      for (const [id, n] of run.nodes) {
        if (isNodeActive(n))
          change(id, n, (x) => {
            x.status = TaskStatus.Cancelled;
          });
        for (const it of n.iterations ?? [])
          if (isNodeActive(it))
            change(id, it, (x) => {
              x.status = TaskStatus.Cancelled;
            });
      }
      return;
    case 'FinishRun':
      run.status = a.status;
      delete run.decided;
      return;
    case 'DecideRun':
      run.decided = { status: a.status, ...(a.reason !== undefined ? { reason: a.reason } : {}), ...(a.output !== undefined ? { output: a.output } : {}) };
      if (run.status === RunStatus.Paused) run.status = RunStatus.Running;
      return;
    case 'PauseRun':
      run.status = RunStatus.Paused;
      return;
    case 'ResumeRun':
      run.status = RunStatus.Running;
      return;
    case 'ArmDeadline':
      if (a.deadlineAt) run.deadlineAt = a.deadlineAt;
      else delete run.deadlineAt;
      return;
    default:
      assertNever(a);
  }
}

/** COMPLETED, FAILED or SKIPPED: the node's outgoing edges can be decided. */
export function isSettled(status: TaskStatus): boolean {
  return status === TaskStatus.Completed || status === TaskStatus.Failed || status === TaskStatus.Skipped;
}

function forgetReadiness(ix: RunIndex): void {
  ix.readiness = undefined;
}

/** Adds (`by` 1) or removes (`by` -1) a top-level node state in the counts. */
function count(c: RunCounts, n: NodeState, by: 1 | -1): void {
  if (isNodeActive(n)) c.active += by;
  else if (n.status === TaskStatus.Failed) c.failed += by;
  else if (n.status === TaskStatus.Cancelled) c.cancelled += by;
}

/** The node's own state when `taskId` is its task, else the `for_each` iteration with that task. */
function slot(run: RunSnapshot, nodeId: string, taskId: string): NodeState | undefined {
  const n = run.nodes.get(nodeId);
  if (!n || n.taskId === taskId) return n;
  return n.iterations?.find((it) => it.taskId === taskId);
}

/**
 * Counts of reached nodes that still have to finish, failed for good, and were cancelled. A
 * failure an `on_error` edge handled is counted too; the machine subtracts those (it needs the DAG).
 */
export function runCounts(run: RunSnapshot): RunCounts {
  let active = 0;
  let failed = 0;
  let cancelled = 0;
  for (const n of run.nodes.values()) {
    if (isNodeActive(n)) active++;
    else if (n.status === TaskStatus.Failed) failed++;
    else if (n.status === TaskStatus.Cancelled) cancelled++;
  }
  return { active, failed, cancelled };
}

/**
 * True when some reached node is still active (the run cannot finish yet). O(1) when the last
 * node seen active still is (see `RunIndex.activeWitness`); otherwise {@link liveCounts} decides.
 */
export function hasActiveNode(run: RunSnapshot): boolean {
  const ix = runIndex(run);
  const witness = ix.activeWitness === undefined ? undefined : run.nodes.get(ix.activeWitness);
  if (witness && isNodeActive(witness)) return true;
  ix.activeWitness = undefined;
  return liveCounts(run).active > 0;
}

/**
 * {@link runCounts} of the snapshot, O(1) per event: counted once, the first time, then kept up
 * to date by {@link applyAction}. Read-only for the caller. Only for snapshots changed solely
 * through `applyAction` since (the machine's); anything else should call {@link runCounts}.
 */
export function liveCounts(run: RunSnapshot): Readonly<RunCounts> {
  const ix = runIndex(run);
  return (ix.counts ??= runCounts(run));
}

/**
 * How each action evolves the in-memory run snapshot (seed 000's `Action.apply`). Kept apart from
 * machine.ts so the per-event working state (step.ts) can use it without an import cycle.
 */
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import type { Action } from './actions.js';
import { assertNever } from './errors.js';
import { isNodeActive, type NodeState, type RunSnapshot } from './state.js';

/**
 * Evolves the in-memory snapshot the way persisting `action` evolves the stored run (seed 000's
 * `Action.apply`). DispatchTask, BufferSignal and ConsumeSignal change nothing routing reads.
 */
export function applyAction(run: RunSnapshot, a: Action): void {
  switch (a.type) {
    case 'CreateTask':
      run.nodes.set(a.node.node_id, {
        taskId: a.taskId,
        status: a.status,
        attempt: 0,
        branches: a.branches,
        awaitedSignal: a.awaitedSignal,
        ...(a.error !== undefined ? { error: a.error } : {}),
      });
      return;
    case 'DispatchTask':
    case 'BufferSignal':
    case 'ConsumeSignal':
      return;
    case 'CompleteTask': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n) n.status = TaskStatus.Completed;
      return;
    }
    case 'FailTask': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n) {
        n.status = TaskStatus.Failed;
        n.error = a.reason;
      }
      return;
    }
    case 'RetryTask': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n) {
        n.status = TaskStatus.Pending;
        n.attempt = a.attempt + 1;
        delete n.error;
      }
      return;
    }
    case 'RecordBranches': {
      const n = run.nodes.get(a.nodeId);
      if (n) n.branches = [...a.branches];
      return;
    }
    case 'ResolveWait': {
      const n = run.nodes.get(a.nodeId);
      if (n) {
        n.status = a.status;
        n.awaitedSignal = undefined;
        if (a.status === TaskStatus.Failed && a.reason !== undefined) n.error = a.reason;
      }
      return;
    }
    case 'CreateIterations':
      run.nodes.set(a.node.node_id, {
        taskId: a.taskId,
        status: TaskStatus.Running,
        attempt: 0,
        iterations: a.iterations.map((it, i) => ({ taskId: it.taskId, status: i < a.dispatch ? TaskStatus.Pending : TaskStatus.Waiting, attempt: 0 })),
      });
      return;
    case 'ReleaseIteration': {
      const n = slot(run, a.nodeId, a.taskId);
      if (n) n.status = TaskStatus.Pending;
      return;
    }
    case 'SkipIterations':
      for (const id of a.taskIds) {
        const n = slot(run, a.nodeId, id);
        if (n) n.status = TaskStatus.Skipped;
      }
      return;
    case 'StartChildRun':
      return;
    case 'RetryChild': {
      const n = run.nodes.get(a.nodeId);
      if (n) {
        n.attempt = a.attempt + 1;
        delete n.error;
      }
      return;
    }
    case 'ReopenRun':
      for (const id of a.resetNodes) {
        run.nodes.delete(id);
        run.context.tasks.delete(id);
      }
      run.context.input = a.input;
      run.context.config = a.config;
      run.version = a.version;
      run.status = RunStatus.Running;
      return;
    case 'CancelTasks':
      for (const n of run.nodes.values()) {
        if (isNodeActive(n)) n.status = TaskStatus.Cancelled;
        for (const it of n.iterations ?? []) if (isNodeActive(it)) it.status = TaskStatus.Cancelled;
      }
      return;
    case 'FinishRun':
      run.status = a.status;
      return;
    default:
      assertNever(a);
  }
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
export function runCounts(run: RunSnapshot): { active: number; failed: number; cancelled: number } {
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

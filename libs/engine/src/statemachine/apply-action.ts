/**
 * How each action evolves the in-memory run snapshot (seed 000's `Action.apply`). Kept apart from
 * machine.ts so the per-event working state (step.ts) can use it without an import cycle.
 */
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import type { Action } from './actions.js';
import { assertNever } from './errors.js';
import { isNodeActive, type RunSnapshot } from './state.js';

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
    case 'CompleteTask':
      setStatus(run, a.nodeId, TaskStatus.Completed);
      return;
    case 'FailTask': {
      const n = run.nodes.get(a.nodeId);
      if (n) {
        n.status = TaskStatus.Failed;
        n.error = a.reason;
      }
      return;
    }
    case 'RetryTask': {
      const n = run.nodes.get(a.nodeId);
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
      }
      return;
    case 'FinishRun':
      run.status = a.status;
      return;
    default:
      assertNever(a);
  }
}

function setStatus(run: RunSnapshot, nodeId: string, status: TaskStatus): void {
  const n = run.nodes.get(nodeId);
  if (n) n.status = status;
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

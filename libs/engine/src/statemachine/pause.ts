/**
 * Pausing and resuming a run. A pause holds dispatch, not time or state: the machine keeps
 * deciding on a paused run's events as on a running one (attempts with workers finish and route
 * on, timers fire, signals are delivered), and the coordinator holds what it would dispatch until
 * the resume. A paused run does not finish on its own: it ends at its resume, or by a cancel.
 *
 * `on_exhausted: pause`: a node's last failed attempt leaves its task FAILED with no error edge
 * taken and pauses the run; the resume gives it `max_attempts` more attempts, numbered on.
 */
import { maxAttempts, type WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus } from '../model/workflow-types.js';
import { exhaustedReason } from './exhausted.js';
import { resumeExhaustedChild } from './node-kinds/subworkflow.js';
import { MachineError } from './errors.js';
import type { NodeFailed, RunPaused, RunResumed } from './events.js';
import type { NodeState } from './state.js';
import type { Step } from './step.js';

/** The pause reason of a run paused by an operator without one. */
export const DEFAULT_PAUSE_REASON = 'paused';

/**
 * RunPaused: the run becomes PAUSED with the event's reason (default {@link DEFAULT_PAUSE_REASON});
 * repeated on a paused run it changes nothing (ignored).
 * @throws MachineError RUN_FINISHED on a finished run.
 */
export function onRunPaused(s: Step, ev: RunPaused): void {
  if (s.terminal()) throw new MachineError('RUN_FINISHED', `run ${s.run.id} is ${s.run.status}: only an active run can be paused`);
  if (s.run.status === RunStatus.Paused) {
    s.ignore('run already paused');
    return;
  }
  s.emit({ type: 'PauseRun', reason: ev.reason || DEFAULT_PAUSE_REASON, cause: ev.byParent ? 'parent' : 'operator' });
}

/**
 * RunResumed: a PAUSED run becomes RUNNING again, and each node whose attempts ran out with
 * `on_exhausted: pause` is retried at once with the node's `max_attempts` more attempts (attempt
 * numbers go on). Repeated on a running run it changes nothing (ignored).
 * @throws MachineError RUN_FINISHED on a finished run.
 */
export async function onRunResumed(s: Step, _ev: RunResumed): Promise<void> {
  if (s.terminal()) throw new MachineError('RUN_FINISHED', `run ${s.run.id} is ${s.run.status}: only a paused run can be resumed`);
  if (s.run.status !== RunStatus.Paused) {
    s.ignore('run not paused');
    return;
  }
  s.emit({ type: 'ResumeRun' });
  for (const [nodeId, n] of exhaustedNodes(s)) {
    const node = s.dag.getNode(nodeId)!;
    const attemptLimit = n.attempt + 1 + maxAttempts(node);
    if (node.type === NodeType.Subworkflow) {
      await resumeExhaustedChild(s, nodeId, n, node, attemptLimit);
      continue;
    }
    s.emit({
      type: 'RetryTask',
      taskId: n.taskId,
      nodeId,
      attempt: n.attempt,
      reason: n.error ?? 'failed',
      notBefore: s.now,
      attemptLimit,
    });
  }
}

/**
 * The node states FAILED for good on a node with `on_exhausted: pause`: they wait for a resume.
 * (Such a node has no `for_each`, so its state is its one task.)
 */
export function exhaustedNodes(s: Step): Array<[string, NodeState]> {
  const out: Array<[string, NodeState]> = [];
  for (const [nodeId, n] of s.run.nodes) {
    if (n.status === TaskStatus.Failed && n.iterations === undefined && s.dag.getNode(nodeId)?.on_exhausted === 'pause') out.push([nodeId, n]);
  }
  return out;
}

/** True when a failure of `ev` on `node` (its state `n`) is the last attempt it may make. */
export function attemptsLeft(node: WorkflowNode, n: NodeState, ev: NodeFailed): boolean {
  return ev.retryable !== false && ev.attempt + 1 < (n.attemptLimit ?? maxAttempts(node));
}

/**
 * A node with `on_exhausted: pause` failed for good (`n`, its own task): the task fails with the
 * error, no edge of it is taken, and the run pauses with a reason naming the node, its attempts
 * and the error. Returns false (nothing emitted) for any other node.
 */
export function pauseOnExhausted(s: Step, node: WorkflowNode, n: NodeState, ev: NodeFailed): boolean {
  if (node.on_exhausted !== 'pause' || n.iterations !== undefined || n.taskId !== ev.taskId) return false;
  s.emit({ type: 'FailTask', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, reason: ev.error });
  const made = ev.attempt + 1;
  const why =
    ev.retryable === false
      ? `node ${ev.nodeId} failed with an error that is not retried (attempt ${made}): ${ev.error}`
      : exhaustedReason(ev.nodeId, made, ev.error);
  // Paused already (by an operator): the reason says what now waits for the resume.
  if (s.run.status !== RunStatus.Paused) s.emit({ type: 'PauseRun', reason: why, cause: 'exhausted' });
  return true;
}

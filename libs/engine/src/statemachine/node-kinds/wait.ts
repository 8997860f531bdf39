/**
 * WAIT: parks until `spec.until` or for `spec.duration_seconds`, then completes with
 * `{woke_at}`. A wake time not after now completes it at once.
 */
import type { WorkflowNode } from '../../model/workflow-definition.js';
import { TaskStatus, type JsonObject } from '../../model/workflow-types.js';
import type { TimerFired } from '../events.js';
import { errorMessage, type Step } from '../step.js';
import { completed, failActivation, PENDING, type ActivationOutcome, type NodeOutcome } from './outcome.js';
import { completeAtOnce, resolveWaitSpec, waitingTask, wakeTime } from './wait-spec.js';

/** The output of a WAIT that fired at `t`: `{woke_at: <RFC 3339>}`. */
export function wokeAt(t: Date): JsonObject {
  return { woke_at: t.toISOString() };
}

/**
 * Activates WAIT node `n`: records it WAITING with `wakeAt` (`pending`), or COMPLETED with
 * `{woke_at}` when its wake time is not after now (`completed`). A spec that cannot be resolved,
 * is not storable, is no object, or gives no valid wake time records it FAILED (`failed`).
 * @throws StoreError (transient).
 */
export async function activateWait(s: Step, n: WorkflowNode): Promise<ActivationOutcome> {
  const resolved = await resolveWaitSpec(s, n);
  if ('outcome' in resolved) return resolved.outcome;
  const { spec } = resolved;
  const task = waitingTask(s, n, spec);
  let at: Date;
  try {
    at = wakeTime(spec, s.now);
  } catch (err) {
    return failActivation(s, n, errorMessage(err), { input: spec });
  }
  if (at.getTime() <= s.now.getTime()) return completeAtOnce(s, task, wokeAt(s.now));
  task.wakeAt = at;
  s.emit(task);
  return PENDING;
}

/**
 * TimerFired on a WAITING WAIT (the caller checked it is the node's current task in a running
 * run): the node completes with `{woke_at: now}` (one ResolveWait).
 */
export function wakeWait(s: Step, ev: TimerFired): NodeOutcome {
  const output = wokeAt(s.now);
  s.emit({ type: 'ResolveWait', taskId: ev.taskId, nodeId: ev.nodeId, status: TaskStatus.Completed, output });
  return completed(output);
}

/**
 * The definition's `finally` step: the run's exit handler. Once the run's outcome is decided
 * (`Step.endRun`: it would end SUCCEEDED or FAILED, or a cancel or its deadline ended it) the
 * outcome is recorded (DecideRun), the step is dispatched as one task, and the run stays RUNNING
 * until that task ends. Then the run takes the decided outcome — unless the step failed for good
 * (after its retries) or was cancelled: a success then ends FAILED (or CANCELLED, for a cancel)
 * with the step's error as the run's, and any other outcome keeps its status with the step's
 * error appended to its own.
 */
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import { hasActiveNode } from './apply-action.js';
import { schedule } from './routing.js';
import { isNodeActive, type DecidedOutcome } from './state.js';
import type { Step } from './step.js';

/**
 * The decided run's next step: dispatches the `finally` step when it was not reached yet (its
 * templates read `run.status` and `run.error` as decided), then, once it is no longer active,
 * ends the run ({@link finalOutcome}). Call it only for a run with a decided outcome that is not
 * paused.
 * @throws StoreError (transient) while loading the outputs its templates read.
 */
export async function runFinally(s: Step): Promise<void> {
  const step = s.dag.finallyNode;
  const decided = s.run.decided;
  if (!step || !decided) return;
  if (!s.run.nodes.has(step.node_id)) await schedule(s, step); // an input it cannot resolve fails it at once
  if (hasActiveNode(s.run)) return;
  s.emit({ type: 'FinishRun', ...finalOutcome(s, decided) });
}

/**
 * A cancel (`reason`) of a decided run: the `finally` step, while it runs, is stopped (its task
 * cancelled) and the run ends at once with the outcome {@link finalOutcome} gives for a cancelled
 * step. A step that ended already (its run was paused, so did not end with it) is not called
 * cancelled: the run ends as the step's end decided.
 */
export function cancelFinally(s: Step, reason: string): void {
  const decided = s.run.decided;
  if (!decided) return;
  const step = s.run.nodes.get(s.dag.finallyNode?.node_id ?? '');
  const running = step !== undefined && isNodeActive(step);
  s.emit({ type: 'CancelTasks', reason });
  s.emit({ type: 'FinishRun', ...finalOutcome(s, decided, running ? reason : undefined) });
}

/**
 * What a run with `decided` ends as, its `finally` step having ended (`cancelledWith`: cancelled
 * with that reason): the decided outcome when the step completed; when it failed or was
 * cancelled, with `finally node N failed: <error>` (`was cancelled: <reason>`) as the error of a
 * success, which becomes FAILED (CANCELLED), or appended (`; …`) to the error of any other
 * outcome, which keeps its status.
 */
export function finalOutcome(s: Step, decided: DecidedOutcome, cancelledWith?: string): DecidedOutcome {
  const id = s.dag.finallyNode?.node_id ?? '';
  const n = s.run.nodes.get(id);
  const cancelled = cancelledWith !== undefined || n?.status === TaskStatus.Cancelled;
  if (!cancelled && n?.status === TaskStatus.Completed) return decided;
  const error = (cancelledWith ?? n?.error)?.trim();
  const part = `finally node ${id} ${cancelled ? 'was cancelled' : 'failed'}${error ? `: ${error}` : ''}`;
  if (decided.status === RunStatus.Succeeded) return { status: cancelled ? RunStatus.Cancelled : RunStatus.Failed, reason: part };
  return { status: decided.status, reason: decided.reason ? `${decided.reason}; ${part}` : part };
}

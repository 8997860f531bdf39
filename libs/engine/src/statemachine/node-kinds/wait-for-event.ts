/**
 * WAIT_FOR_EVENT: waits for a signal named `spec.event`, for at most `spec.timeout_seconds`
 * (none: forever), and completes with the signal's payload. A signal sent before any node waited
 * is buffered by the run; activation consumes the oldest buffered one first.
 */
import { MAX_NAME_CHARS, badCharacter } from '../../model/storable-json.js';
import type { WorkflowNode } from '../../model/workflow-definition.js';
import { TaskStatus, type JsonValue } from '../../model/workflow-types.js';
import type { SignalReceived, TimerFired } from '../events.js';
import type { BufferedSignal, NodeState } from '../state.js';
import { errorMessage, storeError, type Step } from '../step.js';
import { completed, failActivation, failed, PENDING, type ActivationOutcome, type NodeOutcome } from './outcome.js';
import { completeAtOnce, isJsonObject, parseSecondsMs, resolveWaitSpec, waitingTask } from './wait-spec.js';

/**
 * Why `name` cannot be an event (signal) name, or undefined when it can: it must be a non-empty
 * string of at most {@link MAX_NAME_CHARS} characters that PostgreSQL can store (no NUL, no
 * lone surrogate). Pure.
 */
export function eventNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'event name is required';
  if (name.length > MAX_NAME_CHARS) return `event name is longer than ${MAX_NAME_CHARS} characters`;
  const bad = badCharacter(name);
  return bad ? `event name is not storable: ${bad}` : undefined;
}

/** The output of a WAIT_FOR_EVENT: the signal's `payload`, `{}` when absent or null. */
export function signalOutput(payload: JsonValue | undefined): JsonValue {
  return payload === undefined || payload === null ? {} : payload;
}

/** The problem of a resolved spec's event name, when it names one; checked before anything else. */
function specEventProblem(resolved: JsonValue): string | undefined {
  const event = isJsonObject(resolved) ? resolved.event : undefined;
  return typeof event === 'string' && event !== '' ? eventNameProblem(event) : undefined;
}

/**
 * Activates WAIT_FOR_EVENT node `n`. A buffered signal with its event name (the oldest not yet
 * consumed in this transition) is consumed and completes the node at once with its payload
 * (`completed`); otherwise the node is recorded WAITING with `awaitedSignal` and, for a timeout,
 * `wakeAt` (`pending`). A spec that cannot be resolved or stored, is no object, names no event or
 * a bad one, or has a bad timeout records the node FAILED (`failed`).
 * @throws StoreError (transient).
 */
export async function activateWaitForEvent(s: Step, n: WorkflowNode): Promise<ActivationOutcome> {
  const resolved = await resolveWaitSpec(s, n, specEventProblem);
  if ('outcome' in resolved) return resolved.outcome;
  const { spec } = resolved;
  const task = waitingTask(s, n, spec);
  const event = spec.event;
  if (typeof event !== 'string' || event === '') {
    return failActivation(s, n, 'WAIT_FOR_EVENT requires spec.event', { input: spec });
  }
  let signal: BufferedSignal | undefined;
  try {
    signal = await s.deps.store.pendingSignal(event, [...s.consumedSignals]);
  } catch (err) {
    throw storeError(err);
  }
  // Never hand one signal to two nodes, even if the Store ignored `skip`.
  if (signal && !s.consumedSignals.includes(signal.id)) {
    s.consumedSignals.push(signal.id);
    s.emit({ type: 'ConsumeSignal', signalId: signal.id, taskId: task.taskId });
    return completeAtOnce(s, task, signalOutput(signal.payload));
  }
  let timeoutMs: number;
  try {
    timeoutMs = parseSecondsMs(spec.timeout_seconds);
  } catch (err) {
    return failActivation(s, n, `timeout_seconds: ${errorMessage(err)}`, { input: spec });
  }
  if (timeoutMs > 0) task.wakeAt = new Date(s.now.getTime() + timeoutMs);
  task.awaitedSignal = event;
  s.emit(task);
  return PENDING;
}

/**
 * TimerFired on a WAITING WAIT_FOR_EVENT (the caller checked it is the node's current task in a
 * running run): its timeout passed, so it fails with `timed out waiting for event "x"` (one
 * ResolveWait).
 */
export function timeOutWaitForEvent(s: Step, ev: TimerFired, state: NodeState): NodeOutcome {
  const reason = `timed out waiting for event ${JSON.stringify(state.awaitedSignal ?? '')}`;
  s.emit({ type: 'ResolveWait', taskId: ev.taskId, nodeId: ev.nodeId, status: TaskStatus.Failed, reason });
  return failed(reason);
}

/**
 * Hands signal `ev` to the oldest node waiting for its name (smallest task id: ids are
 * time-ordered), which completes with the payload (one ResolveWait); returns that node and its
 * outcome. With no waiter the signal is buffered (one BufferSignal) and the result is undefined.
 * The caller checked the name and that the run is not finished.
 */
export function deliverSignal(s: Step, ev: SignalReceived): { nodeId: string; outcome: NodeOutcome } | undefined {
  const waiter = waiterFor(s, ev.name);
  if (!waiter) {
    s.emit({ type: 'BufferSignal', name: ev.name, payload: ev.payload ?? null });
    return undefined;
  }
  const [nodeId, n] = waiter;
  const output = signalOutput(ev.payload);
  s.emit({ type: 'ResolveWait', taskId: n.taskId, nodeId, status: TaskStatus.Completed, output });
  return { nodeId, outcome: completed(output) };
}

/** The oldest node waiting for the signal `name`, with its state. */
function waiterFor(s: Step, name: string): [string, NodeState] | undefined {
  let best: [string, NodeState] | undefined;
  for (const [id, n] of s.run.nodes) {
    if (n.status === TaskStatus.Waiting && n.awaitedSignal === name && (!best || n.taskId < best[1].taskId)) {
      best = [id, n];
    }
  }
  return best;
}

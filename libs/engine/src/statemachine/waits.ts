/**
 * Wait nodes (seed 000, step 8): WAIT and WAIT_FOR_EVENT never reach a worker. They park as
 * WAITING and are resolved by TimerFired or SignalReceived; a wait that is already satisfied
 * completes inline. Internal to the state machine, except the pure helpers.
 */
import { MAX_TIMESTAMP_MS, parseRfc3339 } from '../model/rfc3339.js';
import { MAX_NAME_CHARS, badCharacter } from '../model/storable-json.js';
import { MAX_DURATION_SECONDS, type WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, TaskStatus, type JsonObject, type JsonValue } from '../model/workflow-types.js';
import type { CreateTask } from './actions.js';
import { MachineError } from './errors.js';
import type { SignalReceived, TimerFired } from './events.js';
import { advanceFrom, routeFailure } from './routing.js';
import { onChildTimer } from './subworkflow.js';
import type { BufferedSignal, NodeState } from './state.js';
import { Step, errorMessage, isStoreError, storeError } from './step.js';

/**
 * Reads a JSON number or numeric string as a duration in milliseconds (seed 000 `parseSeconds`,
 * so templated values like `"{{input.delay}}"` work). Absent or null is 0. At most
 * {@link MAX_DURATION_SECONDS} (365 days): a longer wait would yield a wake time the database
 * cannot store, leaving the task stuck.
 * @throws Error `must be a non-negative number, got …` for anything that is not a finite number
 * >= 0; `must be at most 31536000 seconds (365 days), got …` beyond a year.
 */
export function parseSecondsMs(raw: JsonValue | undefined): number {
  if (raw === undefined || raw === null) return 0;
  let f = Number.NaN;
  if (typeof raw === 'number') f = raw;
  else if (typeof raw === 'string' && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) f = Number(raw);
  if (!Number.isFinite(f) || f < 0) {
    throw new Error(`must be a non-negative number, got ${shortJson(raw)}`);
  }
  if (f > MAX_DURATION_SECONDS) {
    throw new Error(`must be at most ${MAX_DURATION_SECONDS} seconds (365 days), got ${shortJson(raw)}`);
  }
  return f * 1000;
}

/** A value for an error message, cut at 80 characters (it may come from run data), never inside a surrogate pair. */
function shortJson(v: JsonValue): string {
  const s = JSON.stringify(v) ?? String(v);
  if (s.length <= 80) return s;
  const cut = /[\ud800-\udbff]/.test(s[76]) ? 76 : 77;
  return `${s.slice(0, cut)}...`;
}

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

/** The output of a WAIT that fired: `{woke_at: <RFC 3339>}`. */
export function wokeAt(t: Date): JsonObject {
  return { woke_at: t.toISOString() };
}

/** The output of a WAIT_FOR_EVENT: the signal's payload, `{}` when absent or null. */
export function signalOutput(payload: JsonValue | undefined): JsonValue {
  return payload === undefined || payload === null ? {} : payload;
}

/**
 * When a WAIT node fires (seed 000 `wakeTime`): `until` (RFC 3339, at most year 9999) if set,
 * else now + `duration_seconds` (at most 365 days, see {@link parseSecondsMs}).
 * @throws Error when neither is given or a value is malformed or out of range.
 */
export function wakeTime(spec: JsonObject, now: Date): Date {
  const until = spec.until;
  if (until !== undefined && until !== null && until !== '') {
    if (typeof until !== 'string') throw new Error('until must be an RFC 3339 time');
    const t = parseRfc3339(until);
    if (!t) throw new Error(`until must be an RFC 3339 time, got ${shortJson(until)}`);
    if (t.getTime() > MAX_TIMESTAMP_MS) throw new Error(`until must not be later than 9999-12-31T23:59:59Z, got ${shortJson(until)}`);
    return t;
  }
  if (spec.duration_seconds === undefined) {
    throw new Error('WAIT requires spec.duration_seconds or spec.until');
  }
  let ms: number;
  try {
    ms = parseSecondsMs(spec.duration_seconds);
  } catch (err) {
    throw new Error(`duration_seconds: ${errorMessage(err)}`);
  }
  return new Date(now.getTime() + ms);
}

/**
 * Records a wait node as WAITING (with `wakeAt` for a timer or a timeout, `awaitedSignal` for an
 * event). A wait already satisfied — a wake time not after now, or a buffered signal, which is
 * consumed (oldest first, never twice in one transition) — completes now and returns the node's successors so routing continues.
 * A wait whose spec cannot be resolved or is malformed is recorded FAILED.
 * @throws StoreError (transient).
 */
export async function park(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  let input: JsonValue;
  try {
    input = await s.resolveSpec(n);
  } catch (err) {
    if (isStoreError(err)) throw err;
    return failNode(s, n, undefined, errorMessage(err));
  }
  // The event name first (the more precise reason), then the whole spec; neither is stored.
  const event = isSpecObject(input) ? input.event : undefined;
  if (n.type === NodeType.WaitForEvent && typeof event === 'string' && event !== '') {
    const bad = eventNameProblem(event);
    if (bad) return failNode(s, n, undefined, bad);
  }
  try {
    s.checkInput(input);
  } catch (err) {
    return failNode(s, n, undefined, errorMessage(err));
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return failNode(s, n, input, 'invalid wait spec: must be an object');
  }
  const spec = input;

  const task: CreateTask = { type: 'CreateTask', taskId: s.newId(), node: n, input, status: TaskStatus.Waiting };
  if (n.type === NodeType.Wait) {
    let at: Date;
    try {
      at = wakeTime(spec, s.now);
    } catch (err) {
      return failNode(s, n, input, errorMessage(err));
    }
    if (at.getTime() <= s.now.getTime()) return completeNow(s, task, wokeAt(s.now));
    task.wakeAt = at;
  } else {
    if (typeof event !== 'string' || event === '') {
      return failNode(s, n, input, 'WAIT_FOR_EVENT requires spec.event');
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
      return completeNow(s, task, signalOutput(signal.payload));
    }
    let timeoutMs: number;
    try {
      timeoutMs = parseSecondsMs(spec.timeout_seconds);
    } catch (err) {
      return failNode(s, n, input, `timeout_seconds: ${errorMessage(err)}`);
    }
    if (timeoutMs > 0) task.wakeAt = new Date(s.now.getTime() + timeoutMs);
    task.awaitedSignal = event;
  }
  s.emit(task);
  return [];
}

function isSpecObject(v: JsonValue): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Records a wait that is already satisfied as COMPLETED and continues past it. */
function completeNow(s: Step, task: CreateTask, output: JsonValue): WorkflowNode[] {
  s.emit({ ...task, status: TaskStatus.Completed, output });
  s.setOutput(task.node.node_id, output);
  return s.dag.successors(task.node.node_id);
}

/** Records a node that cannot start as FAILED (a fresh task id, as seed 000 `failNode`). */
function failNode(s: Step, n: WorkflowNode, input: JsonValue | undefined, reason: string): WorkflowNode[] {
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, input, error: reason });
  return [];
}

/**
 * TimerFired: on a WAITING WAIT the node completes with `{woke_at}` and routing continues; on a
 * WAITING WAIT_FOR_EVENT it is a timeout: the node fails with `timed out waiting for event "x"`;
 * on a WAITING SUBWORKFLOW its child run ended or a retry is due (see `onChildTimer`).
 * A timer for another task, a node no longer waiting, or a finished run is ignored.
 */
export async function onTimerFired(s: Step, ev: TimerFired): Promise<void> {
  const n = s.run.nodes.get(ev.nodeId);
  if (!n || n.taskId !== ev.taskId || n.status !== TaskStatus.Waiting || s.terminal()) {
    s.ignore(`timer for ${ev.nodeId} no longer pending`);
    return;
  }
  const node = s.dag.getNode(ev.nodeId);
  if (node?.type === NodeType.Subworkflow) {
    await onChildTimer(s, ev, n, node);
    return;
  }
  if (node?.type === NodeType.WaitForEvent) {
    s.emit({
      type: 'ResolveWait',
      taskId: ev.taskId,
      nodeId: ev.nodeId,
      status: TaskStatus.Failed,
      reason: `timed out waiting for event ${JSON.stringify(n.awaitedSignal ?? '')}`,
    });
    await routeFailure(s, ev.nodeId);
    return;
  }
  const output = wokeAt(s.now);
  s.emit({ type: 'ResolveWait', taskId: ev.taskId, nodeId: ev.nodeId, status: TaskStatus.Completed, output });
  await advanceFrom(s, ev.nodeId, output);
}

/**
 * SignalReceived: the oldest node waiting for that name completes with the payload (`{}` when
 * absent) and routing continues; with no waiter the signal is buffered for a later park.
 * @throws MachineError INVALID_REQUEST without a name or for one that is too long or unstorable;
 * RUN_FINISHED on a finished run.
 */
export async function onSignalReceived(s: Step, ev: SignalReceived): Promise<void> {
  const badName = eventNameProblem(ev.name);
  if (badName) throw new MachineError('INVALID_REQUEST', badName);
  if (s.terminal()) throw new MachineError('RUN_FINISHED', `run is ${s.run.status}`);

  const waiter = waiterFor(s, ev.name);
  if (!waiter) {
    s.emit({ type: 'BufferSignal', name: ev.name, payload: ev.payload ?? null });
    s.tr.signalDelivered = false;
    return;
  }
  const [nodeId, n] = waiter;
  const output = signalOutput(ev.payload);
  s.emit({ type: 'ResolveWait', taskId: n.taskId, nodeId, status: TaskStatus.Completed, output });
  s.tr.signalDelivered = true;
  await advanceFrom(s, nodeId, output);
}

/** The oldest node waiting for the signal: smallest task id (UUIDv7 ids are time-ordered). */
function waiterFor(s: Step, name: string): [string, NodeState] | undefined {
  let best: [string, NodeState] | undefined;
  for (const [id, n] of s.run.nodes) {
    if (n.status === TaskStatus.Waiting && n.awaitedSignal === name && (!best || n.taskId < best[1].taskId)) {
      best = [id, n];
    }
  }
  return best;
}

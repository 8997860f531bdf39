/**
 * What WAIT and WAIT_FOR_EVENT share: reading a duration, the wake time of a WAIT, and resolving
 * and checking a wait's spec when the node activates. A wait never reaches a worker: it parks as
 * WAITING until its timer fires or its signal arrives, or completes at once when already due.
 */
import { MAX_TIMESTAMP_MS, parseRfc3339 } from '../../model/rfc3339.js';
import { MAX_DURATION_SECONDS, type WorkflowNode } from '../../model/workflow-definition.js';
import { TaskStatus, type JsonObject, type JsonValue } from '../../model/workflow-types.js';
import type { CreateTask } from '../actions.js';
import { errorMessage, isStoreError, type Step } from '../step.js';
import { completed, failActivation, type ActivationOutcome } from './outcome.js';

/**
 * Reads a JSON number or numeric string (so a templated `"{{input.delay}}"` works) as a duration
 * in milliseconds. Absent or null is 0. At most {@link MAX_DURATION_SECONDS} (365 days): a longer
 * wait would yield a wake time the database cannot store, leaving the task stuck.
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
 * When a WAIT node fires: `until` (RFC 3339, at most year 9999) if set, else `now` +
 * `duration_seconds` (at most 365 days, see {@link parseSecondsMs}).
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

/** True for a JSON object (not null, not an array). */
export function isJsonObject(v: JsonValue): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Resolves the templates of wait node `n`'s spec and checks the result: `firstProblem` (a check
 * of its own kind, run before the others because its reason is more precise) must find nothing,
 * the value must be storable (see `Step.checkInput`) and an object. Returns `{spec}`, or
 * `{outcome}` when the node was recorded FAILED instead (the task keeps the resolved value only
 * when it failed for not being an object).
 * @throws StoreError (transient) while loading the outputs the spec reads.
 */
export async function resolveWaitSpec(
  s: Step,
  n: WorkflowNode,
  firstProblem?: (resolved: JsonValue) => string | undefined,
): Promise<{ spec: JsonObject } | { outcome: ActivationOutcome }> {
  let input: JsonValue;
  try {
    input = await s.resolveSpec(n);
  } catch (err) {
    if (isStoreError(err)) throw err;
    return { outcome: failActivation(s, n, errorMessage(err), { input: undefined }) };
  }
  // Nothing of a spec refused here is stored: it may be what made it unstorable.
  const early = firstProblem?.(input);
  if (early) return { outcome: failActivation(s, n, early, { input: undefined }) };
  try {
    s.checkInput(input);
  } catch (err) {
    return { outcome: failActivation(s, n, errorMessage(err), { input: undefined }) };
  }
  if (!isJsonObject(input)) return { outcome: failActivation(s, n, 'invalid wait spec: must be an object', { input }) };
  return { spec: input };
}

/** A WAITING task to be recorded for wait node `n` with its resolved `spec`, under a fresh task id. */
export function waitingTask(s: Step, n: WorkflowNode, spec: JsonObject): CreateTask {
  return { type: 'CreateTask', taskId: s.newId(), node: n, input: spec, status: TaskStatus.Waiting };
}

/** Records a wait that is already satisfied as COMPLETED with `output` (one CreateTask) and says so. */
export function completeAtOnce(s: Step, task: CreateTask, output: JsonValue): ActivationOutcome {
  s.emit({ ...task, status: TaskStatus.Completed, output });
  return completed(output);
}

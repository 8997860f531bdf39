/**
 * `for_each` (HTTP and CODE nodes): the node runs one task, an iteration, per element of the
 * array its `for_each` template gives. The node's own task is the aggregate: RUNNING until every
 * iteration settled, then COMPLETED with the iterations' outputs in element order (or their merge
 * with the node's `reducers`), or FAILED once more iterations failed for good than its
 * `tolerated_failures` allows. Each iteration has its own attempts, retries and lease;
 * `max_concurrency` holds the others back as WAITING. A retry with `failedIterationsOnly` runs
 * the failed, skipped and cancelled iterations again ({@link reopenIterations}).
 */
import { reduceJoin } from '../../model/reducers.js';
import { formatBytes } from '../../model/storable-json.js';
import { allowedFailures } from '../../model/tolerated-failures.js';
import { MAX_ITERATIONS, iterationAlias, maxAttempts, type WorkflowNode } from '../../model/workflow-definition.js';
import { TaskStatus, type JsonValue } from '../../model/workflow-types.js';
import type { CreateIterations, TaskFlow } from '../actions.js';
import { resolveTaskFlow } from '../flow-keys.js';
import { isNodeActive, isTaskActive, type NodeState } from '../state.js';
import { GATHERED_VALUE_FACTOR, errorMessage, isStoreError, sizeProblem, storeError, type Step } from '../step.js';
import { completed, failActivation, failed, PENDING, type ActivationOutcome, type NodeOutcome } from './outcome.js';

/**
 * The variables the templates of iteration `index` (0-based) of `count` see: `item` (the
 * element) under the node's alias, `<as>Index` and `<as>Count`.
 */
export function iterationLocals(n: WorkflowNode, item: JsonValue, index: number, count: number): Record<string, JsonValue> {
  const as = iterationAlias(n);
  return { [as]: item, [`${as}Index`]: index, [`${as}Count`]: count };
}

/**
 * Activates a ready `for_each` node: resolves its array, then each iteration's input (its spec
 * with the element, index and count bound) and flow keys (`concurrency`, `rate_limit`, in the
 * same scope), and records the aggregate task and the iterations in
 * one CreateIterations, dispatching the first `max_concurrency` (all by default): `pending`. An
 * empty array completes the node at once with `[]` (with `reducers`, `{}`: the merge of
 * nothing): `completed`. A template or flow key that cannot be resolved, a value that is not an array, more
 * than {@link MAX_ITERATIONS} elements, an iteration input that cannot be stored, or resolved
 * inputs of more than {@link GATHERED_VALUE_FACTOR} × `maxValueBytes` characters in all record the
 * node FAILED with a reason naming it (and the iteration): `failed`.
 * @throws StoreError (transient).
 */
export async function activateForEach(s: Step, n: WorkflowNode): Promise<ActivationOutcome> {
  const fail = (reason: string): ActivationOutcome => failActivation(s, n, `for_each of node ${n.node_id}: ${reason}`);
  let items: JsonValue;
  try {
    await s.ensureOutputs(n);
    items = s.deps.templates.resolve(n.for_each ?? '', s.templateContext(), s.now);
  } catch (err) {
    if (isStoreError(err)) throw err;
    return fail(errorMessage(err));
  }
  if (!Array.isArray(items)) return fail(`must give an array, got ${items === null ? 'null' : typeof items === 'object' ? 'an object' : `a ${typeof items}`}`);
  if (items.length > MAX_ITERATIONS) return fail(`gave ${items.length} elements; at most ${MAX_ITERATIONS} are allowed`);
  if (items.length === 0) {
    const output: JsonValue = n.reducers !== undefined ? {} : [];
    s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Completed, output });
    return completed(output);
  }
  const iterations: CreateIterations['iterations'] = [];
  let total = 0;
  const budget = s.maxValueBytes * GATHERED_VALUE_FACTOR; // written in one statement
  for (let i = 0; i < items.length; i++) {
    let input: JsonValue;
    let flow: TaskFlow | undefined;
    try {
      const locals = iterationLocals(n, items[i]!, i, items.length);
      input = await s.resolveInput(n, locals);
      flow = resolveTaskFlow(s, n, locals);
    } catch (err) {
      if (isStoreError(err)) throw err;
      return fail(`iteration ${i}: ${errorMessage(err)}`);
    }
    total += (JSON.stringify(input) ?? 'null').length;
    if (total > budget) return fail(`the iterations' resolved inputs exceed ${budget} characters in all (at iteration ${i} of ${items.length})`);
    iterations.push({ taskId: s.newId(), input, ...(flow ? { flow } : {}) });
  }
  const dispatch = Math.min(items.length, n.max_concurrency ?? items.length);
  s.emit({ type: 'CreateIterations', taskId: s.newId(), node: n, iterations, dispatch, notBefore: s.now });
  return PENDING;
}

/**
 * After an iteration of `nodeId` settled (completed, or failed for good): frees its
 * `max_concurrency` slot for the next WAITING iteration (ReleaseIteration) — unless more
 * iterations failed for good than the node's `tolerated_failures` allows (0 by default), or the
 * run finished, which skips every iteration not started yet (SkipIterations). Once no iteration
 * is active it settles the aggregate task: FAILED when too many iterations failed (without
 * `tolerated_failures`, `iteration 2 of 5 failed: …`; with it, `3 of 10 iterations failed, more
 * than tolerated_failures 2 allows: iteration 4: …`, naming the first failed iteration), or when
 * the outputs are too large together or cannot be merged (`failed`); else COMPLETED with the
 * iteration outputs in element order, `null` for a failed iteration, or the merge of the
 * completed ones with the node's `reducers` (`completed`). While iterations are active, or when
 * `nodeId` is no running `for_each` node, the outcome is `pending`.
 * `justCompleted` is the iteration this event completed (its output is not stored yet).
 * @throws StoreError (transient).
 */
export async function settleIteration(s: Step, nodeId: string, justCompleted?: { taskId: string; output: JsonValue }): Promise<NodeOutcome> {
  const agg = s.run.nodes.get(nodeId);
  const node = s.dag.getNode(nodeId);
  if (!agg?.iterations || !node || !isTaskActive(agg)) return PENDING;
  const its = agg.iterations;
  const failedAt = its.findIndex((it) => it.status === TaskStatus.Failed);
  const failures = its.filter((it) => it.status === TaskStatus.Failed).length;
  const allowed = allowedFailures(node.tolerated_failures, its.length);
  const tooMany = failures > allowed;
  const held = its.filter((it) => it.status === TaskStatus.Waiting);
  if (held.length > 0 && (tooMany || s.terminal())) {
    const reason = !tooMany
      ? 'not started: the run finished'
      : node.tolerated_failures === undefined
        ? `not started: iteration ${failedAt} failed`
        : `not started: ${failures} iterations failed, more than tolerated_failures ${toleranceText(node.tolerated_failures, allowed)} allows`;
    s.emit({ type: 'SkipIterations', nodeId, taskIds: held.map((it) => it.taskId), reason });
  } else if (held.length > 0) {
    let active = its.filter(isTaskActive).length;
    const limit = node.max_concurrency ?? its.length;
    for (let i = 0; i < its.length && active < limit; i++) {
      if (its[i]!.status !== TaskStatus.Waiting) continue;
      s.emit({ type: 'ReleaseIteration', taskId: its[i]!.taskId, nodeId, iteration: i, notBefore: s.now });
      active++;
    }
  }
  if (its.some(isNodeActive)) return PENDING;
  if (tooMany) {
    const first = `iteration ${failedAt}: ${its[failedAt]!.error ?? 'no reason given'}`;
    const reason =
      node.tolerated_failures === undefined
        ? `iteration ${failedAt} of ${its.length} failed: ${its[failedAt]!.error ?? 'no reason given'}`
        : `${failures} of ${its.length} iterations failed, more than tolerated_failures ${toleranceText(node.tolerated_failures, allowed)} allows: ${first}`;
    return failAggregate(s, nodeId, agg, reason);
  }
  const budget = s.maxValueBytes * GATHERED_VALUE_FACTOR;
  let loaded: JsonValue[] | { tooLarge: number };
  try {
    loaded = await s.deps.store.iterationOutputs(nodeId, budget);
  } catch (err) {
    throw storeError(err);
  }
  if (!Array.isArray(loaded)) {
    return failAggregate(s, nodeId, agg, `for_each output of node ${nodeId} too large: ${formatBytes(loaded.tooLarge)} > ${formatBytes(budget)}`);
  }
  const outputs = loaded;
  // The iteration this event completed is not written yet: the Store cannot have its output.
  const at = justCompleted ? its.findIndex((it) => it.taskId === justCompleted.taskId) : -1;
  if (justCompleted && at >= 0) outputs[at] = justCompleted.output;
  // A tolerated failure leaves null in its place; the merge leaves it out.
  for (let i = 0; i < its.length; i++) if (its[i]!.status !== TaskStatus.Completed && i !== at) outputs[i] = null;
  const merged =
    node.reducers !== undefined
      ? reduceJoin(
          node.reducers,
          outputs.flatMap((output, i) => (its[i]!.status === TaskStatus.Completed || i === at ? [{ nodeId: `${nodeId}[${i}]`, output }] : [])),
        )
      : ({ ok: true, output: outputs } as const);
  // Gathered from stored iteration outputs: only the size of the whole is new, and it may exceed one value's.
  const problem = merged.ok ? sizeProblem(merged.output, budget, `for_each output of node ${nodeId}`) : `for_each of node ${nodeId}: ${merged.error}`;
  if (!merged.ok || problem !== undefined) return failAggregate(s, nodeId, agg, problem ?? 'cannot merge the iteration outputs');
  s.emit({ type: 'CompleteTask', taskId: agg.taskId, nodeId, attempt: agg.attempt, output: merged.output });
  return completed(merged.output);
}

/** `tolerated_failures` as a reason shows it: `2`, or `"20%"` with what it allows here (`20% (2)`). */
function toleranceText(tolerated: number | string, allowed: number): string {
  return typeof tolerated === 'number' ? String(tolerated) : `${tolerated} (${allowed})`;
}

/** Fails the aggregate task `agg` of `nodeId` for good with `reason` (one FailTask). */
function failAggregate(s: Step, nodeId: string, agg: NodeState, reason: string): NodeOutcome {
  s.emit({ type: 'FailTask', taskId: agg.taskId, nodeId, attempt: agg.attempt, reason });
  return failed(reason);
}

/** The iteration statuses a retry with `failedIterationsOnly` runs again. */
const RERUN = new Set<TaskStatus>([TaskStatus.Failed, TaskStatus.Skipped, TaskStatus.Cancelled]);

/**
 * Why a retry with `failedIterationsOnly` cannot restart at node `n` (the retry's version), or
 * undefined when it can: `n` must be a `for_each` node that fanned out and has a FAILED, SKIPPED
 * or CANCELLED iteration.
 */
export function iterationRetryRefusal(s: Step, n: WorkflowNode): string | undefined {
  const what = `failedIterationsOnly: node ${n.node_id}`;
  if (n.for_each === undefined) return `${what} has no for_each; retry from it without failedIterationsOnly`;
  const its = s.run.nodes.get(n.node_id)?.iterations;
  if (its === undefined) return `${what} has no iterations (it was not reached, or its for_each did not fan out); retry from it without failedIterationsOnly`;
  if (!its.some((it) => RERUN.has(it.status))) return `${what} has no failed, skipped or cancelled iteration to run again`;
  return undefined;
}

/**
 * A retry with `failedIterationsOnly` at `for_each` node `n` (checked by
 * {@link iterationRetryRefusal}): its aggregate task runs again with its FAILED, SKIPPED and
 * CANCELLED iterations (ReopenIterations: each WAITING at its next attempt, with its stored
 * input and its node's `max_attempts` more attempts), the first `max_concurrency` of them
 * dispatched now (ReleaseIteration); the COMPLETED ones keep their outputs.
 */
export function reopenIterations(s: Step, n: WorkflowNode): void {
  const agg = s.run.nodes.get(n.node_id)!;
  const again = agg.iterations!.flatMap((it, i) =>
    RERUN.has(it.status) ? [{ taskId: it.taskId, iteration: i, attempt: it.attempt, attemptLimit: it.attempt + 1 + maxAttempts(n) }] : [],
  );
  s.emit({ type: 'ReopenIterations', taskId: agg.taskId, nodeId: n.node_id, iterations: again });
  const dispatch = Math.min(again.length, n.max_concurrency ?? again.length);
  for (const it of again.slice(0, dispatch)) {
    s.emit({ type: 'ReleaseIteration', taskId: it.taskId, nodeId: n.node_id, iteration: it.iteration, notBefore: s.now });
  }
}

/**
 * Dynamic fan-out (seed 003 `forEach`, DESIGN §6): a worker node with `for_each` runs one task per
 * element of an array. The node's own task is the aggregate (RUNNING until every iteration
 * settled, then COMPLETED with the iterations' outputs or FAILED); each iteration has its own
 * attempts, retries and lease. Internal to the state machine.
 */
import { reduceJoin } from '../model/reducers.js';
import { formatBytes } from '../model/storable-json.js';
import { MAX_ITERATIONS, iterationAlias, type WorkflowNode } from '../model/workflow-definition.js';
import { TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { advanceFrom, routeFailure } from './routing.js';
import { isNodeActive, isTaskActive, type NodeState } from './state.js';
import { GATHERED_VALUE_FACTOR, Step, errorMessage, isStoreError, sizeProblem, storeError } from './step.js';

/** The variables an iteration's templates see: the element under the alias, its index and the count. */
export function iterationLocals(n: WorkflowNode, item: JsonValue, index: number, count: number): Record<string, JsonValue> {
  const as = iterationAlias(n);
  return { [as]: item, [`${as}Index`]: index, [`${as}Count`]: count };
}

/**
 * Activates a ready `for_each` node: resolves its array, then each iteration's input (its spec
 * with the element, index and count bound), and records the aggregate task and the iterations in
 * one CreateIterations, dispatching the first `max_concurrency` (all by default). An empty array
 * completes the node at once with `[]` (with `reducers`, `{}`: the merge of nothing) and returns
 * its successors. A template that cannot be resolved, a value that is not an array, more than
 * {@link MAX_ITERATIONS} elements, or an iteration input that cannot be stored records the node
 * FAILED with a reason naming it (and the iteration).
 * @throws StoreError (transient).
 */
export async function fanOut(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  const fail = (reason: string): WorkflowNode[] => {
    s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, error: `for_each of node ${n.node_id}: ${reason}` });
    return [];
  };
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
    s.setOutput(n.node_id, output);
    return s.dag.successors(n.node_id);
  }
  const iterations: Array<{ taskId: string; input: JsonValue }> = [];
  let total = 0;
  const budget = s.maxValueBytes * GATHERED_VALUE_FACTOR; // written in one statement
  for (let i = 0; i < items.length; i++) {
    let input: JsonValue;
    try {
      input = await s.resolveInput(n, iterationLocals(n, items[i]!, i, items.length));
    } catch (err) {
      if (isStoreError(err)) throw err;
      return fail(`iteration ${i}: ${errorMessage(err)}`);
    }
    total += (JSON.stringify(input) ?? 'null').length;
    if (total > budget) return fail(`the iterations' resolved inputs exceed ${budget} characters in all (at iteration ${i} of ${items.length})`);
    iterations.push({ taskId: s.newId(), input });
  }
  const dispatch = Math.min(items.length, n.max_concurrency ?? items.length);
  s.emit({ type: 'CreateIterations', taskId: s.newId(), node: n, iterations, dispatch, notBefore: s.now });
  return [];
}

/**
 * After an iteration of `nodeId` settled (completed, or failed for good): frees its
 * `max_concurrency` slot for the next WAITING iteration — unless an iteration failed for good or
 * the run finished, which skips every iteration not started yet — and, once no iteration is
 * active, settles the aggregate task: FAILED with the first failed iteration's reason (`iteration
 * 2 of 5 failed: …`), else COMPLETED with the iteration outputs in element order (or their merge
 * with the node's `reducers`), and routes on like any node. `completed` is the iteration this
 * event completed (its output is not stored yet).
 * @throws StoreError (transient).
 */
export async function iterationSettled(s: Step, nodeId: string, completed?: { taskId: string; output: JsonValue }): Promise<void> {
  const agg = s.run.nodes.get(nodeId);
  const node = s.dag.getNode(nodeId);
  if (!agg?.iterations || !node || !isTaskActive(agg)) return;
  const its = agg.iterations;
  const failedAt = its.findIndex((it) => it.status === TaskStatus.Failed);
  const held = its.filter((it) => it.status === TaskStatus.Waiting);
  if (held.length > 0 && (failedAt >= 0 || s.terminal())) {
    const reason = failedAt >= 0 ? `not started: iteration ${failedAt} failed` : 'not started: the run finished';
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
  if (its.some(isNodeActive)) return;
  if (failedAt >= 0) {
    const reason = `iteration ${failedAt} of ${its.length} failed: ${its[failedAt]!.error ?? 'no reason given'}`;
    failAggregate(s, nodeId, agg, reason);
    await routeFailure(s, nodeId);
    return;
  }
  const budget = s.maxValueBytes * GATHERED_VALUE_FACTOR;
  let loaded: JsonValue[] | { tooLarge: number };
  try {
    loaded = await s.deps.store.iterationOutputs(nodeId, budget);
  } catch (err) {
    throw storeError(err);
  }
  if (!Array.isArray(loaded)) {
    failAggregate(s, nodeId, agg, `for_each output of node ${nodeId} too large: ${formatBytes(loaded.tooLarge)} > ${formatBytes(budget)}`);
    await routeFailure(s, nodeId);
    return;
  }
  const outputs = loaded;
  // The iteration this event completed is not written yet: the Store cannot have its output.
  const at = completed ? its.findIndex((it) => it.taskId === completed.taskId) : -1;
  if (completed && at >= 0) outputs[at] = completed.output;
  const merged =
    node.reducers !== undefined
      ? reduceJoin(node.reducers, outputs.map((output, i) => ({ nodeId: `${nodeId}[${i}]`, output })))
      : ({ ok: true, output: outputs } as const);
  // Gathered from stored iteration outputs: only the size of the whole is new, and it may exceed one value's.
  const problem = merged.ok ? sizeProblem(merged.output, budget, `for_each output of node ${nodeId}`) : `for_each of node ${nodeId}: ${merged.error}`;
  if (!merged.ok || problem !== undefined) {
    failAggregate(s, nodeId, agg, problem ?? 'cannot merge the iteration outputs');
    await routeFailure(s, nodeId);
    return;
  }
  s.emit({ type: 'CompleteTask', taskId: agg.taskId, nodeId, attempt: agg.attempt, output: merged.output });
  if (s.terminal()) return;
  await advanceFrom(s, nodeId, merged.output);
}

function failAggregate(s: Step, nodeId: string, agg: NodeState, reason: string): void {
  s.emit({ type: 'FailTask', taskId: agg.taskId, nodeId, attempt: agg.attempt, reason });
}

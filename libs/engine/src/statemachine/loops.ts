/**
 * The end of each DO_WHILE iteration (model/do-while.ts). A loop's task is RUNNING while its body
 * runs; once no body node of the current iteration is active (nor, on a paused run, waiting for
 * its resume after its attempts ran out with `on_exhausted: pause`), the iteration ends:
 * - a body node failed (no `on_error` edge took it) or was cancelled: the loop fails with
 *   `iteration 2: node check failed: …` (messages count iterations from 1, as the console and
 *   CLI show them; `Task.loopIteration` and `tasks.<loop>.iteration` count from 0);
 * - else its output is resolved (`spec.output`, else the completed body sinks' outputs by node
 *   id) and its condition evaluated over that iteration's tasks: false completes the loop with
 *   the output; true starts the next iteration (NextLoopIteration, then the body's sources), or,
 *   after `max_iterations`, fails the loop (`DO_WHILE L reached max_iterations 5 with its
 *   condition still true`).
 * An output or condition that cannot be resolved fails the loop, naming the iteration. Routing
 * then goes on from the loop as from any node that completed or failed.
 */
import { isLoop, loopSpec, maxIterationsReason } from '../model/do-while.js';
import { MAX_ITERATIONS, type WorkflowNode } from '../model/workflow-definition.js';
import { RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { evalCondition, isHandledFailure } from './branches.js';
import { completed, failed, type NodeOutcome } from './node-kinds/outcome.js';
import { propagate, routeOutcome, startBody } from './routing.js';
import { unsuccessfulRunReason, type UnsuccessfulNode } from './run-failure.js';
import { isNodeActive, type NodeState } from './state.js';
import { GATHERED_VALUE_FACTOR, errorMessage, isStoreError, sizeProblem, valueProblem, type Step } from './step.js';

/**
 * Ends every DO_WHILE iteration whose body has nothing active any more, and routes on from the
 * loops that ended; repeats until none changes (a body of control nodes only runs its
 * iterations within one event). Nothing for a definition without loops or a finished run.
 * @throws StoreError (transient).
 */
export async function settleLoops(s: Step): Promise<void> {
  if (!s.dag.hasLoops) return;
  // Iterations each loop started within this event: a body that waits for nothing runs them all here.
  const started = new Map<string, number>();
  for (let changed = true; changed;) {
    changed = false;
    for (const loop of s.dag.nodes) {
      if (s.terminal() || s.run.decided) return;
      const st = s.run.nodes.get(loop.node_id);
      if (!isLoop(loop) || st?.status !== TaskStatus.Running || st.loop === undefined || bodyActive(s, loop.node_id)) continue;
      const outcome = await endIteration(s, loop, st, started);
      if (outcome !== undefined) await routeOutcome(s, loop.node_id, outcome);
      changed = true;
    }
  }
}

/**
 * True while some body node of loop `loopId`'s current iteration is active, or, on a paused run,
 * failed for good with `on_exhausted: pause`: the resume runs it again within the iteration.
 */
function bodyActive(s: Step, loopId: string): boolean {
  const paused = s.run.status === RunStatus.Paused;
  return s.dag.bodyNodes(loopId).some((b) => {
    const n = s.run.nodes.get(b.node_id);
    if (n === undefined) return false;
    return isNodeActive(n) || (paused && b.on_exhausted === 'pause' && n.status === TaskStatus.Failed && n.iterations === undefined);
  });
}

/**
 * Ends the current iteration of `loop` (state `st`): the loop's outcome, or undefined when the
 * next iteration started.
 * @throws StoreError (transient).
 */
async function endIteration(s: Step, loop: WorkflowNode, st: NodeState, started: Map<string, number>): Promise<NodeOutcome | undefined> {
  const iteration = st.loop!.iteration;
  // Messages count iterations from 1, as people read them (the API and templates from 0).
  const shown = `iteration ${iteration + 1}`;
  const fail = (reason: string): NodeOutcome => {
    s.emit({ type: 'FailTask', taskId: st.taskId, nodeId: loop.node_id, attempt: st.attempt, reason });
    return failed(reason);
  };
  const unsuccessful = unsuccessfulBodyNodes(s, loop.node_id);
  if (unsuccessful.length > 0) return fail(`${shown}: ${unsuccessfulRunReason(unsuccessful)}`);
  const spec = loopSpec(loop);
  let output: JsonValue;
  let again: boolean;
  try {
    output = await iterationOutput(s, loop);
  } catch (err) {
    if (isStoreError(err)) throw err;
    return fail(`${shown}: cannot resolve the output: ${errorMessage(err)}`);
  }
  const problem =
    spec.output === undefined
      ? sizeProblem(output, s.maxValueBytes * GATHERED_VALUE_FACTOR, `${shown} output`)
      : valueProblem(`${shown} output`, output, s.maxValueBytes);
  if (problem) return fail(problem);
  try {
    await s.ensureOutputs(loop);
    again = evalCondition(s, spec.condition ?? '');
  } catch (err) {
    if (isStoreError(err)) throw err;
    return fail(`${shown}: condition: ${errorMessage(err)}`);
  }
  if (!again) {
    s.emit({ type: 'CompleteTask', taskId: st.taskId, nodeId: loop.node_id, attempt: st.attempt, output });
    return completed(output);
  }
  const max = spec.maxIterations ?? 1;
  if (iteration + 1 >= max) return fail(maxIterationsReason(loop.node_id, max));
  // One event creates at most MAX_ITERATIONS body tasks of a loop (as a for_each node's), counting
  // the iteration it may have started the loop with: past that, its body waits for no work.
  const runs = (started.get(loop.node_id) ?? 0) + 1;
  const size = s.dag.bodyNodes(loop.node_id).length;
  if ((runs + 1) * size >= MAX_ITERATIONS) {
    return fail(
      `${shown}: ${runs} iterations ran within one step without waiting for any work, and one more would pass ` +
        `${MAX_ITERATIONS.toLocaleString('en-US')} body tasks in one step: every path of the body needs a node that waits ` +
        'for work (HTTP, CODE, WAIT, WAIT_FOR_EVENT or SUBWORKFLOW)',
    );
  }
  started.set(loop.node_id, runs);
  s.emit({
    type: 'NextLoopIteration',
    taskId: st.taskId,
    nodeId: loop.node_id,
    iteration: iteration + 1,
    previous: output,
    bodyNodeIds: s.dag.bodyNodes(loop.node_id).map((b) => b.node_id),
  });
  try {
    await propagate(s, await startBody(s, loop.node_id));
  } catch (err) {
    if (isStoreError(err)) throw err;
    s.failRun(`DO_WHILE ${loop.node_id} iteration ${iteration + 2}: ${errorMessage(err)}`);
  }
  return undefined;
}

/** The body nodes that failed (no `on_error` edge took the failure) or were cancelled, in spec order. */
function unsuccessfulBodyNodes(s: Step, loopId: string): UnsuccessfulNode[] {
  const out: UnsuccessfulNode[] = [];
  for (const b of s.dag.bodyNodes(loopId)) {
    const n = s.run.nodes.get(b.node_id);
    if (n && (n.status === TaskStatus.Cancelled || (n.status === TaskStatus.Failed && !isHandledFailure(s, b.node_id, n)))) {
      out.push({ nodeId: b.node_id, status: n.status, ...(n.error !== undefined ? { error: n.error } : {}) });
    }
  }
  return out;
}

/**
 * The current iteration's output: the loop's `spec.output` resolved against the run context, or
 * an object of the completed body sinks' outputs by node id (a `sensitive` sink's redacted).
 * @throws Error when the template cannot be resolved; StoreError (transient).
 */
async function iterationOutput(s: Step, loop: WorkflowNode): Promise<JsonValue> {
  const template = loopSpec(loop).output;
  if (template !== undefined) {
    await s.ensureOutputs(loop);
    return s.deps.templates.resolve(template, s.templateContext(), s.now);
  }
  return s.completedOutputs(s.dag.bodySinks(loop.node_id));
}

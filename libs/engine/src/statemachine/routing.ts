/**
 * Routing forward: propagation over the DAG (readiness.ts says when a node runs, branches.ts
 * where a finished one routes), the activation of every node kind, and the entry points `begin`
 * and `routeOutcome`. Node kinds that wait or fan out (`node-kinds/`) report an outcome; this file
 * alone turns an outcome into the next step. Internal to the state machine.
 */
import { joinReducers, reduceJoin } from '../model/reducers.js';
import type { SwitchDecision } from '../model/switch-decision.js';
import type { WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, TaskStatus, isTaskCompleted, type JsonValue } from '../model/workflow-types.js';
import type { TaskFlow } from './actions.js';
import { decide, hasErrorEdge, switchDecision } from './branches.js';
import { MachineError, assertNever } from './errors.js';
import { activateForEach } from './node-kinds/for-each.js';
import type { ActivationOutcome, NodeOutcome } from './node-kinds/outcome.js';
import { activateSubworkflow } from './node-kinds/subworkflow.js';
import { activateWaitForEvent } from './node-kinds/wait-for-event.js';
import { activateWait } from './node-kinds/wait.js';
import { resolveTaskFlow } from './flow-keys.js';
import { edgeState, readiness } from './readiness.js';
import { type Step, errorMessage, isStoreError, valueProblem } from './step.js';

/**
 * What a node just reached by {@link activate} adds to the walk: a completed one records its
 * decision (its successors are already returned by activate); one that failed at once (input
 * unresolvable, a wait that cannot park, a JOIN merge error) with an error edge records its
 * decision and hands routing to its successors.
 */
async function decideReached(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  const state = s.run.nodes.get(n.node_id);
  if (!state) return [];
  if (isTaskCompleted(state.status)) await decide(s, n.node_id);
  if (state.status !== TaskStatus.Failed || !hasErrorEdge(s, n.node_id)) return [];
  await decide(s, n.node_id);
  return s.dag.successors(n.node_id);
}

/**
 * Walks forward, breadth first, from `candidates`, running or skipping each unreached node whose
 * incoming edges are all resolved. Skips cascade; control nodes and satisfied waits resolve inline
 * and keep walking; worker nodes and real waits stop the walk. Nodes still waiting on a
 * predecessor are left for a later event. `from` is the node whose settling led to the
 * candidates, a hint for where readiness starts looking.
 * @throws Error for a condition that cannot be evaluated; StoreError (transient).
 */
export async function propagate(s: Step, candidates: readonly WorkflowNode[], from?: string): Promise<void> {
  const queue = [...candidates];
  // The node whose settling put each candidate in the queue (a hint for readiness).
  const via: Array<string | undefined> = queue.map(() => from);
  const enqueue = (nodes: readonly WorkflowNode[], source: string): void => {
    for (const next of nodes) {
      queue.push(next);
      via.push(source);
    }
  };
  for (let head = 0; head < queue.length; head++) {
    const n = queue[head];
    if (s.run.nodes.has(n.node_id)) continue;
    const r = await readiness(s, n, via[head]);
    switch (r) {
      case 'waiting':
        continue;
      case 'skip':
        s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Skipped });
        enqueue(s.dag.successors(n.node_id), n.node_id);
        break;
      case 'run':
        enqueue(await activate(s, n), n.node_id);
        enqueue(await decideReached(s, n), n.node_id);
        break;
      default:
        assertNever(r);
    }
  }
}

/**
 * Starts ready node `n` and returns the nodes to consider next: SWITCH, FORK and JOIN complete
 * inline and pass routing to their successors; HTTP and CODE nodes are dispatched (a `for_each`
 * one fans out) and return none; WAIT, WAIT_FOR_EVENT, SUBWORKFLOW and `for_each` nodes
 * activate through their node kind, whose outcome decides: see {@link afterActivation}.
 * @throws Error for a SWITCH condition that cannot be evaluated; StoreError (transient).
 */
export async function activate(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  switch (n.type) {
    case NodeType.Switch:
      return activateSwitch(s, n);
    case NodeType.Join:
      if (joinReducers(n.spec) !== undefined) return activateJoin(s, n);
      return completeInline(s, n);
    case NodeType.Fork:
      return completeInline(s, n);
    case NodeType.Wait:
      return afterActivation(s, n, await activateWait(s, n));
    case NodeType.WaitForEvent:
      return afterActivation(s, n, await activateWaitForEvent(s, n));
    case NodeType.Subworkflow:
      return afterActivation(s, n, await activateSubworkflow(s, n));
    case NodeType.DoWhile:
      // The loop's task runs (never dispatched) while its body does; loops.ts ends each iteration.
      s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Running, loopIteration: 0 });
      return startBody(s, n.node_id);
    case NodeType.Http:
    case NodeType.Code:
      if (n.for_each !== undefined) return afterActivation(s, n, await activateForEach(s, n));
      await schedule(s, n);
      return [];
    default:
      return assertNever(n.type);
  }
}

/**
 * Starts an iteration of DO_WHILE node `loopId`: activates each of its body's sources (they have
 * no incoming edge, so readiness would skip them) and returns the nodes to consider next.
 * @throws Error for a condition that cannot be evaluated; StoreError (transient).
 */
export async function startBody(s: Step, loopId: string): Promise<WorkflowNode[]> {
  const next: WorkflowNode[] = [];
  for (const src of s.dag.bodySources(loopId)) next.push(...(await activate(s, src)), ...(await decideReached(s, src)));
  return next;
}

/**
 * The nodes to consider after the node kind's activation of `n` gave `outcome`: for
 * `completed`, its successors (its output is cached for their templates, and
 * {@link decideReached} records its decision); none for `failed` ({@link decideReached} follows
 * its error edges) or `pending`.
 */
function afterActivation(s: Step, n: WorkflowNode, outcome: ActivationOutcome): WorkflowNode[] {
  switch (outcome.kind) {
    case 'completed':
      s.setOutput(n.node_id, outcome.output);
      return s.dag.successors(n.node_id);
    case 'failed':
    case 'pending':
      return [];
    default:
      return assertNever(outcome);
  }
}

/** A FORK, or a JOIN without reducers: completes at once with `{}` and passes routing on. */
function completeInline(s: Step, n: WorkflowNode): WorkflowNode[] {
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Completed, output: {} });
  // Cached: its row may be written only with the event's last statement (a loop's output reads it).
  s.setOutput(n.node_id, {});
  return s.dag.successors(n.node_id);
}

/**
 * A JOIN with `spec.reducers` completes with the merge of the outputs of the predecessors whose
 * edge into it is active, in incoming-edge order, each predecessor once (model/reducers.ts). A type
 * mismatch, or a merge the database would refuse, records the JOIN FAILED with the reason instead.
 * Returns the JOIN's successors when it completed, none when it failed.
 * @throws StoreError (transient) while loading outputs.
 */
async function activateJoin(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  const from: string[] = [];
  for (const edge of s.dag.incomingEdges(n.node_id)) {
    if (!from.includes(edge.from) && (await edgeState(s, edge)).active) from.push(edge.from);
  }
  await s.ensureLoaded(from);
  const merged = reduceJoin(
    joinReducers(n.spec) ?? {},
    from.map((id) => ({ nodeId: id, output: s.run.context.tasks.get(id)?.output ?? null })),
  );
  const problem = merged.ok ? valueProblem('JOIN output', merged.output, s.maxValueBytes) : merged.error;
  if (!merged.ok || problem !== undefined) {
    s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, error: `join ${n.node_id}: ${problem}` });
    return [];
  }
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Completed, output: merged.output });
  s.setOutput(n.node_id, merged.output);
  return s.dag.successors(n.node_id);
}

/**
 * A SWITCH passes its predecessor's output through and records which branches it selected, with
 * the decision behind them (each condition's value; whether its default was taken).
 */
async function activateSwitch(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  await s.ensureOutputs(n);
  const output = s.dag.predecessorOutput(n.node_id, s.run.context.tasks) ?? {};
  let decision: SwitchDecision;
  try {
    decision = switchDecision(s, n);
  } catch (err) {
    throw new Error(`switch ${n.node_id}: ${errorMessage(err)}`);
  }
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Completed, output, branches: decision.branches, decision });
  s.setOutput(n.node_id, output);
  return s.dag.successors(n.node_id);
}

/**
 * Creates a worker node's task and dispatches attempt 0 now, with its input and its flow keys
 * (`concurrency`, `rate_limit`) resolved once here (a retry reuses them). A node whose input or
 * a key cannot be resolved is recorded FAILED instead.
 * @throws StoreError (transient).
 */
export async function schedule(s: Step, n: WorkflowNode): Promise<void> {
  let input: JsonValue;
  let flow: TaskFlow | undefined;
  try {
    input = await s.resolveInput(n);
    flow = resolveTaskFlow(s, n);
  } catch (err) {
    if (isStoreError(err)) throw err;
    s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, error: errorMessage(err) });
    return;
  }
  const taskId = s.newId();
  s.emit({ type: 'CreateTask', taskId, node: n, status: TaskStatus.Pending, input });
  s.emit({ type: 'DispatchTask', taskId, node: n, attempt: 0, input, notBefore: s.now, ...(flow ? { flow } : {}) });
}

/**
 * Activates `node` unconditionally — the start node, or a retry's restart node — and everything
 * that becomes ready as a result.
 * @throws MachineError INVALID_REQUEST for a routing error (nothing is persisted); StoreError.
 */
export async function begin(s: Step, node: WorkflowNode): Promise<void> {
  try {
    const next = await activate(s, node);
    await propagate(s, [...next, ...(await decideReached(s, node))], node.node_id);
  } catch (err) {
    if (isStoreError(err)) throw err;
    throw new MachineError('INVALID_REQUEST', errorMessage(err));
  }
}

/**
 * Turns what became of node `nodeId` after an event (a worker report, a timer, a signal) into
 * the next step (none for the definition's `finally` step):
 * - `completed`: unless the run has finished, routes past the node with its output
 *   ({@link advanceFrom});
 * - `failed`: routes past the failure ({@link routeFailure});
 * - `pending`: nothing yet;
 * - `ignored`: marks the transition ignored with the reason, and asks for the timer again at
 *   `rearmAt` when given.
 * Routing errors are permanent (a broken condition, a node missing from the definition), so they
 * fail the run with a reason instead of being returned for endless redelivery.
 * @throws StoreError (transient) only.
 */
export async function routeOutcome(s: Step, nodeId: string, outcome: NodeOutcome): Promise<void> {
  // The finally step routes nowhere: the machine ends the run once it settled (finally.ts).
  if (s.dag.isFinally(nodeId) && outcome.kind !== 'ignored') return;
  switch (outcome.kind) {
    case 'completed':
      if (s.terminal()) return;
      return advanceFrom(s, nodeId, outcome.output);
    case 'failed':
      return routeFailure(s, nodeId);
    case 'pending':
      return;
    case 'ignored':
      s.ignore(outcome.reason);
      if (outcome.rearmAt !== undefined) s.tr.rearmAt = outcome.rearmAt;
      return;
    default:
      return assertNever(outcome);
  }
}

/**
 * Routes past a node that completed with `output`: caches the output, records the node's
 * decision and walks on to its successors. A node missing from the definition, or a routing
 * error, fails the run with a reason.
 * @throws StoreError (transient) only.
 */
async function advanceFrom(s: Step, nodeId: string, output: JsonValue): Promise<void> {
  s.setOutput(nodeId, output);
  if (!s.dag.getNode(nodeId)) {
    s.failRun(`node ${nodeId} not found in workflow definition`);
    return;
  }
  await walkOn(s, nodeId);
}

/**
 * Routes past a node that just failed for good: with an `on_error` edge, records which error
 * edges it takes and continues to its successors (error targets run, normal targets are skipped
 * unless reachable otherwise); without one, nothing below it is resolved and the run fails once
 * nothing is active. A routing error fails the run with a reason.
 * @throws StoreError (transient) only.
 */
async function routeFailure(s: Step, nodeId: string): Promise<void> {
  if (s.terminal() || !hasErrorEdge(s, nodeId)) return;
  await walkOn(s, nodeId);
}

/** Records `nodeId`'s decision and propagates to its successors; a routing error fails the run. */
async function walkOn(s: Step, nodeId: string): Promise<void> {
  try {
    await decide(s, nodeId);
    await propagate(s, s.dag.successors(nodeId), nodeId);
  } catch (err) {
    if (isStoreError(err)) throw err;
    s.failRun(`routing after node ${nodeId} failed: ${errorMessage(err)}`);
  }
}

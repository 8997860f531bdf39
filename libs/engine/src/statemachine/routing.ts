/**
 * Routing forward: the one readiness rule, propagation, the activation of every node kind,
 * SWITCH decisions, conditional and error edges on any node, and the entry points `begin` and
 * `routeOutcome`. Node kinds that wait or fan out (`node-kinds/`) report an outcome; this file
 * alone turns an outcome into the next step. Internal to the state machine.
 */
import { templateTaskRefs } from '../model/dag.js';
import { joinReducers, reduceJoin } from '../model/reducers.js';
import type { WorkflowEdge, WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, TaskStatus, isTaskCompleted, type JsonValue } from '../model/workflow-types.js';
import { MachineError, assertNever } from './errors.js';
import { activateForEach } from './node-kinds/for-each.js';
import type { ActivationOutcome, NodeOutcome } from './node-kinds/outcome.js';
import { activateSubworkflow } from './node-kinds/subworkflow.js';
import { activateWaitForEvent } from './node-kinds/wait-for-event.js';
import { activateWait } from './node-kinds/wait.js';
import { runIndex, type ReadinessProgress } from './run-index.js';
import { isNodeActive, type NodeState } from './state.js';
import { Step, errorMessage, isStoreError, valueProblem } from './step.js';

/** Readiness of a node: some incoming edge unresolved / all resolved and one active / none active. */
type Readiness = 'waiting' | 'run' | 'skip';

/**
 * The one readiness rule: a node is ready once every incoming edge is resolved; it runs if at
 * least one is active and is skipped otherwise.
 *
 * Incremental, without changing the rule, so that one event costs the same in a run of 10,000
 * nodes as in one of 10: the edges are walked up to the first
 * unresolved one, and the stretch of edges found resolved for good (the source settled and its
 * decision, if it takes one, recorded) is remembered per node in the run's index, so the next
 * event resumes where this one stopped. A JOIN of N branches costs O(N) over the whole run, not
 * per event, whatever order its branches settle in. The walk runs in incoming-edge order from the
 * first edge, or — when no source of the node decides its routing, so that no edge ever needs an
 * evaluation and the order changes nothing observable — cyclically from `via`, the source whose
 * settling led here (in a snapshot without a memo, the next edge is then often the witness that
 * the node must wait). The memo is forgotten when a settled source changes (ReopenRun, a node
 * recorded anew) or the event is rolled back, and is kept per DAG.
 */
async function readiness(s: Step, n: WorkflowNode, via?: string): Promise<Readiness> {
  const edges = s.dag.incomingEdges(n.node_id);
  const total = edges.length;
  const memo = readinessMemo(s);
  let known = memo.get(n.node_id);
  if (!known) {
    const at = via !== undefined && s.dag.hasPlainSources(n.node_id) ? s.dag.incomingPosition(via, n.node_id) : undefined;
    known = { start: at ?? 0, count: 0, anyActive: false };
  }
  let count = known.count;
  let prefixActive = known.anyActive;
  let anyActive = prefixActive;
  let final = true; // every edge walked so far is resolved for good
  let k = count;
  for (; k < total; k++) {
    const edge = edges[(known.start + k) % total];
    const recorded = recordedEdgeState(s, edge);
    const { active, resolved } = recorded ?? (await evaluatedEdgeState(s, edge));
    if (!resolved) {
      noteActive(s, edge.from);
      break;
    }
    anyActive ||= active;
    if (final && recorded !== undefined) {
      count = k + 1;
      prefixActive ||= active;
    } else final = false;
  }
  if (count > known.count) memo.set(n.node_id, { start: known.start, count, anyActive: prefixActive });
  if (k < total) return 'waiting';
  return anyActive ? 'run' : 'skip';
}

/** Remembers `nodeId` as proof that the run cannot finish yet, if it is active (see `hasActiveNode`). */
function noteActive(s: Step, nodeId: string): void {
  const n = s.run.nodes.get(nodeId);
  if (n && isNodeActive(n)) runIndex(s.run).activeWitness = nodeId;
}

/** The readiness progress of the run's unreached nodes, for this DAG (see {@link readiness}). */
function readinessMemo(s: Step): Map<string, ReadinessProgress> {
  const ix = runIndex(s.run);
  if (ix.readiness?.dag !== s.dag) ix.readiness = { dag: s.dag, byNode: new Map() };
  return ix.readiness.byNode;
}

interface EdgeState {
  active: boolean;
  resolved: boolean;
}

const UNRESOLVED: EdgeState = Object.freeze({ active: false, resolved: false });
const INACTIVE: EdgeState = Object.freeze({ active: false, resolved: true });
const ACTIVE: EdgeState = Object.freeze({ active: true, resolved: true });

/**
 * An edge is active when its source completed and the edge is a normal one its source selected
 * (a SWITCH's or conditional edges' recorded decision; an unconditional edge of a node without
 * conditional or error edges always), or when its source failed for good and it is an `on_error`
 * edge that source selected. It is inactive when its source was skipped, completed and did not
 * select it (an `on_error` edge of a completed source never is), or failed for good and has
 * `on_error` edges but did not select this one (its normal edges never are). It is unresolved
 * while its source is unreached, pending, running, waiting or cancelled, or failed for good
 * without any `on_error` edge — so nothing below an unhandled failure runs.
 */
async function edgeState(s: Step, edge: WorkflowEdge): Promise<EdgeState> {
  return recordedEdgeState(s, edge) ?? evaluatedEdgeState(s, edge);
}

/**
 * {@link edgeState} when the source's state decides it alone, synchronously; `undefined` when it
 * needs the source's decision and none was recorded (see {@link branchesOf}'s fallback). A
 * resolved result stays true as long as the source's status and decision do.
 */
function recordedEdgeState(s: Step, edge: WorkflowEdge): EdgeState | undefined {
  const from = s.run.nodes.get(edge.from);
  if (!from) return UNRESOLVED;
  if (from.status === TaskStatus.Skipped) return INACTIVE;
  if (from.status === TaskStatus.Failed && hasErrorEdge(s, edge.from)) {
    if (edge.on_error !== true) return INACTIVE;
    return from.branches === undefined ? undefined : from.branches.includes(edge.to) ? ACTIVE : INACTIVE;
  }
  if (!isTaskCompleted(from.status)) return UNRESOLVED;
  if (edge.on_error === true) return INACTIVE;
  const node = s.dag.getNode(edge.from);
  if (!node || (node.type !== NodeType.Switch && !isRouted(s, edge.from))) return ACTIVE;
  return from.branches === undefined ? undefined : from.branches.includes(edge.to) ? ACTIVE : INACTIVE;
}

/** {@link edgeState} of an edge whose source's decision was never recorded: evaluated now. */
async function evaluatedEdgeState(s: Step, edge: WorkflowEdge): Promise<EdgeState> {
  const from = s.run.nodes.get(edge.from) as NodeState;
  return (await branchesOf(s, edge.from, from)).includes(edge.to) ? ACTIVE : INACTIVE;
}

/** The node has an outgoing `on_error` edge (its failures are routed, not run failures). */
export function hasErrorEdge(s: Step, nodeId: string): boolean {
  return s.dag.hasErrorEdge(nodeId);
}

/** A non-SWITCH node whose routing is decided and recorded: it has a conditional or error edge. */
function isRouted(s: Step, nodeId: string): boolean {
  return s.dag.hasRoutedEdge(nodeId);
}

/**
 * A failed node whose failure an `on_error` edge handled: it selected at least one error edge, so
 * the failure does not fail the run.
 */
export function isHandledFailure(s: Step, nodeId: string, state: NodeState): boolean {
  return state.status === TaskStatus.Failed && hasErrorEdge(s, nodeId) && (state.branches?.length ?? 0) > 0;
}

/**
 * Decides and records (RecordBranches) where a finished non-SWITCH node routes, once, in the event
 * that finished it: after completing, when it has a conditional or error edge; after failing for
 * good, when it has an error edge. A SWITCH records its own decision when it activates.
 * @throws Error naming the edge when a condition cannot be evaluated; StoreError.
 */
export async function decide(s: Step, nodeId: string): Promise<void> {
  const node = s.dag.getNode(nodeId);
  const state = s.run.nodes.get(nodeId);
  if (!node || !state || node.type === NodeType.Switch || state.branches !== undefined) return;
  const failed = state.status === TaskStatus.Failed;
  if (failed ? !hasErrorEdge(s, nodeId) : !isTaskCompleted(state.status) || !isRouted(s, nodeId)) return;
  await loadConditionRefs(s, nodeId);
  const branches = selectBranches(s, node, failed);
  s.emit({ type: 'RecordBranches', taskId: state.taskId, nodeId, branches });
}

/** Loads the outputs the conditions of `nodeId`'s outgoing edges read, and the node's own. */
async function loadConditionRefs(s: Step, nodeId: string): Promise<void> {
  const refs = templateTaskRefs(s.dag.outgoingEdges(nodeId).map((e) => e.condition ?? ''));
  await s.ensureLoaded(refs === undefined ? undefined : [...refs, nodeId]);
}

/**
 * What a node just reached by {@link activate} adds to the walk: a completed one records its
 * decision (its successors are already returned by activate); one that failed at once (input
 * unresolvable, a wait that cannot park, a JOIN merge error) with an error edge records its
 * decision and hands routing to its successors.
 */
async function settle(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
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
 * predecessor are left for a later event.
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
    switch (await readiness(s, n, via[head])) {
      case 'waiting':
        continue;
      case 'skip':
        s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Skipped });
        enqueue(s.dag.successors(n.node_id), n.node_id);
        break;
      case 'run':
        enqueue(await activate(s, n), n.node_id);
        enqueue(await settle(s, n), n.node_id);
        break;
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
 * The nodes to consider after node kind activation of `n` gave `outcome`: for `completed`, its
 * successors (its output is cached for their templates; {@link settle} records its decision);
 * none for `failed` ({@link settle} follows its error edges) or `pending`.
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
  const merged = reduceJoin(joinReducers(n.spec) ?? {}, from.map((id) => ({ nodeId: id, output: s.run.context.tasks.get(id)?.output ?? null })));
  const problem = merged.ok ? valueProblem('JOIN output', merged.output, s.maxValueBytes) : merged.error;
  if (!merged.ok || problem !== undefined) {
    s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, error: `join ${n.node_id}: ${problem}` });
    return [];
  }
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Completed, output: merged.output });
  s.setOutput(n.node_id, merged.output);
  return s.dag.successors(n.node_id);
}

/** A SWITCH passes its predecessor's output through and records which branches it selected. */
async function activateSwitch(s: Step, n: WorkflowNode): Promise<WorkflowNode[]> {
  await s.ensureOutputs(n);
  const output = s.dag.predecessorOutput(n.node_id, s.run.context.tasks) ?? {};
  let branches: string[];
  try {
    branches = selectBranches(s, n);
  } catch (err) {
    throw new Error(`switch ${n.node_id}: ${errorMessage(err)}`);
  }
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Completed, output, branches });
  s.setOutput(n.node_id, output);
  return s.dag.successors(n.node_id);
}

/**
 * Evaluates the conditions of a node's normal edges (or, with `failed`, of its `on_error` edges);
 * edges without a condition are always selected. The result is never undefined, so an empty
 * decision is still recorded. Outputs must already be loaded.
 * @throws Error naming the edge when a condition cannot be evaluated.
 */
function selectBranches(s: Step, n: WorkflowNode, failed = false): string[] {
  const branches: string[] = [];
  for (const edge of s.dag.outgoingEdges(n.node_id)) {
    if ((edge.on_error === true) !== failed) continue;
    if (edge.condition) {
      let ok: boolean;
      try {
        ok = evalCondition(s, edge.condition);
      } catch (err) {
        throw new Error(`condition eval for edge ${edge.from}→${edge.to}: ${errorMessage(err)}`);
      }
      if (!ok) continue;
    }
    branches.push(edge.to);
  }
  return branches;
}

/**
 * The successors a finished SWITCH (or routed node) selected: its recorded decision, never
 * re-evaluated. Only a task without a recorded decision falls back to evaluating the conditions
 * now (a broken condition then selects nothing).
 * @throws StoreError if loading outputs for the fallback fails: a transient failure must not
 * pass for a decision that selects nothing.
 */
async function branchesOf(s: Step, nodeId: string, state: NodeState): Promise<string[]> {
  if (state.branches !== undefined) return state.branches;
  const node = s.dag.getNode(nodeId);
  if (!node) return [];
  if (node.type === NodeType.Switch) await s.ensureOutputs(node);
  else await loadConditionRefs(s, nodeId);
  try {
    return selectBranches(s, node, state.status === TaskStatus.Failed);
  } catch {
    return [];
  }
}

/**
 * Evaluates a condition template and coerces it forgivingly: booleans
 * as is, strings true when non-empty, numbers when non-zero, null false, anything else true.
 * @throws Error when the template cannot be resolved.
 */
function evalCondition(s: Step, condition: string): boolean {
  let val: JsonValue;
  try {
    val = s.deps.templates.resolve(condition, s.templateContext(), s.now);
  } catch (err) {
    throw new Error(`failed to evaluate condition: ${errorMessage(err)}`);
  }
  switch (typeof val) {
    case 'boolean':
      return val;
    case 'string':
      return val !== '';
    case 'number':
      return val !== 0;
    default:
      return val !== null;
  }
}

/**
 * Creates a worker node's task and dispatches attempt 0 now, with its input resolved once here
 * (a retry reuses it). A node whose input cannot be resolved is recorded FAILED instead.
 * @throws StoreError (transient).
 */
async function schedule(s: Step, n: WorkflowNode): Promise<void> {
  let input: JsonValue;
  try {
    input = await s.resolveInput(n);
  } catch (err) {
    if (isStoreError(err)) throw err;
    s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, error: errorMessage(err) });
    return;
  }
  const taskId = s.newId();
  s.emit({ type: 'CreateTask', taskId, node: n, status: TaskStatus.Pending, input });
  s.emit({ type: 'DispatchTask', taskId, node: n, attempt: 0, input, notBefore: s.now });
}

/**
 * Activates `node` unconditionally — the start node, or a retry's restart node — and everything
 * that becomes ready as a result.
 * @throws MachineError INVALID_REQUEST for a routing error (nothing is persisted); StoreError.
 */
export async function begin(s: Step, node: WorkflowNode): Promise<void> {
  try {
    const next = await activate(s, node);
    await propagate(s, [...next, ...(await settle(s, node))], node.node_id);
  } catch (err) {
    if (isStoreError(err)) throw err;
    throw new MachineError('INVALID_REQUEST', errorMessage(err));
  }
}

/**
 * Turns what became of node `nodeId` after an event (a worker report, a timer, a signal) into
 * the next step:
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

/**
 * Where a finished node routes: the decision a SWITCH, or a node with conditional or `on_error`
 * edges, takes once and records (RecordBranches), and the evaluation of edge conditions.
 * Internal to the state machine.
 */
import { templateTaskRefs } from '../model/dag.js';
import { switchDefault, type EdgeVerdict, type SwitchDecision } from '../model/switch-decision.js';
import type { WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, TaskStatus, isTaskCompleted, type JsonValue } from '../model/workflow-types.js';
import type { NodeState } from './state.js';
import { errorMessage, type Step } from './step.js';

/** The node has an outgoing `on_error` edge (its failures are routed, not run failures). */
export function hasErrorEdge(s: Step, nodeId: string): boolean {
  return s.dag.hasErrorEdge(nodeId);
}

/** A non-SWITCH node whose routing is decided and recorded: it has a conditional or error edge. */
export function isRouted(s: Step, nodeId: string): boolean {
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
 * Evaluates the conditions of a node's normal edges (or, with `failed`, of its `on_error` edges);
 * edges without a condition are always selected, but a SWITCH's `spec.default` successor only
 * when no other edge was ({@link switchDecision}). The result is never undefined, so an empty
 * decision is still recorded. Outputs must already be loaded.
 * @throws Error naming the edge when a condition cannot be evaluated.
 */
export function selectBranches(s: Step, n: WorkflowNode, failed = false): string[] {
  return n.type === NodeType.Switch && !failed ? switchDecision(s, n).branches : verdicts(s, n, failed, undefined).flatMap((v) => (v.value ? [v.to] : []));
}

/**
 * What SWITCH `n` decides now: each normal outgoing edge but the default's evaluated in edge
 * order, and the default successor selected when none of them holds. Outputs must already be
 * loaded.
 * @throws Error naming the edge when a condition cannot be evaluated.
 */
export function switchDecision(s: Step, n: WorkflowNode): SwitchDecision {
  const dflt = switchDefault(n) ?? null;
  const conditions = verdicts(s, n, false, dflt ?? undefined);
  const branches = conditions.flatMap((v) => (v.value ? [v.to] : []));
  const defaultTaken = dflt !== null && branches.length === 0;
  if (defaultTaken) branches.push(dflt);
  return { branches, default: dflt, defaultTaken, conditions };
}

/** Each normal (or, with `failed`, error) outgoing edge of `n` but the one to `skip`, with its condition's value. */
function verdicts(s: Step, n: WorkflowNode, failed: boolean, skip: string | undefined): EdgeVerdict[] {
  const out: EdgeVerdict[] = [];
  for (const edge of s.dag.outgoingEdges(n.node_id)) {
    if ((edge.on_error === true) !== failed || edge.to === skip) continue;
    let value = true;
    if (edge.condition) {
      try {
        value = evalCondition(s, edge.condition);
      } catch (err) {
        throw new Error(`condition eval for edge ${edge.from}→${edge.to}: ${errorMessage(err)}`);
      }
    }
    out.push({ to: edge.to, condition: edge.condition ?? null, value });
  }
  return out;
}

/**
 * The successors a finished SWITCH (or routed node) selected: its recorded decision, never
 * re-evaluated. Only a task without a recorded decision falls back to evaluating the conditions
 * now (a broken condition then selects nothing).
 * @throws StoreError if loading outputs for the fallback fails: a transient failure must not
 * pass for a decision that selects nothing.
 */
export async function branchesOf(s: Step, nodeId: string, state: NodeState): Promise<string[]> {
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
export function evalCondition(s: Step, condition: string): boolean {
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

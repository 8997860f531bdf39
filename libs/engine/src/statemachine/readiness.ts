/**
 * When an unreached node starts: the state of each incoming edge (active, inactive or
 * unresolved) and the one readiness rule over them, kept incrementally per run. Internal to the
 * state machine.
 */
import type { WorkflowEdge, WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, TaskStatus, isTaskCompleted } from '../model/workflow-types.js';
import { branchesOf, hasErrorEdge, isRouted } from './branches.js';
import { runIndex, type ReadinessProgress } from './run-index.js';
import { isNodeActive, type NodeState } from './state.js';
import type { Step } from './step.js';

/** Readiness of a node: some incoming edge unresolved / all resolved and one active / none active. */
export type Readiness = 'waiting' | 'run' | 'skip';

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
export async function readiness(s: Step, n: WorkflowNode, via?: string): Promise<Readiness> {
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

/** Whether an edge is resolved yet and, if so, whether it is active. */
export interface EdgeState {
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
export async function edgeState(s: Step, edge: WorkflowEdge): Promise<EdgeState> {
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

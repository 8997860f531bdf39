import { loopBody } from './loop-body.js';
import { childWorkflow, edgeState, FINALLY_LINK, finallyLinks, type MermaidGraph, type MermaidTask } from './mermaid.js';

/** One node of {@link DagShape}: what a drawing needs to place and colour it. */
export interface DagNode {
  id: string;
  type: string;
  /** The status of the node's own task (a for_each node's aggregate); null while unreached. */
  status: string | null;
  forEach: boolean;
  /** For a reached for_each node: its iterations per status, in the order statuses first appear; null otherwise. */
  iterations: { status: string; count: number }[] | null;
  /** A SUBWORKFLOW node's child workflow when its spec names it literally (`payments@2`); null otherwise. */
  childWorkflow: string | null;
  /** For a node of a DO_WHILE body: that DO_WHILE node's id; null for a top-level node. */
  loop: string | null;
  /** For a DO_WHILE node: its `max_iterations` (when an integer); null otherwise. */
  maxIterations: number | null;
  /**
   * In a run: for a reached body node, the 0-based loop iteration its status comes from (its
   * latest); for a reached DO_WHILE node, the iteration running or last run; null otherwise.
   */
  loopIteration: number | null;
}

/** One edge of {@link DagShape}, with whether the run went along it (see edgeState). */
export interface DagEdge {
  from: string;
  to: string;
  /** The edge's condition, or `on error` for an on_error edge; null for a plain edge. */
  label: string | null;
  onError: boolean;
  state: 'TAKEN' | 'SKIPPED' | 'OPEN';
}

/** A definition's DAG as data, for drawings that lay it out themselves (the console). */
export interface DagShape {
  nodes: DagNode[];
  edges: DagEdge[];
}

/** The loop fields of a node outside any DO_WHILE body that is not a DO_WHILE itself. */
const TOP_LEVEL = { loop: null, maxIterations: null, loopIteration: null } as const;

/**
 * The DAG of `graph` in definition order, the same facts {@link toMermaid} draws: with `tasks`
 * (see mermaidTasks) each reached node carries its status and a reached for_each node its
 * iteration counts (none yet: an empty list), and each edge its state; without them (a version,
 * not a run) every node is unreached and every edge OPEN. A DO_WHILE node is followed by its body
 * nodes (`loop` naming it; status and `loopIteration` from each one's latest iteration), and its
 * body edges come after the outer edges. The `finally` step comes last, with a link labelled
 * `finally` from each sink node (TAKEN once the step was reached).
 */
export function toDag(graph: MermaidGraph, tasks?: ReadonlyMap<string, MermaidTask>): DagShape {
  const nodes: DagNode[] = [];
  const bodyEdges: MermaidGraph['edges'] = [];
  const nodeOf = (n: MermaidGraph['nodes'][number], loop: string | null, maxIterations: number | null): DagNode => {
    const task = tasks?.get(n.node_id);
    const forEach = n.for_each != null;
    const counts = task?.iterations ?? (forEach && task ? {} : undefined);
    return {
      id: n.node_id,
      type: n.type ?? 'UNKNOWN',
      status: task?.status || null,
      forEach,
      iterations: counts ? Object.entries(counts).map(([status, count]) => ({ status, count })) : null,
      childWorkflow: n.type === 'SUBWORKFLOW' ? (childWorkflow(n.spec) ?? null) : null,
      loop,
      maxIterations,
      loopIteration: task?.status ? (task.loopIteration ?? null) : null,
    };
  };
  for (const n of graph.nodes ?? []) {
    const body = loopBody(n);
    nodes.push(nodeOf(n, null, body?.maxIterations ?? null));
    if (!body) continue;
    for (const b of body.nodes) nodes.push(nodeOf(b, n.node_id, null));
    bodyEdges.push(...body.edges);
  }
  const edges = [...(graph.edges ?? []), ...bodyEdges].map((e): DagEdge => ({
    from: e.from,
    to: e.to,
    label: e.on_error ? 'on error' : (e.condition ?? null),
    onError: e.on_error === true,
    state: tasks ? (edgeState(e, tasks).toUpperCase() as DagEdge['state']) : 'OPEN',
  }));
  // The finally step: a node after the others, reached by a link labelled `finally` from each sink.
  const step = graph.finally;
  if (step && typeof step.node_id === 'string') {
    const status = tasks?.get(step.node_id)?.status || null;
    nodes.push({ id: step.node_id, type: step.type ?? 'UNKNOWN', status, forEach: false, iterations: null, childWorkflow: null, ...TOP_LEVEL });
    for (const l of finallyLinks(graph)) edges.push({ ...l, label: FINALLY_LINK, onError: false, state: status ? 'TAKEN' : 'OPEN' });
  }
  return { nodes, edges };
}

/** A DAG as the API draws it (`Run.graph`, `WorkflowVersion.graph`). */
export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface GraphNode {
  id: string;
  /** HTTP, CODE, SWITCH, FORK, JOIN, WAIT, WAIT_FOR_EVENT, SUBWORKFLOW. */
  type: string;
  /** The status of the node's own task (a for_each node's aggregate); null while unreached and on a version's graph. */
  status: string | null;
  forEach: boolean;
  /** For a reached for_each node: how many iterations are in each status. */
  iterations: { status: string; count: number }[] | null;
  /** For a SUBWORKFLOW node whose spec names its workflow literally: `payments` or `payments@2`. */
  childWorkflow: string | null;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** The condition, or `on error`. */
  label: string | null;
  onError: boolean;
  /** TAKEN: the run went along it; SKIPPED: the source settled and it did not; OPEN: undecided. */
  state: 'TAKEN' | 'SKIPPED' | 'OPEN';
}

/** The selection set of a Graph, for queries and subscriptions. */
export const GRAPH_FIELDS = `nodes { id type status forEach iterations { status count } childWorkflow } edges { from to label onError state }`;

/**
 * What the pictures (mermaid.ts, graph.ts) read of a DO_WHILE node's spec: the body's nodes and
 * edges and the iteration bound. Lenient: a definition that was stored is valid, so anything
 * malformed here is drawn as an empty body rather than refused.
 */

/** The node type whose spec holds a body DAG run again while its condition holds. */
export const DO_WHILE = 'DO_WHILE';

/** A body node as the pictures need it (the same shape as a top-level node). */
export interface LoopBodyNode {
  node_id: string;
  type?: string;
  for_each?: unknown;
  spec?: unknown;
}

/** A body edge (between two body nodes). */
export interface LoopBodyEdge {
  from: string;
  to: string;
  condition?: string;
  on_error?: boolean;
}

/** A DO_WHILE node's body and bound, from its spec. */
export interface LoopBody {
  nodes: LoopBodyNode[];
  edges: LoopBodyEdge[];
  /** `max_iterations` when it is an integer; null otherwise. */
  maxIterations: number | null;
}

/**
 * The body of `node` when it is a DO_WHILE node (`spec.body.nodes`, `spec.body.edges`,
 * `spec.max_iterations`), keeping only nodes with a string `node_id` and edges with string ends;
 * undefined for any other node.
 */
export function loopBody(node: { type?: string; spec?: unknown }): LoopBody | undefined {
  if (node.type !== DO_WHILE) return undefined;
  const spec = objectOr(node.spec);
  const body = objectOr(spec.body);
  const nodes = (Array.isArray(body.nodes) ? body.nodes : []).filter(
    (n): n is LoopBodyNode => !!n && typeof n === 'object' && typeof (n as { node_id?: unknown }).node_id === 'string',
  );
  const edges = (Array.isArray(body.edges) ? body.edges : []).filter((e): e is LoopBodyEdge => {
    const { from, to } = (e ?? {}) as { from?: unknown; to?: unknown };
    return typeof from === 'string' && typeof to === 'string';
  });
  const max = spec.max_iterations;
  return { nodes, edges, maxIterations: Number.isInteger(max) ? (max as number) : null };
}

function objectOr(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

import { isLoop, loopSpec, type WorkflowEdge, type WorkflowNode } from '@weft/engine';

/**
 * What the pictures (mermaid.ts, graph.ts) read of a DO_WHILE node's spec: the body's nodes and
 * edges and the iteration bound, as the engine reads them (loopSpec). Lenient: a definition that
 * was stored is valid, so anything malformed here is drawn as an empty body rather than refused.
 */

/** A DO_WHILE node's body and bound, from its spec. */
export interface LoopBody {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  /** `max_iterations`; null when missing or not a number. */
  maxIterations: number | null;
}

/** The body of `node` when it is a DO_WHILE node; undefined for any other node. */
export function loopBody(node: { type?: string; spec?: unknown }): LoopBody | undefined {
  if (!isLoop(node as Pick<WorkflowNode, 'type'>)) return undefined;
  const spec = loopSpec(node as WorkflowNode);
  return { nodes: spec.bodyNodes, edges: spec.bodyEdges, maxIterations: spec.maxIterations ?? null };
}

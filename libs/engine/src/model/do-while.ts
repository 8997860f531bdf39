/**
 * The DO_WHILE node: `spec: {body: {nodes, edges}, condition, max_iterations, output?}`. Its body
 * is a small DAG of nodes of any other type, run once per iteration; after each iteration the
 * `condition` template is evaluated over that iteration's tasks: true runs the body again, false
 * completes the loop with the iteration's output (`output`, else the body's sink outputs by node
 * id). Still true after `max_iterations` iterations, the loop fails. Body nodes share the
 * definition's node id namespace; templates of the body and the condition read
 * `tasks.<loop>.iteration` (0-based) and `tasks.<loop>.previous` (the previous iteration's output,
 * null in the first). Pure: the machine (statemachine/node-kinds/do-while.ts) runs it.
 */
import type { WorkflowEdge, WorkflowNode } from './workflow-definition.js';
import { NodeType, type JsonValue } from './workflow-types.js';

/** The most iterations `max_iterations` may allow. */
export const MAX_LOOP_ITERATIONS = 10_000;

/** A DO_WHILE node's spec, read loosely (validation checks each field). */
export interface LoopSpec {
  bodyNodes: WorkflowNode[];
  bodyEdges: WorkflowEdge[];
  /** The `{{ }}` template deciding whether the body runs again; undefined when missing. */
  condition: string | undefined;
  /** `max_iterations`, undefined when missing or not a number. */
  maxIterations: number | undefined;
  /** The iteration's output template; undefined: the body's sinks by node id. */
  output: JsonValue | undefined;
}

/** True for a DO_WHILE node. */
export function isLoop(n: Pick<WorkflowNode, 'type'> | undefined): boolean {
  return n?.type === NodeType.DoWhile;
}

/** The spec of DO_WHILE node `n`, with empty lists for a missing or malformed body. */
export function loopSpec(n: WorkflowNode): LoopSpec {
  const spec = isObject(n.spec) ? n.spec : {};
  const body = isObject(spec.body) ? spec.body : {};
  const nodes = Array.isArray(body.nodes) ? (body.nodes.filter(isObject) as unknown as WorkflowNode[]) : [];
  const edges = Array.isArray(body.edges) ? (body.edges.filter(isObject) as unknown as WorkflowEdge[]) : [];
  return {
    bodyNodes: nodes.filter((x) => typeof x.node_id === 'string'),
    bodyEdges: edges.filter((e) => typeof e.from === 'string' && typeof e.to === 'string'),
    condition: typeof spec.condition === 'string' ? spec.condition : undefined,
    maxIterations: typeof spec.max_iterations === 'number' ? spec.max_iterations : undefined,
    output: spec.output,
  };
}

/** A node of a definition with its path: `nodes[2]`, or `nodes[2].spec.body.nodes[0]` in a DO_WHILE body. */
export interface PlacedNode {
  node: WorkflowNode;
  path: string;
}

/**
 * Every node of `nodes` (a definition's) and of their DO_WHILE bodies, in spec order (each body
 * right after its loop), with its path. Read loosely: entries that are no objects are left out.
 */
export function placedNodes(nodes: readonly WorkflowNode[] | undefined): PlacedNode[] {
  const out: PlacedNode[] = [];
  (nodes ?? []).forEach((n, i) => {
    if (!isObject(n)) return;
    out.push({ node: n, path: `nodes[${i}]` });
    if (!isLoop(n)) return;
    const body = isObject(n.spec) && isObject(n.spec.body) ? n.spec.body.nodes : undefined;
    if (Array.isArray(body)) body.forEach((b, j) => isObject(b) && out.push({ node: b as unknown as WorkflowNode, path: `nodes[${i}].spec.body.nodes[${j}]` }));
  });
  return out;
}

/** Every node of `nodes` and of their DO_WHILE bodies, in spec order ({@link placedNodes}). */
export function allNodes(nodes: readonly WorkflowNode[] | undefined): WorkflowNode[] {
  return placedNodes(nodes).map((p) => p.node);
}

/** The loop's message when its condition still holds after its last allowed iteration. */
export function maxIterationsReason(loopId: string, max: number): string {
  return `DO_WHILE ${loopId} reached max_iterations ${max} with its condition still true`;
}

function isObject(v: unknown): v is Record<string, JsonValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

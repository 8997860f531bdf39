/**
 * The rules over the whole definition: its top-level shape, the run output template, cycles, the
 * entry node and reachability, `timeout_seconds`, and the two rules that run the node and edge rules over each node
 * and edge in order.
 */
import type { Problem } from '../../errors.js';
import type { JsonValue } from '../workflow-types.js';
import { eachString, edgeContext, isObject, nodeContext, nonJson, unknownKeys, type DefinitionRule, type EdgeRule, type NodeRule } from './context.js';
import { reach, stronglyConnected } from './graph.js';
import { templateProblems } from './templates.js';
import { MAX_DURATION_SECONDS } from '../workflow-definition.js';
import { DEFINITION_KEYS } from './vocabulary.js';

/** Every top-level key is one of {@link DEFINITION_KEYS}. */
export const definitionKeys: DefinitionRule = ({ def }) => unknownKeys(def, DEFINITION_KEYS, [], '', undefined);

/** `name`, `description` and `workflow_id`, when given, are strings. */
export const definitionTexts: DefinitionRule = ({ def }) =>
  ['name', 'description', 'workflow_id'].flatMap((key) =>
    def[key] !== undefined && typeof def[key] !== 'string' ? [{ path: key, message: `${key} must be a string` }] : [],
  );

/** `nodes` is a non-empty list and `edges`, when given, a list. */
export const definitionLists: DefinitionRule = ({ def }) => {
  const out: Problem[] = [];
  if (!Array.isArray(def.nodes)) out.push({ path: 'nodes', message: '"nodes" must be a list of nodes' });
  if (def.edges !== undefined && !Array.isArray(def.edges)) out.push({ path: 'edges', message: '"edges" must be a list of edges' });
  if (Array.isArray(def.nodes) && def.nodes.length === 0) out.push({ path: 'nodes', message: 'a workflow needs at least one node' });
  return out;
};

/** A rule running `rules`, in order, over each node in turn; a node that is no object is one problem. */
export function eachNode(rules: readonly NodeRule[]): DefinitionRule {
  return (ctx) =>
    ctx.nodes.flatMap((raw, i) => {
      if (!isObject(raw)) return [{ path: `nodes[${i}]`, message: 'a node must be an object' }];
      const node = nodeContext(ctx, raw, i);
      return rules.flatMap((rule) => rule(node));
    });
}

/** A rule running `rules`, in order, over each edge in turn; an edge that is no object is one problem. */
export function eachEdge(rules: readonly EdgeRule[]): DefinitionRule {
  return (ctx) =>
    ctx.edges.flatMap((raw, i) => {
      if (!isObject(raw)) return [{ path: `edges[${i}]`, message: 'an edge must be an object {from, to, condition?, on_error?}' }];
      const edge = edgeContext(ctx, raw, i);
      return rules.flatMap((rule) => rule(edge));
    });
}

/** The definition's `output`, when given, is JSON and every template in its strings passes {@link templateProblems}. */
export const runOutput: DefinitionRule = (ctx) => {
  const output = ctx.def.output;
  if (output === undefined) return [];
  const out: Problem[] = [];
  const bad = nonJson(output, 'output');
  if (bad) out.push({ path: bad, message: 'output values must be JSON (no NaN, Infinity or binary)' });
  eachString(output as JsonValue, 'output', (s, path) => out.push(...templateProblems(ctx, s, path)));
  return out;
};

/**
 * The graph is acyclic: one problem per strongly connected component of more than one node, or
 * per self-loop, naming its nodes in declaration order.
 */
export const acyclic: DefinitionRule = ({ order, adj, ids }) => {
  const out: Problem[] = [];
  for (const scc of stronglyConnected(order, adj)) {
    const selfLoop = scc.length === 1 && (adj.get(scc[0]) ?? []).includes(scc[0]);
    if (scc.length > 1 || selfLoop) {
      const sorted = [...scc].sort((a, b) => (ids.get(a) ?? 0) - (ids.get(b) ?? 0));
      out.push({ nodeId: sorted[0], path: 'edges', message: `cycle through nodes ${sorted.join(', ')}: a workflow must be acyclic` });
    }
  }
  return out;
};

/**
 * There is exactly one entry node (the first declared without an incoming edge; a second one
 * would never run) and every node can be reached from a node without incoming edges.
 */
export const entryAndReachability: DefinitionRule = ({ order, adj, ids, indegree }) => {
  if (order.length === 0) return [];
  const roots = order.filter((id) => indegree.get(id) === 0);
  if (roots.length === 0) return [{ path: 'edges', message: 'no entry node: every node has an incoming edge' }];
  const out: Problem[] = [];
  const entry = roots[0];
  const seen = reach([entry], adj);
  const fromAnyRoot = reach(roots, adj);
  for (const extra of roots.slice(1)) {
    out.push({
      nodeId: extra,
      path: `nodes[${ids.get(extra)}]`,
      message:
        `node "${extra}" has no incoming edge, so it is a second entry point that never runs ` +
        `(the run starts at "${entry}"); put a FORK in front of the roots (${roots.join(', ')}) ` +
        'with an edge to each of them',
    });
  }
  for (const id of order) {
    if (!seen.has(id) && !fromAnyRoot.has(id)) {
      out.push({ nodeId: id, path: `nodes[${ids.get(id)}]`, message: `node "${id}" cannot be reached from the entry node "${entry}"` });
    }
  }
  return out;
};

/** The definition's `timeout_seconds`, when given, is an integer from 1 to {@link MAX_DURATION_SECONDS} (365 days). */
export const runTimeout: DefinitionRule = ({ def }) => {
  const t = def.timeout_seconds;
  if (t === undefined || (typeof t === 'number' && Number.isInteger(t) && t >= 1 && t <= MAX_DURATION_SECONDS)) return [];
  return [
    {
      path: 'timeout_seconds',
      message: `timeout_seconds must be an integer from 1 to ${MAX_DURATION_SECONDS} (365 days); got ${JSON.stringify(t) ?? String(t)}`,
    },
  ];
};

/**
 * DO_WHILE nodes (model/do-while.ts): the spec's shape, and the body checked as a small
 * definition of its own, with the node and edge rules of the graph, in a context that also knows
 * the graph's node ids (a body template may read an outer node's output and the loop's
 * `iteration` and `previous`). Problems inside the body carry their full path
 * (`nodes[2].spec.body.nodes[0].spec.url`).
 */
import type { Problem } from '../../errors.js';
import { MAX_LOOP_ITERATIONS } from '../do-while.js';
import { NodeType } from '../workflow-types.js';
import { definitionContext, eachString, isObject, type DefinitionContext, type DefinitionRule, type EdgeRule, type NodeRule, type Obj } from './context.js';
import { acyclic, eachEdge, eachNode } from './definition-rules.js';
import { templateProblems } from './templates.js';

/** The keys a DO_WHILE spec takes. */
export const DO_WHILE_SPEC_KEYS: readonly string[] = ['body', 'condition', 'max_iterations', 'output'];

/** The keys a DO_WHILE `body` takes. */
const BODY_KEYS: readonly string[] = ['nodes', 'edges'];

/**
 * A DO_WHILE's spec: an object of {@link DO_WHILE_SPEC_KEYS}, a `body` object of `nodes` and
 * `edges` only, with a non-empty `nodes` list (and an `edges` list when given), a `condition` `{{ }}` template and an integer
 * `max_iterations` from 1 to {@link MAX_LOOP_ITERATIONS}.
 */
export const loopSpecRule: NodeRule = ({ raw, at, nodeId, type }) => {
  if (type !== NodeType.DoWhile) return [];
  const spec = raw.spec;
  const p = (path: string, message: string): Problem => ({ nodeId, path: `${at}.spec${path}`, message });
  if (!isObject(spec)) return [p('', 'a DO_WHILE node needs a spec {body: {nodes, edges}, condition, max_iterations, output?}')];
  const out: Problem[] = [];
  for (const key of Object.keys(spec)) {
    if (!DO_WHILE_SPEC_KEYS.includes(key)) out.push(p(`.${key}`, `unknown DO_WHILE spec key "${key}"; expected ${DO_WHILE_SPEC_KEYS.join(', ')}`));
  }
  const body = spec.body;
  if (isObject(body)) {
    // A misspelt `edges` would otherwise be dropped, every body node then a source of its own.
    for (const key of Object.keys(body)) {
      if (!BODY_KEYS.includes(key)) out.push(p(`.body.${key}`, `unknown body key "${key}"; expected ${BODY_KEYS.join(', ')}`));
    }
  }
  if (!isObject(body) || !Array.isArray(body.nodes) || body.nodes.length === 0) {
    out.push(p('.body', 'body must be an object {nodes, edges} with at least one node'));
  } else if (body.edges !== undefined && !Array.isArray(body.edges)) out.push(p('.body.edges', 'body.edges must be a list of edges'));
  if (typeof spec.condition !== 'string' || spec.condition.trim() === '') {
    out.push(p('.condition', 'condition is required: a {{ }} CEL template, true to run the body again, e.g. "{{ tasks.check.output.status != \'done\' }}"'));
  }
  const max = spec.max_iterations;
  const range = `an integer from 1 to ${MAX_LOOP_ITERATIONS.toLocaleString('en-US')}`;
  if (max === undefined) out.push(p('.max_iterations', `max_iterations is required: ${range}, the most iterations the loop may run`));
  else if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_LOOP_ITERATIONS) {
    out.push(p('.max_iterations', `max_iterations must be ${range}, got ${JSON.stringify(max)}`));
  }
  return out;
};

/**
 * Each DO_WHILE body checked with `nodeRules` and `edgeRules` as a definition of its own, plus:
 * no DO_WHILE inside a body, body node ids unused elsewhere in the definition, at least one body
 * node without an incoming edge, no cycle; and the loop's `condition` and `output` templates
 * (they read the body's nodes).
 */
export function loopBodies(nodeRules: readonly NodeRule[], edgeRules: readonly EdgeRule[]): DefinitionRule {
  return (ctx) => {
    const out: Problem[] = [];
    const seen = new Map<string, string>(); // body node id → the loop holding it
    ctx.nodes.forEach((raw, i) => {
      if (!isObject(raw) || raw.type !== NodeType.DoWhile || !isObject(raw.spec) || !isObject(raw.spec.body)) return;
      const loopId = typeof raw.node_id === 'string' ? raw.node_id : `nodes[${i}]`;
      const base = `nodes[${i}].spec.body`;
      const body = raw.spec.body;
      const sub = bodyContext(ctx, { nodes: Array.isArray(body.nodes) ? body.nodes : [], edges: Array.isArray(body.edges) ? body.edges : [] });
      const problems: Problem[] = [...eachNode(nodeRules)(sub), ...eachEdge(edgeRules)(sub), ...acyclic(sub)];
      sub.nodes.forEach((b, j) => {
        if (!isObject(b)) return;
        const at = `nodes[${j}]`;
        const id = typeof b.node_id === 'string' ? b.node_id : undefined;
        if (b.type === NodeType.DoWhile) problems.push({ nodeId: id, path: `${at}.type`, message: 'a DO_WHILE body cannot hold another DO_WHILE' });
        if (id === undefined || id === '') return;
        if (ctx.ids.has(id) || id === ctx.finallyId) {
          problems.push({
            nodeId: id,
            path: `${at}.node_id`,
            message: `node id "${id}" is already used by a node of the graph; ids are unique across bodies too`,
          });
        } else if (seen.has(id) && seen.get(id) !== loopId) {
          problems.push({ nodeId: id, path: `${at}.node_id`, message: `node id "${id}" is already used in the body of DO_WHILE ${seen.get(id)}` });
        } else seen.set(id, loopId);
      });
      if (sub.order.length > 0 && !sub.order.some((id) => sub.indegree.get(id) === 0)) {
        problems.push({ path: 'edges', message: 'no body node without an incoming edge: an iteration would have nowhere to start' });
      }
      for (const [key, text] of [
        ['condition', raw.spec.condition],
        ['output', raw.spec.output],
      ] as const) {
        if (text === undefined) continue;
        eachString(text, `nodes[${i}].spec.${key}`, (s, path) => out.push(...templateProblems(sub, s, path, loopId).map((x) => ({ ...x, path }))));
      }
      out.push(...problems.map((x) => ({ ...x, path: x.path === undefined ? base : `${base}.${x.path}` })));
    });
    return out;
  };
}

/** The context of a body: its own nodes and edges, with every id of the graph declared too. */
function bodyContext(outer: DefinitionContext, body: Obj): DefinitionContext {
  const ctx = definitionContext(body);
  const declared = new Map(outer.declared);
  for (const [id, type] of ctx.declared) if (!declared.has(id)) declared.set(id, type);
  return { ...ctx, declared, bodyOwners: outer.bodyOwners };
}

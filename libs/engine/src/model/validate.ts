/**
 * Parsing and validation of published definitions (DESIGN §2): YAML or JSON in, every problem
 * out, each with the node id and path it concerns. CEL is checked with the template module's
 * compiler, so publish-time and run-time agree on what an expression is.
 */
import YAML, { type YAMLError } from 'yaml';
import { WeftError, type Problem } from '../errors.js';
import { checkTemplateSyntax } from '../template/resolver.js';
import { hasTemplate } from '../template/template-syntax.js';
import { isRfc3339 } from './rfc3339.js';
import type { WorkflowDefinition } from './workflow-definition.js';
import { NODE_TYPES, NodeType, type JsonValue } from './workflow-types.js';

/** CODE runtimes a definition may name (DESIGN §2). */
export const CODE_RUNTIMES: readonly string[] = ['python', 'js', 'node'];

const MAX_ALIASES = 100;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function yamlProblem(err: YAMLError): Problem {
  const first = err.message.split('\n')[0].replace(/:\s*$/, '');
  const pos = err.linePos?.[0];
  const where = pos && !/ at line \d+/.test(first) ? ` at line ${pos.line}, column ${pos.col}` : '';
  return { path: pos ? `line ${pos.line}, column ${pos.col}` : undefined, message: `YAML syntax error: ${first}${where}` };
}

/** The error thrown for an invalid definition: `BAD_USER_INPUT` with every problem. */
function invalid(problems: Problem[]): WeftError {
  return new WeftError('BAD_USER_INPUT', `invalid workflow definition: ${problems.length} problem(s)`, problems);
}

/**
 * Parses a definition written in YAML or JSON (YAML 1.2 is a JSON superset). Does NOT validate:
 * the result has the definition's shape only if {@link validateDefinition} finds no problem.
 * @throws WeftError `BAD_USER_INPUT` with one problem (its line and column) on a syntax error.
 */
export function parseDefinition(source: string): WorkflowDefinition {
  const doc = YAML.parseDocument(source, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) throw invalid([yamlProblem(doc.errors[0])]);
  return doc.toJS({ maxAliasCount: MAX_ALIASES }) as WorkflowDefinition;
}

/**
 * Parses, validates and normalizes (`edges` defaults to `[]`) a definition.
 * @throws WeftError `BAD_USER_INPUT`, message `invalid workflow definition: N problem(s)`, with
 * every problem in `problems`.
 */
export function loadDefinition(source: string): WorkflowDefinition {
  const def = parseDefinition(source);
  const problems = validateDefinition(def);
  if (problems.length > 0) throw invalid(problems);
  return { ...def, edges: def.edges ?? [] };
}

/** Where a non-JSON value (NaN, Infinity, binary, …) hides in `v`, or undefined. */
function nonJson(v: unknown, path: string): string | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : path;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = nonJson(v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (isObject(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    for (const [k, x] of Object.entries(v)) {
      const p = nonJson(x, `${path}.${k}`);
      if (p) return p;
    }
    return undefined;
  }
  return path;
}

/** Calls `fn` on every string value (not key) in `v` with its path. */
function eachString(v: unknown, path: string, fn: (s: string, path: string) => void): void {
  if (typeof v === 'string') fn(v, path);
  else if (Array.isArray(v)) v.forEach((x, i) => eachString(x, `${path}[${i}]`, fn));
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) eachString(x, `${path}.${k}`, fn);
}


/** A seconds value as a wait accepts it (number or numeric string, >= 0), unless templated. */
function secondsProblem(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? undefined : 'must be a non-negative number of seconds';
  if (typeof v === 'string') {
    if (hasTemplate(v)) return undefined;
    const f = Number(v.trim());
    return v.trim() !== '' && Number.isFinite(f) && f >= 0 ? undefined : 'must be a non-negative number of seconds';
  }
  return 'must be a non-negative number of seconds';
}

/**
 * Validates a parsed definition and lists EVERY problem found (an empty list means valid), each
 * with `nodeId` (when it concerns a node), `path` (e.g. `nodes[2].spec.url`, `edges[0].to`) and
 * `message`. Checks: the shape (an object with a `nodes` list; `edges` a list if present), node
 * ids (present, strings, unique), node types, per-type specs (CODE `spec.code` and runtime
 * python/js/node, HTTP `spec.url`, WAIT `duration_seconds` or `until`, WAIT_FOR_EVENT `event`,
 * SUBWORKFLOW `workflow`), retry values (`max_attempts` integer >= 1, `backoff_seconds` >= 0),
 * JSON-only values, edge ends, conditions (`{{ }}` templates), CEL syntax in every template of
 * every spec, condition and the definition `output`, cycles, the entry node and reachability from
 * it. Never throws.
 */
export function validateDefinition(def: unknown): Problem[] {
  const problems: Problem[] = [];
  const add = (p: Problem): void => {
    problems.push(p);
  };
  if (!isObject(def)) {
    add({ message: 'a workflow definition must be an object with a "nodes" list and an "edges" list' });
    return problems;
  }
  if (!Array.isArray(def.nodes)) {
    add({ path: 'nodes', message: '"nodes" must be a list of nodes' });
  }
  if (def.edges !== undefined && !Array.isArray(def.edges)) {
    add({ path: 'edges', message: '"edges" must be a list of edges' });
  }
  const nodes: unknown[] = Array.isArray(def.nodes) ? def.nodes : [];
  const edges: unknown[] = Array.isArray(def.edges) ? def.edges : [];
  if (Array.isArray(def.nodes) && nodes.length === 0) {
    add({ path: 'nodes', message: 'a workflow needs at least one node' });
  }

  const templates = (text: string, path: string, nodeId?: string): void => {
    for (const message of checkTemplateSyntax(text)) add({ nodeId, path, message });
  };

  // Nodes.
  const ids = new Map<string, number>(); // node id -> index of its first declaration
  const order: string[] = [];
  nodes.forEach((raw, i) => {
    const at = `nodes[${i}]`;
    if (!isObject(raw)) {
      add({ path: at, message: 'a node must be an object' });
      return;
    }
    let nodeId: string | undefined;
    if (raw.node_id === undefined || raw.node_id === '') {
      add({ path: `${at}.node_id`, message: 'node_id is required' });
    } else if (typeof raw.node_id !== 'string') {
      add({ path: `${at}.node_id`, message: 'node_id must be a string' });
    } else {
      nodeId = raw.node_id;
      const first = ids.get(nodeId);
      if (first !== undefined) {
        add({ nodeId, path: `${at}.node_id`, message: `duplicate node_id "${nodeId}" (first declared at nodes[${first}])` });
      } else {
        ids.set(nodeId, i);
        order.push(nodeId);
      }
    }
    if (raw.name !== undefined && typeof raw.name !== 'string') {
      add({ nodeId, path: `${at}.name`, message: 'name must be a string' });
    }
    if (raw.queue !== undefined && (typeof raw.queue !== 'string' || raw.queue.trim() === '')) {
      add({ nodeId, path: `${at}.queue`, message: 'queue must be a non-empty string' });
    }

    const type = raw.type;
    const known = typeof type === 'string' && (NODE_TYPES as readonly string[]).includes(type);
    if (type === undefined) {
      add({ nodeId, path: `${at}.type`, message: `type is required (one of ${NODE_TYPES.join(', ')})` });
    } else if (!known) {
      add({ nodeId, path: `${at}.type`, message: `unknown node type ${JSON.stringify(type)}; expected one of ${NODE_TYPES.join(', ')}` });
    }

    const spec = raw.spec;
    const specObj = isObject(spec) ? spec : undefined;
    const needsSpec = (t: string): void => {
      if (spec !== undefined && !specObj) add({ nodeId, path: `${at}.spec`, message: `a ${t} node's spec must be an object` });
    };
    const requireString = (key: string, t: string): void => {
      const v = specObj?.[key];
      if (typeof v !== 'string' || v.trim() === '') {
        add({ nodeId, path: `${at}.spec.${key}`, message: `a ${t} node requires spec.${key} (a non-empty string)` });
      }
    };
    switch (type) {
      case NodeType.Code:
        needsSpec(type);
        requireString('code', type);
        if (raw.runtime !== undefined && (typeof raw.runtime !== 'string' || !CODE_RUNTIMES.includes(raw.runtime))) {
          add({ nodeId, path: `${at}.runtime`, message: `unknown CODE runtime ${JSON.stringify(raw.runtime)}; expected one of ${CODE_RUNTIMES.join(', ')}` });
        }
        break;
      case NodeType.Http:
        needsSpec(type);
        requireString('url', type);
        break;
      case NodeType.Wait: {
        needsSpec(type);
        const d = specObj?.duration_seconds;
        const u = specObj?.until;
        if (d === undefined && u === undefined) {
          add({ nodeId, path: `${at}.spec`, message: 'a WAIT node requires spec.duration_seconds or spec.until' });
        }
        if (d !== undefined) {
          const p = secondsProblem(d);
          if (p) add({ nodeId, path: `${at}.spec.duration_seconds`, message: `duration_seconds ${p}` });
        }
        if (u !== undefined && (typeof u !== 'string' || (!hasTemplate(u) && !isRfc3339(u)))) {
          add({ nodeId, path: `${at}.spec.until`, message: 'until must be an RFC 3339 time, e.g. 2030-01-01T00:00:00Z' });
        }
        break;
      }
      case NodeType.WaitForEvent: {
        needsSpec(type);
        requireString('event', type);
        const t = specObj?.timeout_seconds;
        if (t !== undefined && t !== null) {
          const p = secondsProblem(t);
          if (p) add({ nodeId, path: `${at}.spec.timeout_seconds`, message: `timeout_seconds ${p}` });
        }
        break;
      }
      case NodeType.Subworkflow:
        needsSpec(type);
        requireString('workflow', type);
        break;
      default:
        break;
    }

    if (raw.retry !== undefined) {
      const r = raw.retry;
      if (!isObject(r)) {
        add({ nodeId, path: `${at}.retry`, message: 'retry must be an object {max_attempts, backoff_seconds}' });
      } else {
        const m = r.max_attempts;
        if (typeof m !== 'number' || !Number.isInteger(m) || m < 1) {
          add({ nodeId, path: `${at}.retry.max_attempts`, message: 'retry.max_attempts must be an integer >= 1' });
        }
        const b = r.backoff_seconds;
        if (b !== undefined && (typeof b !== 'number' || !Number.isFinite(b) || b < 0)) {
          add({ nodeId, path: `${at}.retry.backoff_seconds`, message: 'retry.backoff_seconds must be a number >= 0' });
        }
      }
    }

    if (spec !== undefined) {
      const bad = nonJson(spec, `${at}.spec`);
      if (bad) add({ nodeId, path: bad, message: 'spec values must be JSON (no NaN, Infinity or binary)' });
      eachString(spec, `${at}.spec`, (s, path) => templates(s, path, nodeId));
    }
  });

  // Edges.
  const adj = new Map<string, string[]>(order.map((id) => [id, []]));
  const indegree = new Map<string, number>(order.map((id) => [id, 0]));
  edges.forEach((raw, i) => {
    const at = `edges[${i}]`;
    if (!isObject(raw)) {
      add({ path: at, message: 'an edge must be an object {from, to, condition?}' });
      return;
    }
    const from = typeof raw.from === 'string' ? raw.from : undefined;
    const to = typeof raw.to === 'string' ? raw.to : undefined;
    const nodeId = from;
    if (from === undefined) add({ path: `${at}.from`, message: 'edge "from" must be a node id' });
    else if (!ids.has(from)) add({ nodeId, path: `${at}.from`, message: `edge from unknown node "${from}"` });
    if (to === undefined) add({ nodeId, path: `${at}.to`, message: 'edge "to" must be a node id' });
    else if (!ids.has(to)) add({ nodeId, path: `${at}.to`, message: `edge to unknown node "${to}"` });
    if (raw.condition !== undefined) {
      if (typeof raw.condition !== 'string') {
        add({ nodeId, path: `${at}.condition`, message: 'condition must be a string holding a {{ }} CEL template' });
      } else if (raw.condition.trim() !== '' && !hasTemplate(raw.condition)) {
        add({ nodeId, path: `${at}.condition`, message: 'condition must be a {{ }} CEL template, e.g. "{{tasks.a.output.n > 1}}"' });
      } else {
        templates(raw.condition, `${at}.condition`, nodeId);
      }
    }
    if (from !== undefined && to !== undefined && ids.has(from) && ids.has(to)) {
      adj.get(from)?.push(to);
      indegree.set(to, (indegree.get(to) ?? 0) + 1);
    }
  });

  // Definition output.
  if (def.output !== undefined) {
    const bad = nonJson(def.output, 'output');
    if (bad) add({ path: bad, message: 'output values must be JSON (no NaN, Infinity or binary)' });
    eachString(def.output as JsonValue, 'output', (s, path) => templates(s, path));
  }

  // Cycles (strongly connected components with more than one node, or a self-loop).
  for (const scc of stronglyConnected(order, adj)) {
    const selfLoop = scc.length === 1 && (adj.get(scc[0]) ?? []).includes(scc[0]);
    if (scc.length > 1 || selfLoop) {
      const sorted = [...scc].sort((a, b) => (ids.get(a) ?? 0) - (ids.get(b) ?? 0));
      add({ nodeId: sorted[0], path: 'edges', message: `cycle through nodes ${sorted.join(', ')}: a workflow must be acyclic` });
    }
  }

  // Entry node and reachability.
  if (order.length > 0) {
    const roots = order.filter((id) => indegree.get(id) === 0);
    if (roots.length === 0) {
      add({ path: 'edges', message: 'no entry node: every node has an incoming edge' });
    } else {
      const entry = roots[0];
      const seen = reach([entry], adj);
      const fromAnyRoot = reach(roots, adj);
      for (const extra of roots.slice(1)) {
        add({
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
          add({ nodeId: id, path: `nodes[${ids.get(id)}]`, message: `node "${id}" cannot be reached from the entry node "${entry}"` });
        }
      }
    }
  }
  return problems;
}

function reach(starts: string[], adj: Map<string, string[]>): Set<string> {
  const seen = new Set(starts);
  const queue = [...starts];
  while (queue.length > 0) {
    const cur = queue.shift() as string;
    for (const next of adj.get(cur) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/** Tarjan's algorithm, iterative (deep graphs must not overflow the stack). */
function stronglyConnected(order: string[], adj: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  for (const root of order) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const next = adj.get(frame.v) ?? [];
      if (frame.i < next.length) {
        const w = next[frame.i++];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.v, Math.min(low.get(frame.v) as number, index.get(w) as number));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].v;
        low.set(parent, Math.min(low.get(parent) as number, low.get(frame.v) as number));
      }
      if (low.get(frame.v) === index.get(frame.v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          scc.push(w);
        } while (w !== frame.v);
        out.push(scc);
      }
    }
  }
  return out;
}

/**
 * What the validation rules share: the facts gathered once about a definition (declared node ids,
 * first declarations, the graph of valid edges), the contexts each rule receives, and small
 * checks several rules use.
 */
import type { Problem } from '../../errors.js';
import { hasTemplate } from '../template-syntax.js';
import { MAX_DURATION_SECONDS } from '../workflow-definition.js';
import { NODE_TYPES } from '../workflow-types.js';
import { didYouMean } from './suggest.js';

/** A plain object read from YAML or JSON, not yet known to have any shape. */
export type Obj = Record<string, unknown>;

/** True for a non-null object that is not an array. */
export function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Facts about a whole definition, gathered before any rule runs. */
export interface DefinitionContext {
  def: Obj;
  /** `def.nodes` when it is a list, else empty. */
  nodes: readonly unknown[];
  /** `def.edges` when it is a list, else empty. */
  edges: readonly unknown[];
  /** Every node id declared as a string (`''` included) and the type of its first declaration. */
  declared: ReadonlyMap<string, unknown>;
  /** Every non-empty string node id and the index of its first declaration. */
  ids: ReadonlyMap<string, number>;
  /** The ids of {@link ids} in declaration order. */
  order: readonly string[];
  /** Successors by node id, from the edges whose ends are both declared, in edge order. */
  adj: ReadonlyMap<string, readonly string[]>;
  /** Incoming edge count by node id, over the same edges as {@link adj}. */
  indegree: ReadonlyMap<string, number>;
  /** Per edge key (`from`, `to`, error or normal), the index of its first declaration. */
  firstEdges: ReadonlyMap<string, number>;
  /** The `node_id` of the definition's `finally` step, when it has one that is a string. */
  finallyId: string | undefined;
  /** The DO_WHILE node holding each body node id, for messages about reading a body from outside. */
  bodyOwners: ReadonlyMap<string, string>;
}

/** One node, an object, as the node rules see it. */
export interface NodeContext {
  ctx: DefinitionContext;
  raw: Obj;
  /** Its position in `nodes`. */
  index: number;
  /** Its path, `nodes[i]`. */
  at: string;
  /** Its `node_id` when that is a non-empty string. */
  nodeId: string | undefined;
  /** Its `type` as written. */
  type: unknown;
  /** True when `type` is one of the node types. */
  known: boolean;
  /** Its `spec` as written, and the same when it is an object. */
  spec: unknown;
  specObj: Obj | undefined;
}

/** One edge, an object, as the edge rules see it. */
export interface EdgeContext {
  ctx: DefinitionContext;
  raw: Obj;
  /** Its position in `edges`. */
  index: number;
  /** Its path, `edges[i]`. */
  at: string;
  /** `from` and `to` when they are strings. */
  from: string | undefined;
  to: string | undefined;
}

/** A rule over the whole definition: the problems it finds, in order. */
export type DefinitionRule = (ctx: DefinitionContext) => Problem[];
/** A rule over one node. */
export type NodeRule = (node: NodeContext) => Problem[];
/** A rule over one edge. */
export type EdgeRule = (edge: EdgeContext) => Problem[];

/** The key under which {@link DefinitionContext.firstEdges} records an edge. */
export function edgeKey(from: string, to: string, onError: boolean): string {
  return `${from}\u0000${to}\u0000${onError}`;
}

/** Gathers the {@link DefinitionContext} of definition object `def`. Never throws. */
export function definitionContext(def: Obj): DefinitionContext {
  const nodes: unknown[] = Array.isArray(def.nodes) ? def.nodes : [];
  const edges: unknown[] = Array.isArray(def.edges) ? def.edges : [];
  const declared = new Map<string, unknown>();
  const ids = new Map<string, number>();
  const order: string[] = [];
  nodes.forEach((n, i) => {
    if (!isObject(n) || typeof n.node_id !== 'string') return;
    if (!declared.has(n.node_id)) declared.set(n.node_id, n.type);
    if (n.node_id !== '' && !ids.has(n.node_id)) {
      ids.set(n.node_id, i);
      order.push(n.node_id);
    }
  });
  const adj = new Map<string, string[]>(order.map((id) => [id, []]));
  const indegree = new Map<string, number>(order.map((id) => [id, 0]));
  const firstEdges = new Map<string, number>();
  edges.forEach((e, i) => {
    if (!isObject(e) || typeof e.from !== 'string' || typeof e.to !== 'string') return;
    const key = edgeKey(e.from, e.to, e.on_error === true);
    if (!firstEdges.has(key)) firstEdges.set(key, i);
    if (ids.has(e.from) && ids.has(e.to)) {
      adj.get(e.from)?.push(e.to);
      indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
    }
  });
  const finallyId = isObject(def.finally) && typeof def.finally.node_id === 'string' ? def.finally.node_id : undefined;
  const bodyOwners = new Map<string, string>();
  for (const n of nodes) {
    if (!isObject(n) || n.type !== 'DO_WHILE' || typeof n.node_id !== 'string' || !isObject(n.spec) || !isObject(n.spec.body)) continue;
    const body = n.spec.body.nodes;
    if (Array.isArray(body))
      for (const b of body) if (isObject(b) && typeof b.node_id === 'string' && !bodyOwners.has(b.node_id)) bodyOwners.set(b.node_id, n.node_id);
  }
  return { def, nodes, edges, declared, ids, order, adj, indegree, firstEdges, finallyId, bodyOwners };
}

/** The {@link NodeContext} of node object `raw` at position `index`. */
export function nodeContext(ctx: DefinitionContext, raw: Obj, index: number): NodeContext {
  const type = raw.type;
  return {
    ctx,
    raw,
    index,
    at: `nodes[${index}]`,
    nodeId: typeof raw.node_id === 'string' && raw.node_id !== '' ? raw.node_id : undefined,
    type,
    known: typeof type === 'string' && (NODE_TYPES as readonly string[]).includes(type),
    spec: raw.spec,
    specObj: isObject(raw.spec) ? raw.spec : undefined,
  };
}

/** The {@link EdgeContext} of edge object `raw` at position `index`. */
export function edgeContext(ctx: DefinitionContext, raw: Obj, index: number): EdgeContext {
  return {
    ctx,
    raw,
    index,
    at: `edges[${index}]`,
    from: typeof raw.from === 'string' ? raw.from : undefined,
    to: typeof raw.to === 'string' ? raw.to : undefined,
  };
}

/**
 * One problem per key of `obj` outside `allowed`, at `at.<key>` (the key alone when `at` is
 * empty): a key of `unsupported` as `X is not supported yet`, anything else as `unknown field
 * "X"` with the allowed keys, and `(did you mean "Y"?)` when one of them is close to it
 * ({@link didYouMean}). `where` (e.g. ` in an HTTP spec`) follows the key in the message.
 */
export function unknownKeys(
  obj: Obj,
  allowed: readonly string[],
  unsupported: readonly string[],
  at: string,
  nodeId: string | undefined,
  where = '',
): Problem[] {
  const out: Problem[] = [];
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const path = at === '' ? key : `${at}.${key}`;
    const message = unsupported.includes(key)
      ? `${key} is not supported yet`
      : `unknown field ${JSON.stringify(key)}${where}${didYouMean(key, allowed)}; expected one of ${allowed.join(', ')}`;
    out.push({ nodeId, path, message });
  }
  return out;
}

/** The path of the first non-JSON value (NaN, Infinity, binary, a class instance…) in `v`, or undefined. */
export function nonJson(v: unknown, path: string): string | undefined {
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

/** Calls `fn` on every string value (not key) in `v`, depth first, with its path. */
export function eachString(v: unknown, path: string, fn: (s: string, path: string) => void): void {
  if (typeof v === 'string') fn(v, path);
  else if (Array.isArray(v)) v.forEach((x, i) => eachString(x, `${path}[${i}]`, fn));
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) eachString(x, `${path}.${k}`, fn);
}

/**
 * Why `v` is no seconds value a wait or timeout accepts (a number or numeric string from 0, or
 * above 0 when `positive`, to {@link MAX_DURATION_SECONDS}), or undefined. A templated string is
 * accepted: its value is checked when it is resolved.
 */
export function secondsProblem(v: unknown, positive = false): string | undefined {
  const bad = `must be a ${positive ? 'positive' : 'non-negative'} number of seconds, at most ${MAX_DURATION_SECONDS} (365 days)`;
  let f: number;
  if (typeof v === 'number') f = v;
  else if (typeof v === 'string') {
    if (hasTemplate(v)) return undefined;
    f = v.trim() === '' ? Number.NaN : Number(v.trim());
  } else return bad;
  return Number.isFinite(f) && (positive ? f > 0 : f >= 0) && f <= MAX_DURATION_SECONDS ? undefined : bad;
}

/** True for a string holding a `{{ }}` template: its value is only known when resolved. */
export function isTemplated(v: unknown): boolean {
  return typeof v === 'string' && hasTemplate(v);
}

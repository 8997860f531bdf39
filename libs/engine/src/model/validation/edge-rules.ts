/**
 * The rules over one edge: its keys, its ends, its condition, its `on_error` flag and whether an
 * earlier edge already joins the same nodes.
 */
import type { Problem } from '../../errors.js';
import { hasTemplate } from '../template-syntax.js';
import { NodeType } from '../workflow-types.js';
import { edgeKey, unknownKeys, type EdgeRule } from './context.js';
import { templateProblems } from './templates.js';
import { EDGE_KEYS, UNSUPPORTED_EDGE_KEYS } from './vocabulary.js';

/** Every key of the edge is one of {@link EDGE_KEYS}. */
export const edgeKeys: EdgeRule = ({ raw, at, from }) => unknownKeys(raw, EDGE_KEYS, UNSUPPORTED_EDGE_KEYS, at, from);

/** `from` and `to` are node ids the definition declares (an edge naming the `finally` step is finally-rules.ts's). */
export const edgeEnds: EdgeRule = ({ ctx, at, from, to }) => {
  const out: Problem[] = [];
  // A DO_WHILE body's node is reached only by its body's edges.
  const unknown = (id: string) => {
    const loop = ctx.bodyOwners.get(id);
    return loop === undefined ? `unknown node "${id}"` : `node "${id}", which is in the body of DO_WHILE ${loop} (edges outside the body reach only ${loop})`;
  };
  if (from === undefined) out.push({ path: `${at}.from`, message: 'edge "from" must be a node id' });
  else if (!ctx.ids.has(from) && from !== ctx.finallyId) out.push({ nodeId: from, path: `${at}.from`, message: `edge from ${unknown(from)}` });
  if (to === undefined) out.push({ nodeId: from, path: `${at}.to`, message: 'edge "to" must be a node id' });
  else if (!ctx.ids.has(to) && to !== ctx.finallyId) out.push({ nodeId: from, path: `${at}.to`, message: `edge to ${unknown(to)}` });
  return out;
};

/** `condition`, when given and not blank, is a `{{ }}` template that passes {@link templateProblems}. */
export const edgeCondition: EdgeRule = ({ ctx, raw, at, from }) => {
  const c = raw.condition;
  if (c === undefined) return [];
  if (typeof c !== 'string') return [{ nodeId: from, path: `${at}.condition`, message: 'condition must be a string holding a {{ }} CEL template' }];
  if (c.trim() !== '' && !hasTemplate(c)) {
    return [{ nodeId: from, path: `${at}.condition`, message: 'condition must be a {{ }} CEL template, e.g. "{{tasks.a.output.n > 1}}"' }];
  }
  return templateProblems(ctx, c, `${at}.condition`, from);
};

/** `on_error`, when given, is a boolean, and no error edge leaves a SWITCH or FORK: they never fail, so it would never be taken. */
export const edgeOnError: EdgeRule = ({ ctx, raw, at, from }) => {
  if (raw.on_error !== undefined && typeof raw.on_error !== 'boolean') {
    return [{ nodeId: from, path: `${at}.on_error`, message: 'on_error must be true or false' }];
  }
  if (raw.on_error !== true || from === undefined) return [];
  const fromType = ctx.declared.get(from);
  if (fromType !== NodeType.Switch && fromType !== NodeType.Fork) return [];
  return [
    { nodeId: from, path: `${at}.on_error`, message: `on_error edge leaving a ${fromType} node ("${from}"), which never fails; it would never be taken` },
  ];
};

/**
 * No earlier edge of the same kind (normal or error) joins the same two nodes: routing would be
 * ambiguous (which condition decides?) and the successor would count the edge twice.
 */
export const uniqueEdge: EdgeRule = ({ ctx, raw, index, at, from, to }) => {
  if (from === undefined || to === undefined) return [];
  const onError = raw.on_error === true;
  const first = ctx.firstEdges.get(edgeKey(from, to, onError));
  if (first === undefined || first === index) return [];
  return [
    {
      nodeId: from,
      path: at,
      message: `duplicate ${onError ? 'on_error ' : ''}edge ${from} → ${to} (first declared at edges[${first}]); merge their conditions into one`,
    },
  ];
};

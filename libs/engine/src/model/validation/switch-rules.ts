/**
 * The spec of a SWITCH: `{default: "<node id>"}` at most. The default successor must be reached
 * by an edge from the SWITCH without a condition, and every other normal edge leaving it must
 * carry one (an unconditioned one is always taken, so the default never would be).
 */
import type { Problem } from '../../errors.js';
import { isObject, unknownKeys, type NodeContext } from './context.js';
import { reach } from './graph.js';
import { didYouMean } from './suggest.js';
import { SWITCH_SPEC_KEYS } from './vocabulary.js';

/** A SWITCH's `spec`: absent, null, `{}` or `{default}` naming a successor reached by an unconditioned edge. */
export function switchSpec(node: NodeContext): Problem[] {
  const { spec, specObj, at, nodeId, ctx } = node;
  if (spec === undefined || spec === null) return [];
  if (!specObj) return [{ nodeId, path: `${at}.spec`, message: 'a SWITCH node\'s spec must be an object, e.g. {default: "<node id>"}' }];
  const out = unknownKeys(
    specObj,
    SWITCH_SPEC_KEYS,
    [],
    `${at}.spec`,
    nodeId,
    ' in a SWITCH spec (its conditions go on its outgoing edges: {from, to, condition})',
  );
  const d = specObj.default;
  if (d === undefined || nodeId === undefined) return out;
  const path = `${at}.spec.default`;
  const edges = ctx.edges.flatMap((e, i) => (isObject(e) && e.from === nodeId && e.on_error !== true ? [{ e, i }] : []));
  const targets = edges.map(({ e }) => e.to).filter((t): t is string => typeof t === 'string');
  if (typeof d !== 'string' || d === '') {
    out.push({ nodeId, path, message: `a SWITCH's spec.default must be the id of one of its successors (${targets.join(', ') || 'none'})` });
    return out;
  }
  const own = edges.find(({ e }) => e.to === d);
  if (!own) {
    const name = `: name one of its successors (${targets.join(', ') || 'none'})`;
    const hint =
      d === nodeId
        ? `; it names the SWITCH itself${name}`
        : !ctx.ids.has(d)
          ? didYouMean(d, targets)
          : reach([d], ctx.adj).has(nodeId)
            ? `; an edge {from: ${nodeId}, to: ${d}} would close a cycle (${d} leads to ${nodeId})${name}`
            : `; add an edge {from: ${nodeId}, to: ${d}} without a condition`;
    out.push({ nodeId, path, message: `spec.default "${d}" is not a successor of SWITCH ${nodeId}${hint}` });
    return out;
  }
  if (typeof own.e.condition === 'string' && own.e.condition.trim() !== '') {
    out.push({
      nodeId,
      path: `edges[${own.i}].condition`,
      message: `the edge ${nodeId} → ${d} leads to the SWITCH's default, which is taken when no other condition holds; remove its condition`,
    });
  }
  for (const { e, i } of edges) {
    if (e.to === d || (typeof e.condition === 'string' && e.condition.trim() !== '')) continue;
    out.push({
      nodeId,
      path: `edges[${i}]`,
      message: `the edge ${nodeId} → ${String(e.to)} has no condition, so it is always taken and the default "${d}" never would be; give it a condition`,
    });
  }
  return out;
}

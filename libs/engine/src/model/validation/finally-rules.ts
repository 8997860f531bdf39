/**
 * The rules over the definition's `finally` step: a worker node (HTTP or CODE) checked by the
 * node rules that apply to one, at path `finally`, whose id no node has and no edge names, and
 * without the fields of a fan-out or of a pause.
 */
import type { Problem } from '../../errors.js';
import { NodeType } from '../workflow-types.js';
import { isObject, nodeContext, type DefinitionRule, type NodeContext, type NodeRule } from './context.js';
import { nodeFlow } from './flow-rules.js';
import { nodeKeys, nodeTexts, payloadHygiene, queue, runtimeOnCode, scheduleToStart, specValues, uniqueNodeId } from './node-rules.js';
import { retry } from './retry-rules.js';
import { typeSpec } from './spec-rules.js';
import { FINALLY_EXCLUDED_KEYS } from './vocabulary.js';

/** `type` is HTTP or CODE: the step is one task a worker runs. */
const finallyType: NodeRule = ({ at, nodeId, type }) =>
  type === NodeType.Http || type === NodeType.Code
    ? []
    : [
        {
          nodeId,
          path: `${at}.type`,
          message: `the finally step must be an HTTP or CODE node; got ${type === undefined ? 'no type' : JSON.stringify(type)}`,
        },
      ];

/** None of {@link FINALLY_EXCLUDED_KEYS}. */
const finallyFields: NodeRule = ({ raw, at, nodeId }) =>
  FINALLY_EXCLUDED_KEYS.filter((key) => raw[key] !== undefined).map((key) => ({
    nodeId,
    path: `${at}.${key}`,
    message: `${key} does not apply to the finally step: it runs one task, once the run's outcome is decided`,
  }));

/** The node rules over the step, in the order their problems are reported. */
const FINALLY_RULES: readonly NodeRule[] = [
  uniqueNodeId,
  nodeKeys,
  nodeTexts,
  finallyFields,
  finallyType,
  queue,
  runtimeOnCode,
  payloadHygiene,
  scheduleToStart,
  typeSpec,
  nodeFlow,
  retry,
  specValues,
];

/**
 * The definition's `finally`, when given, is a node object passing {@link FINALLY_RULES} (its id
 * must differ from every node's: `duplicate node_id`), and no edge starts or ends at it. Its
 * templates may read `run` (templates.ts), and `tasks.<id>` of declared nodes.
 */
export const finallyStep: DefinitionRule = (ctx) => {
  const raw = ctx.def.finally;
  if (raw === undefined) return [];
  if (!isObject(raw)) return [{ path: 'finally', message: 'finally must be a node object {node_id, type: HTTP or CODE, spec, retry?, …}' }];
  const node: NodeContext = { ...nodeContext(ctx, raw, -1), at: 'finally' };
  const out: Problem[] = FINALLY_RULES.flatMap((rule) => rule(node));
  const id = node.nodeId;
  if (id === undefined || ctx.ids.has(id)) return out; // a node's id: its edges are that node's
  ctx.edges.forEach((e, i) => {
    if (!isObject(e)) return;
    for (const end of ['from', 'to'] as const) {
      if (e[end] === id) {
        out.push({
          nodeId: id,
          path: `edges[${i}].${end}`,
          message: `edge ${end} the finally step "${id}": no edge may name it (it runs on its own once the run's outcome is decided)`,
        });
      }
    }
  });
  return out;
};

/**
 * A SWITCH's decision as data: which successors it selected, whether its `spec.default` was
 * taken, and each other outgoing edge's condition with its value. The machine builds it when the
 * SWITCH activates; readers rebuild it from the recorded branches ({@link recordedDecision}),
 * which is exact because no two normal edges join the same two nodes.
 */
import type { WorkflowEdge, WorkflowNode } from './workflow-definition.js';
import { NodeType } from './workflow-types.js';

/** One evaluated outgoing edge of a SWITCH: its target, its condition text (null: none) and its value. */
export interface EdgeVerdict {
  to: string;
  condition: string | null;
  /** The condition's value coerced to a boolean; true for an edge without a condition. */
  value: boolean;
}

/** What a SWITCH decided. */
export interface SwitchDecision {
  /** The selected successors, in edge order (empty: no branch taken). */
  branches: string[];
  /** `spec.default`, or null for a SWITCH without one. */
  default: string | null;
  /** True when no other edge held and the default successor was selected. */
  defaultTaken: boolean;
  /** Every normal outgoing edge but the default's, in edge order. */
  conditions: EdgeVerdict[];
}

/** The `spec.default` of a SWITCH node: the successor taken when no other edge's condition holds. */
export function switchDefault(node: Pick<WorkflowNode, 'type' | 'spec'> | undefined): string | undefined {
  if (node?.type !== NodeType.Switch) return undefined;
  const spec = node.spec;
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
  const d = spec.default;
  return typeof d === 'string' && d !== '' ? d : undefined;
}

/**
 * The decision of SWITCH `node` rebuilt from its recorded `branches` and its outgoing `edges`:
 * an edge's condition held exactly when its target was selected (a default is selected only
 * when none held).
 */
export function recordedDecision(
  node: Pick<WorkflowNode, 'node_id' | 'type' | 'spec'>,
  edges: readonly WorkflowEdge[],
  branches: readonly string[],
): SwitchDecision {
  const dflt = switchDefault(node) ?? null;
  const conditions = edges
    .filter((e) => e.from === node.node_id && e.on_error !== true && e.to !== dflt)
    .map((e) => ({ to: e.to, condition: e.condition ?? null, value: branches.includes(e.to) }));
  return { branches: [...branches], default: dflt, defaultTaken: dflt !== null && branches.includes(dflt), conditions };
}

/** The decision as one line (shared with the CLI and the console). */
export { decisionText } from '@weft/contract';

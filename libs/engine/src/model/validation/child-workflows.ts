/**
 * Warnings about the workflows a definition's SUBWORKFLOW nodes call. A definition may call a
 * workflow that is published later (or itself), so a missing one never refuses the publish; but
 * a run that reaches the node fails there until it exists, so the publisher is told. Pure: the
 * caller reads the tenant's workflows and passes them in.
 */
import type { Problem } from '../../errors.js';
import { hasTemplate } from '../template-syntax.js';
import { NodeType } from '../workflow-types.js';
import { placedNodes } from '../do-while.js';
import type { WorkflowNode } from '../workflow-definition.js';
import { isObject, type Obj } from './context.js';
import { suggestKey } from './suggest.js';

/** One literal call of a SUBWORKFLOW node: which workflow (and version, when given), and where. */
export interface ChildWorkflowRef {
  nodeId: string;
  /** `nodes[i].spec.workflow`. */
  path: string;
  workflow: string;
  version?: number;
}

/** A version of a called workflow, as the warnings need it. */
export interface CalledVersion {
  version: number;
  deprecated: boolean;
}

/** What the tenant has, as far as the calls in question go. */
export interface TenantWorkflows {
  /** Every workflow id of the tenant (for "did you mean"); may be empty when every called workflow exists. */
  ids: readonly string[];
  /** The versions of each called workflow the tenant has; a workflow missing here does not exist. */
  versions: ReadonlyMap<string, readonly CalledVersion[]>;
}

/**
 * The literal calls of definition `def`'s SUBWORKFLOW nodes (DO_WHILE bodies' included), in node order: `spec.workflow` when
 * it is a non-empty string without a template (a templated one is only known at run time), with
 * `spec.version` when it is a literal integer. Reads a validated definition; never throws.
 */
export function childWorkflowRefs(def: unknown): ChildWorkflowRef[] {
  const nodes = isObject(def) && Array.isArray(def.nodes) ? (def.nodes as unknown as WorkflowNode[]) : [];
  const out: ChildWorkflowRef[] = [];
  // A DO_WHILE body's SUBWORKFLOW calls as one of the graph does.
  for (const { node, path } of placedNodes(nodes)) {
    const n = node as unknown as Obj;
    if (n.type !== NodeType.Subworkflow || typeof n.node_id !== 'string' || !isObject(n.spec)) continue;
    const { workflow, version } = n.spec;
    if (typeof workflow !== 'string' || workflow.trim() === '' || hasTemplate(workflow)) continue;
    const ref: ChildWorkflowRef = { nodeId: n.node_id, path: `${path}.spec.workflow`, workflow };
    if (typeof version === 'number' && Number.isInteger(version)) ref.version = version;
    out.push(ref);
  }
  return out;
}

/** What a run that reaches the node does, said after each warning. */
const CONSEQUENCE = 'runs that reach the node will fail there';

/**
 * One warning per call in `refs` that cannot start a child run today, at the call's path with its
 * node id:
 * - the workflow does not exist: `SUBWORKFLOW node "pay" calls workflow "paymnet", which this
 *   tenant does not have (did you mean "payment"?); runs that reach the node will fail there
 *   until it is published`;
 * - the version does not exist: `… calls version 3 of workflow "payment", whose latest version is
 *   2; …`;
 * - the version is deprecated: `… calls version 1 of workflow "payment", which is deprecated; …`.
 */
export function childWorkflowWarnings(refs: readonly ChildWorkflowRef[], tenant: TenantWorkflows): Problem[] {
  const out: Problem[] = [];
  for (const ref of refs) {
    const calls = `SUBWORKFLOW node ${JSON.stringify(ref.nodeId)} calls`;
    const name = JSON.stringify(ref.workflow);
    const versions = tenant.versions.get(ref.workflow);
    let message: string | undefined;
    if (versions === undefined || versions.length === 0) {
      const near = suggestKey(ref.workflow, tenant.ids);
      const hint = near !== undefined ? ` (did you mean ${JSON.stringify(near)}?)` : '';
      message = `${calls} workflow ${name}, which this tenant does not have${hint}; ${CONSEQUENCE} until it is published`;
    } else if (ref.version !== undefined) {
      const found = versions.find((v) => v.version === ref.version);
      const latest = Math.max(...versions.map((v) => v.version));
      if (!found)
        message = `${calls} version ${ref.version} of workflow ${name}, whose latest version is ${latest}; ${CONSEQUENCE} until that version is published`;
      else if (found.deprecated) message = `${calls} version ${ref.version} of workflow ${name}, which is deprecated; ${CONSEQUENCE} until it is restored`;
    }
    if (message !== undefined) out.push({ nodeId: ref.nodeId, path: ref.path, message });
  }
  return out;
}

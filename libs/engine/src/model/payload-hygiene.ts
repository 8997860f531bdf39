import type { WorkflowNode } from './workflow-definition.js';
import type { JsonValue } from './workflow-types.js';

/**
 * Payload hygiene: what of a node's output is stored and
 * passed on. `output_keep: [fields]` keeps only those top-level fields of an object output;
 * `output_drop: [fields]` then removes these. Both apply to object outputs only: an array, a
 * string, a number, a boolean or null is stored as it is. Fields named but absent are ignored.
 *
 * The result is what the task stores, what `tasks.<id>.output` shows to successors' templates
 * and what the run history records — the trimmed fields are gone for good.
 */
export function trimOutput(node: Pick<WorkflowNode, 'output_keep' | 'output_drop'> | undefined, output: JsonValue): JsonValue {
  if (!node || (!node.output_keep && !node.output_drop)) return output;
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return output;
  let fields = Object.entries(output);
  if (node.output_keep) {
    const keep = new Set(node.output_keep);
    fields = fields.filter(([k]) => keep.has(k));
  }
  if (node.output_drop) {
    const drop = new Set(node.output_drop);
    fields = fields.filter(([k]) => !drop.has(k));
  }
  return Object.fromEntries(fields);
}

/** True for a node marked `sensitive: true`: its input and output stay out of the run history and are redacted in the API. */
export function isSensitive(node: Pick<WorkflowNode, 'sensitive'> | undefined): boolean {
  return node?.sensitive === true;
}

/** What the history and the API show in place of a sensitive node's input or output. */
export const REDACTED = '[redacted: sensitive node]';

import {
  definitionSizeProblem,
  parseDefinition,
  validateDefinition,
  WeftError,
  type DefinitionLimits,
  type Problem,
  type WorkflowDefinition,
} from '@weft/engine';
import { definitionChecksum } from './canonical-json.js';

/** A definition parsed and within its size limits, not yet validated, with its checksum. */
export interface ParsedDefinition {
  /** As parsed, `edges` defaulted to `[]` (the form a version stores); its shape is unchecked. */
  definition: WorkflowDefinition;
  /** {@link definitionChecksum} of `definition`: equal to a stored version's only when identical to it. */
  checksum: string;
}

/**
 * Parses a definition's text and refuses one over `limits` before anything else reads it.
 * @throws WeftError BAD_USER_INPUT on a syntax error, or naming the count and the cap.
 */
export function parseForPublish(source: string, limits: DefinitionLimits): ParsedDefinition {
  // JSON text is YAML too, and JSON.parse reads it about a hundred times faster than the YAML
  // parser: a definition over the caps is refused from that reading alone. Anything else (YAML,
  // or JSON the YAML parser would refuse, e.g. for a duplicate key) is read as YAML below.
  const tooLargeJson = definitionSizeProblem(fastJson(source), limits);
  if (tooLargeJson) throw new WeftError('BAD_USER_INPUT', tooLargeJson.message, [tooLargeJson]);
  const parsed = parseDefinition(source) as unknown;
  const tooLarge = definitionSizeProblem(parsed, limits);
  if (tooLarge) throw new WeftError('BAD_USER_INPUT', tooLarge.message, [tooLarge]);
  const definition = (isRecord(parsed) ? { ...parsed, edges: parsed.edges ?? [] } : parsed) as WorkflowDefinition;
  return { definition, checksum: definitionChecksum(definition) };
}

/** Every problem of a parsed definition ({@link validateDefinition}); none when it is valid. */
export function definitionProblems(definition: WorkflowDefinition): Problem[] {
  return validateDefinition(definition);
}

/** `source` read as JSON when it is a JSON object, else undefined. */
function fastJson(source: string): unknown {
  if (!/^\s*\{/.test(source)) return undefined;
  try {
    return JSON.parse(source) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A request to the validation thread. */
export type CheckRequest =
  { id: number; op: 'parse'; source: string; limits: DefinitionLimits } | { id: number; op: 'validate'; definition: WorkflowDefinition };

/** The validation thread's answer to the request of the same `id`. */
export type CheckReply =
  | { id: number; ok: true; parsed?: ParsedDefinition; problems?: Problem[] }
  | { id: number; ok: false; code: WeftError['code'] | 'INTERNAL'; message: string; problems: Problem[] };

/** Runs one request: the thread's whole job, also callable inline. Never throws. */
export function runCheck(req: CheckRequest): CheckReply {
  try {
    return req.op === 'parse'
      ? { id: req.id, ok: true, parsed: parseForPublish(req.source, req.limits) }
      : { id: req.id, ok: true, problems: definitionProblems(req.definition) };
  } catch (err) {
    if (err instanceof WeftError) return { id: req.id, ok: false, code: err.code, message: err.message, problems: err.problems };
    return { id: req.id, ok: false, code: 'INTERNAL', message: err instanceof Error ? err.message : String(err), problems: [] };
  }
}

import { operation, type WeftClient } from '@weft/client';
import type { VersionDefinitionQuery, VersionDefinitionQueryVariables } from './generated/graphql.js';

/** The definition of a workflow version (the default one without `v`). */
export const VERSION_DEFINITION = operation<VersionDefinitionQuery, VersionDefinitionQueryVariables>(/* GraphQL */ `
  query VersionDefinition($id: String!, $v: Int) { workflowVersion(workflowId: $id, version: $v) { definition } }
`);

/** Node id → how many times the node may execute (its retry policy's `max_attempts`, at least 1). */
export type AttemptLimits = ReadonlyMap<string, number>;

/**
 * An attempt for people, counted from 1: the API's 0-based `attempt` 1 with a limit of 3 is
 * `2 of 3`; `2` when the limit is unknown; `-` when there is no attempt.
 */
export function attemptLabel(attempt: number | null | undefined, max?: number): string {
  if (attempt === null || attempt === undefined) return '-';
  return max === undefined ? String(attempt + 1) : `${attempt + 1} of ${max}`;
}

/**
 * The attempt limits of every node of a workflow version, read from its definition; `undefined`
 * when the definition cannot be read (an attempt is then shown without its limit).
 */
export async function attemptLimits(c: WeftClient, workflowId: string, version: number): Promise<AttemptLimits | undefined> {
  try {
    const r = await c.request(VERSION_DEFINITION, { id: workflowId, v: version });
    const { maxAttempts } = await import('./engine-side.js');
    const nodes = (r.workflowVersion?.definition as { nodes?: { node_id: string }[] } | undefined)?.nodes ?? [];
    return new Map(nodes.map((n) => [n.node_id, maxAttempts(n as Parameters<typeof maxAttempts>[0])]));
  } catch {
    return undefined;
  }
}

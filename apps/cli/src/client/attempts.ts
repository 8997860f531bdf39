import { operation, type WeftClient } from '@weft/client';
import type { WorkflowDefinition } from './engine-side.js';
import type { VersionDefinitionQuery, VersionDefinitionQueryVariables } from './generated/graphql.js';

/** The definition of a workflow version (the default one without `v`). */
export const VERSION_DEFINITION = operation<VersionDefinitionQuery, VersionDefinitionQueryVariables>(/* GraphQL */ `
  query VersionDefinition($id: String!, $v: Int) { workflowVersion(workflowId: $id, version: $v) { definition } }
`);

/** Node id → how many times the node may execute (its retry policy's `max_attempts`, at least 1). */
export type AttemptLimits = ReadonlyMap<string, number>;

/**
 * An attempt for people, counted from 1: the API's 0-based `attempt` 1 with a limit of 3 is
 * `2 of 3`; `2` when the limit is unknown or below the attempt (never `3 of 1`); `-` when there
 * is no attempt.
 */
export function attemptLabel(attempt: number | null | undefined, max?: number | null): string {
  if (attempt === null || attempt === undefined) return '-';
  return max === undefined || max === null || attempt + 1 > max ? String(attempt + 1) : `${attempt + 1} of ${max}`;
}

/**
 * A task's attempt for people ({@link attemptLabel}) with its own limit when a retry or resume
 * granted it more attempts (the API's `Task.attemptLimit`), else its node's from `limits`.
 */
export function taskAttemptLabel(
  t: { nodeId: string; attempt: number | null | undefined; attemptLimit?: number | null },
  limits: AttemptLimits | undefined,
): string {
  return attemptLabel(t.attempt, t.attemptLimit ?? limits?.get(t.nodeId));
}

/**
 * The attempt limits of every node of a workflow version and of its `finally` step, read from its
 * definition; `undefined` when the definition cannot be read (an attempt is then shown without
 * its limit).
 */
export async function attemptLimits(c: WeftClient, workflowId: string, version: number): Promise<AttemptLimits | undefined> {
  try {
    const r = await c.request(VERSION_DEFINITION, { id: workflowId, v: version });
    return await definitionAttemptLimits(r.workflowVersion?.definition);
  } catch {
    return undefined;
  }
}

/** The attempt limits of the nodes (those of DO_WHILE bodies too) and the `finally` step of `definition` (the API's JSON). */
export async function definitionAttemptLimits(definition: unknown): Promise<AttemptLimits> {
  const { allNodes, maxAttempts } = await import('./engine-side.js');
  const def = definition as WorkflowDefinition | undefined;
  const nodes = [...allNodes(def?.nodes), ...(def?.finally ? [def.finally] : [])];
  return new Map(nodes.map((n) => [n.node_id, maxAttempts(n as Parameters<typeof maxAttempts>[0])]));
}

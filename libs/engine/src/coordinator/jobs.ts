import type { JobSource, Transaction } from '@weft/persistence';
import { nodeJobFields, WeftError, type JsonValue, type NodeJobFields, type TaskJob } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';

/**
 * The TaskJob of a task attempt read back from the database (its stored, resolved input), with
 * the fields of its node in its run's version.
 */
export function jobOf(r: JobSource, fields: NodeJobFields): TaskJob {
  return {
    tenantId: r.tenantId,
    runId: r.runId,
    taskId: r.taskId,
    nodeId: r.nodeId,
    nodeType: r.nodeType,
    ...(r.runtime ? { runtime: r.runtime } : {}),
    attempt: r.attempt,
    queue: r.queue,
    input: (r.input as JsonValue | null) ?? {},
    notBefore: r.notBefore.getTime(),
    ...fields,
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}

/**
 * The {@link NodeJobFields} of each of `rows` (read in transaction `m`) by task id, from their
 * node in their run's version (the DAG cache); a node whose version cannot be found counts as
 * sensitive.
 */
export async function nodeFieldsOfTasks(
  ctx: CoordinatorContext,
  m: Transaction,
  tenantId: string,
  rows: readonly JobSource[],
): Promise<Map<string, NodeJobFields>> {
  const fields = new Map<string, NodeJobFields>();
  for (const row of rows) {
    const dag = await ctx.dag(m, tenantId, row.workflowId, row.version).catch((err: unknown) => {
      if (err instanceof WeftError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
    fields.set(row.taskId, nodeJobFields(dag?.getNode(row.nodeId)));
  }
  return fields;
}

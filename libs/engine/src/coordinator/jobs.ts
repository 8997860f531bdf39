import type { JobSource, Transaction } from '@weft/persistence';
import { isSensitive, WeftError, type JsonValue, type TaskJob } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';

/**
 * The TaskJob of a task attempt read back from the database (its stored, resolved input);
 * `sensitive` when its node is `sensitive: true` in its run's version.
 */
export function jobOf(r: JobSource, sensitive: boolean): TaskJob {
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
    ...(sensitive ? { sensitive: true } : {}),
    ...(r.traceparent ? { traceparent: r.traceparent } : {}),
  };
}

/**
 * Which of `rows` (read in transaction `m`) belong to a node that is `sensitive: true` in their
 * run's version, from the DAG cache, as a set of task ids; a version that cannot be found counts
 * as sensitive.
 */
export async function sensitiveTasks(ctx: CoordinatorContext, m: Transaction, tenantId: string, rows: readonly JobSource[]): Promise<Set<string>> {
  const sensitive = new Set<string>();
  for (const row of rows) {
    const dag = await ctx.dag(m, tenantId, row.workflowId, row.version).catch((err: unknown) => {
      if (err instanceof WeftError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
    if (dag ? isSensitive(dag.getNode(row.nodeId)) : true) sensitive.add(row.taskId);
  }
  return sensitive;
}

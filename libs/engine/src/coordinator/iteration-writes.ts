/**
 * The writes of the `for_each` actions that change iteration rows in bulk: SkipIterations and
 * ReopenIterations (a retry of the failed iterations). Kept apart from action-writer.ts, which
 * maps each action to its write; the statements are TaskWriteRepository's.
 */
import { expectRows, type TaskWriteRepository } from '@weft/persistence';
import { TaskStatus, type ReopenIterations, type SkipIterations } from '../index.js';
import type { TaskChangeLog } from './run-change.js';

/** Skips the WAITING iterations of `a` with its reason; every one must change. */
export async function writeSkipIterations(
  tasks: TaskWriteRepository,
  tenantId: string,
  runId: string,
  a: SkipIterations,
  now: Date,
  log: TaskChangeLog,
): Promise<void> {
  expectRows(runId, a.taskIds.length, await tasks.skipIterations(tenantId, a.taskIds, a.reason, now), `waiting iterations of ${a.nodeId} to skip`);
  for (const id of a.taskIds) log.set({ id, touch: true, status: TaskStatus.Skipped, error: a.reason, finished: true });
}

/**
 * Puts the aggregate task of `a` back to RUNNING and its iterations to run again back to WAITING
 * at their next attempt; the aggregate and every listed iteration must change. Watchers read the
 * run again (the retry's ReopenRun already asks them to).
 */
export async function writeReopenIterations(
  tasks: TaskWriteRepository,
  tenantId: string,
  runId: string,
  a: ReopenIterations,
  now: Date,
  log: TaskChangeLog,
): Promise<void> {
  const changed = await tasks.reopenIterations(tenantId, a.taskId, a.iterations, now);
  expectRows(runId, 1, changed.aggregate, `aggregate task ${a.taskId} of ${a.nodeId} to reopen`);
  expectRows(runId, a.iterations.length, changed.iterations, `failed, skipped or cancelled iterations of ${a.nodeId} to reopen`);
  log.reread = true;
}

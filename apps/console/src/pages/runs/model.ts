import type { ChildRun, Json, RunChange, RunDetail, RunSummary, Task } from './types.js';

/** A run's statuses from which it does not move on its own. */
const FINISHED_RUN = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

/** True once the run succeeded, failed, was cancelled or timed out (it can then be retried, not cancelled). */
export function isFinished(status: string): boolean {
  return FINISHED_RUN.has(status);
}

/**
 * An attempt number as people read it: the API counts Task.attempt and RunEvent.attempt from 0,
 * the CLI and the logs say "attempt 1" for a first execution, and so does the console.
 */
export function displayAttempt(attempt: number): number {
  return attempt + 1;
}

/**
 * A run's statuses while it is still going: started and not finished. A PAUSED run is one of
 * them (it holds its tasks until it is resumed or cancelled); a QUEUED run has not started.
 */
const ACTIVE_RUN = new Set(['PENDING', 'RUNNING', 'PAUSED']);

/** True while the run is started and not finished: PENDING, RUNNING or PAUSED. */
export function isActive(status: string): boolean {
  return ACTIVE_RUN.has(status);
}

/** True while the run can be cancelled: while it is active, paused included. */
export function isCancellable(status: string): boolean {
  return isActive(status);
}

/** True while the run can be paused: active and not already paused (the API refuses a finished or QUEUED run). */
export function isPausable(status: string): boolean {
  return status === 'PENDING' || status === 'RUNNING';
}

/** True while the run can be resumed: it is PAUSED. */
export function isResumable(status: string): boolean {
  return status === 'PAUSED';
}

/**
 * For DagView's `childRuns`: the child runs each SUBWORKFLOW node started, by node id, in the
 * API's order (oldest first). A child points at its parent's task (`parentTaskId` = Task.id),
 * so a for_each node gathers the children of all its iteration tasks. Children whose task is
 * not among `tasks` are left out.
 */
export function childRunsByNode(
  tasks: readonly Pick<Task, 'id' | 'nodeId'>[],
  children: readonly ChildRun[],
): Map<string, { runId: string; status: string }[]> {
  const nodeOfTask = new Map(tasks.map((t) => [t.id, t.nodeId]));
  const out = new Map<string, { runId: string; status: string }[]>();
  for (const child of children) {
    const nodeId = child.parentTaskId ? nodeOfTask.get(child.parentTaskId) : undefined;
    if (!nodeId) continue;
    let list = out.get(nodeId);
    if (!list) out.set(nodeId, (list = []));
    list.push({ runId: child.id, status: child.status });
  }
  return out;
}

/**
 * The ids of the nodes (those of DO_WHILE bodies too, and the `finally` step) a version's
 * definition marks `sensitive: true` (their input and output are never shown).
 */
export function sensitiveNodes(definition: Json | undefined): Set<string> {
  const out = new Set<string>();
  const def = definition && typeof definition === 'object' && !Array.isArray(definition) ? definition : undefined;
  if (!def || !Array.isArray(def.nodes)) return out;
  const bodies = def.nodes.flatMap((n) => {
    const spec = n && typeof n === 'object' && !Array.isArray(n) && n.type === 'DO_WHILE' ? n.spec : undefined;
    const body = spec && typeof spec === 'object' && !Array.isArray(spec) ? spec.body : undefined;
    const nodes = body && typeof body === 'object' && !Array.isArray(body) ? body.nodes : undefined;
    return Array.isArray(nodes) ? nodes : [];
  });
  // The definition's finally step is a node too.
  for (const node of [...def.nodes, ...bodies, ...(def.finally !== undefined ? [def.finally] : [])]) {
    if (node && typeof node === 'object' && !Array.isArray(node) && node.sensitive === true && typeof node.node_id === 'string') out.add(node.node_id);
  }
  return out;
}

/** The signal a WAITING task waits for (the first such task), to prefill the signal form; '' when none. */
export function awaitedSignal(tasks: readonly Pick<Task, 'status' | 'awaitedSignal'>[]): string {
  return tasks.find((t) => t.status === 'WAITING' && t.awaitedSignal)?.awaitedSignal ?? '';
}

/** The node ids of a run, each once, in the order the graph lists them (then any task-only ones). */
export function nodeIds(run: Pick<RunDetail, 'graph' | 'tasks'>): string[] {
  const ids = new Set(run.graph?.nodes.map((n) => n.id) ?? []);
  for (const t of run.tasks) ids.add(t.nodeId);
  return [...ids];
}

/**
 * The newer of two states of one run, by `seq` (the query's answer and the subscription's may
 * arrive in either order); on a tie the second one, which arrived later.
 */
export function newer<T extends { id: string; seq: number }>(a: T | null | undefined, b: T | null | undefined): T | undefined {
  if (!a) return b ?? undefined;
  if (!b || b.id !== a.id) return a;
  return b.seq >= a.seq ? b : a;
}

/** Live statuses of listed runs, from `runChanged`: the latest change seen per run. */
export type LiveStatuses = ReadonlyMap<string, RunChange>;

/** Records a change when it is newer than the one already kept for that run. */
export function recordChange(live: LiveStatuses, change: RunChange): LiveStatuses {
  const kept = live.get(change.runId);
  if (kept && kept.seq >= change.seq) return live;
  const next = new Map(live);
  next.set(change.runId, change);
  return next;
}

/** A listed run with the live status when a change newer than the row itself was seen. */
export function withLiveStatus<T extends Pick<RunSummary, 'id' | 'status' | 'seq'>>(row: T, live: LiveStatuses): T {
  const change = live.get(row.id);
  return change && change.seq > row.seq ? { ...row, status: change.status } : row;
}

/**
 * The items after a first page of `pageSize` read by `next` (given the last item read), page
 * after page while a page is full; empty when `first` is short (it held every item).
 */
export async function restOfPages<T>(first: readonly T[], pageSize: number, next: (last: T) => Promise<readonly T[]>): Promise<T[]> {
  const rest: T[] = [];
  for (let page = first; page.length >= pageSize;) {
    page = await next(page[page.length - 1]!);
    rest.push(...page);
  }
  return rest;
}

/** Iteration statuses a retry with failedIterationsOnly runs again. */
const RETRIED_ITERATION = new Set(['FAILED', 'SKIPPED', 'CANCELLED']);

/**
 * The indexes of the iterations of `for_each` node `nodeId` that "Retry failed iterations" would
 * run again (FAILED, SKIPPED or CANCELLED), ascending, from the run's iteration tasks and the
 * aggregate task's `failedIterations`; empty for a node without such iterations.
 */
export function iterationsToRetry(tasks: readonly Pick<Task, 'nodeId' | 'iteration' | 'status' | 'failedIterations'>[], nodeId: string): number[] {
  const out = new Set<number>();
  for (const t of tasks) {
    if (t.nodeId !== nodeId) continue;
    if (t.iteration == null) for (const i of t.failedIterations ?? []) out.add(i);
    else if (RETRIED_ITERATION.has(t.status)) out.add(t.iteration);
  }
  return [...out].sort((a, b) => a - b);
}

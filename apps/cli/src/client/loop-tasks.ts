import { loopIterationText } from '@weft/contract';

/**
 * How the client commands name the tasks of DO_WHILE loops. Each iteration of a loop's body
 * leaves its own task rows (Task.loopIteration, 0-based, counted from 1 for people); the loop's
 * own task carries the iteration running or last run.
 */

/** The fields of a task the names below read. */
export interface LoopTaskFields {
  nodeId: string;
  nodeType?: string | null;
  /** A for_each iteration's element index. */
  iteration?: number | null;
  loopIteration?: number | null;
}

/** True for a task of a DO_WHILE body: it has a loop iteration and is not the DO_WHILE node's own task. */
export function isBodyTask(t: LoopTaskFields): boolean {
  return t.loopIteration != null && t.nodeType !== 'DO_WHILE';
}

/**
 * A task as the CLI's tables and watch lines name it: the node id, `fan[3]` for a for_each
 * iteration, `check (iteration 2)` for a DO_WHILE body task of the 0-based iteration 1 (both for
 * a for_each node in a body). Unique among a run's tasks.
 */
export function taskName(t: LoopTaskFields): string {
  const base = t.iteration == null ? t.nodeId : `${t.nodeId}[${t.iteration}]`;
  return isBodyTask(t) ? `${base} (${loopIterationText(t.loopIteration!)})` : base;
}

/** `iteration 3` for a DO_WHILE node's own task that has started its 0-based iteration 2; '' otherwise. */
export function loopNote(t: LoopTaskFields): string {
  return t.nodeType === 'DO_WHILE' && t.loopIteration != null ? loopIterationText(t.loopIteration) : '';
}

/**
 * The key a for_each node's iteration counts are kept under: the node id, with the loop
 * iteration for a node inside a DO_WHILE body (each loop iteration runs the for_each afresh).
 */
export function countsKey(t: Pick<LoopTaskFields, 'nodeId' | 'loopIteration'>): string {
  return t.loopIteration == null ? t.nodeId : `${t.nodeId} ${t.loopIteration}`;
}

/**
 * `tasks` with each DO_WHILE loop's body tasks (tasks of a node `loopOf` places in a loop's body,
 * with a loop iteration) moved right after the loop's own task, by iteration ascending, in their
 * order within one. The API lists tasks by creation time, where a loop's task and its first body
 * task, or one iteration's last task and the next one's first, may tie and come in node id order.
 * Body tasks of a loop whose own task is not among `tasks` stay where they are.
 */
export function inLoopOrder<T extends LoopTaskFields>(tasks: readonly T[], loopOf: ReadonlyMap<string, string>): T[] {
  const loops = new Set(tasks.filter((t) => t.nodeType === 'DO_WHILE').map((t) => t.nodeId));
  const loopOfTask = (t: T) => {
    const loop = loopOf.get(t.nodeId);
    return loop !== undefined && loops.has(loop) && isBodyTask(t) ? loop : undefined;
  };
  const bodies = new Map<string, T[]>();
  for (const t of tasks) {
    const loop = loopOfTask(t);
    if (loop !== undefined) bodies.set(loop, [...(bodies.get(loop) ?? []), t]);
  }
  const out: T[] = [];
  for (const t of tasks) {
    if (loopOfTask(t) !== undefined) continue;
    out.push(t);
    const body = t.nodeType === 'DO_WHILE' ? bodies.get(t.nodeId) : undefined;
    // A stable sort: creation order within one iteration.
    if (body) out.push(...[...body].sort((a, b) => a.loopIteration! - b.loopIteration!));
    bodies.delete(t.nodeId);
  }
  return out;
}

/** How many of a loop's latest iterations `run-status` lists the body tasks of. */
export const LOOP_ITERATIONS_SHOWN = 3;

/** Where a loop's earlier iterations were left out: their body tasks' count and 0-based iteration range. */
export interface HiddenIterations {
  hidden: number;
  from: number;
  to: number;
}

/**
 * `tasks` (in {@link inLoopOrder}) with each loop's body tasks kept for its last `shown`
 * iterations only: the body tasks right after a DO_WHILE node's task are its body's, and those
 * of earlier iterations are replaced by one {@link HiddenIterations} before the rest.
 */
export function recentIterations<T extends LoopTaskFields>(tasks: readonly T[], shown: number = LOOP_ITERATIONS_SHOWN): (T | HiddenIterations)[] {
  const out: (T | HiddenIterations)[] = [];
  for (let i = 0; i < tasks.length;) {
    const t = tasks[i]!;
    out.push(t);
    i++;
    if (t.nodeType !== 'DO_WHILE') continue;
    let end = i;
    while (end < tasks.length && isBodyTask(tasks[end]!)) end++;
    const body = tasks.slice(i, end);
    const cutoff = Math.max(...body.map((b) => b.loopIteration!)) - shown + 1;
    const hidden = body.filter((b) => b.loopIteration! < cutoff);
    if (hidden.length) out.push({ hidden: hidden.length, from: Math.min(...hidden.map((b) => b.loopIteration!)), to: cutoff - 1 });
    out.push(...body.filter((b) => b.loopIteration! >= cutoff));
    i = end;
  }
  return out;
}

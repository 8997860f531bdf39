import type { Graph } from '../../api/graph.js';

/**
 * How the run page places the tasks of DO_WHILE loops: every iteration's body tasks are separate
 * tasks (Task.loopIteration, 0-based), shown under their loop's own task, grouped by iteration.
 */

/** What the run page knows of a run's loops, from its graph. */
export interface RunLoops {
  /** Body node id → the id of the DO_WHILE node whose body holds it. */
  loopOf: ReadonlyMap<string, string>;
  /** DO_WHILE node id → its max_iterations (null when not an integer). */
  maxIterations: ReadonlyMap<string, number | null>;
}

/** The loops of a run's graph (Graph.nodes' `loop` and `maxIterations`); empty without a graph. */
export function runLoops(graph: Pick<Graph, 'nodes'> | null | undefined): RunLoops {
  const loopOf = new Map<string, string>();
  const maxIterations = new Map<string, number | null>();
  for (const n of graph?.nodes ?? []) {
    if (n.type === 'DO_WHILE' && !n.loop) maxIterations.set(n.id, n.maxIterations ?? null);
    if (n.loop) loopOf.set(n.id, n.loop);
  }
  return { loopOf, maxIterations };
}

/** The fields of a task {@link taskRows} reads. */
export interface LoopTask {
  id: string;
  nodeId: string;
  loopIteration?: number | null;
}

/** A row of the task table: a task (with the loop it is a body task of), or the head of one iteration's body tasks. */
export type TaskTableRow<T extends LoopTask> =
  { kind: 'task'; task: T; loop: string | null } | { kind: 'iteration'; loop: string; iteration: number; tasks: number };

/**
 * The task table's rows: the tasks in creation order, except that a loop's body tasks (a task
 * of a node `loops.loopOf` places in a body, with a `loopIteration`) come right after the loop's
 * own task, by iteration ascending (creation order within one), each iteration headed by an
 * `iteration` row. Body tasks of a loop whose own task is not among `tasks`, or without an
 * iteration, stay where they are.
 */
export function taskRows<T extends LoopTask>(tasks: readonly T[], loops: RunLoops): TaskTableRow<T>[] {
  const present = new Set(tasks.map((t) => t.nodeId));
  const bodyLoop = (t: T) => {
    const loop = loops.loopOf.get(t.nodeId);
    return loop !== undefined && present.has(loop) && t.loopIteration != null && !loops.loopOf.has(loop) ? loop : null;
  };
  const byLoop = new Map<string, Map<number, T[]>>();
  for (const t of tasks) {
    const loop = bodyLoop(t);
    if (loop === null) continue;
    const iterations = byLoop.get(loop) ?? new Map<number, T[]>();
    byLoop.set(loop, iterations);
    iterations.set(t.loopIteration!, [...(iterations.get(t.loopIteration!) ?? []), t]);
  }
  const rows: TaskTableRow<T>[] = [];
  const placed = new Set<string>();
  for (const t of tasks) {
    if (bodyLoop(t) !== null) continue;
    rows.push({ kind: 'task', task: t, loop: loops.loopOf.get(t.nodeId) ?? null });
    // A loop's body goes after its own task's first row only (a loop has one own task).
    const iterations = placed.has(t.nodeId) ? undefined : byLoop.get(t.nodeId);
    placed.add(t.nodeId);
    if (!iterations) continue;
    for (const i of [...iterations.keys()].sort((a, b) => a - b)) {
      const group = iterations.get(i)!;
      rows.push({ kind: 'iteration', loop: t.nodeId, iteration: i, tasks: group.length });
      for (const task of group) rows.push({ kind: 'task', task, loop: t.nodeId });
    }
  }
  return rows;
}

/** How many of a loop's latest iterations the task table shows until the earlier ones are asked for. */
export const ITERATIONS_SHOWN = 3;

/** The row standing in for a loop's earlier iterations: how many, with how many tasks. */
export interface EarlierIterationsRow {
  kind: 'earlier';
  loop: string;
  iterations: number;
  tasks: number;
}

/**
 * `rows` ({@link taskRows}) with each loop's iterations before its last `shown` left out, unless
 * the loop is in `expanded`: one `earlier` row stands in for them, right before the first
 * iteration shown.
 */
export function recentIterations<T extends LoopTask>(
  rows: readonly TaskTableRow<T>[],
  expanded: ReadonlySet<string>,
  shown: number = ITERATIONS_SHOWN,
): (TaskTableRow<T> | EarlierIterationsRow)[] {
  const last = new Map<string, number>();
  for (const r of rows) if (r.kind === 'iteration') last.set(r.loop, Math.max(last.get(r.loop) ?? 0, r.iteration));
  const hidden = (loop: string, iteration: number) => !expanded.has(loop) && iteration <= last.get(loop)! - shown;
  const out: (TaskTableRow<T> | EarlierIterationsRow)[] = [];
  const earlier = new Map<string, EarlierIterationsRow>();
  let current: { loop: string; hidden: boolean } | null = null;
  for (const r of rows) {
    if (r.kind === 'iteration') {
      current = { loop: r.loop, hidden: hidden(r.loop, r.iteration) };
      if (!current.hidden) {
        out.push(r);
        continue;
      }
      let row = earlier.get(r.loop);
      if (!row) {
        earlier.set(r.loop, (row = { kind: 'earlier', loop: r.loop, iterations: 0, tasks: 0 }));
        out.push(row);
      }
      row.iterations++;
      row.tasks += r.tasks;
      continue;
    }
    if (r.loop === null || current?.loop !== r.loop) current = null;
    if (!current?.hidden) out.push(r);
  }
  return out;
}

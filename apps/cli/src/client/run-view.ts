import { operation, type WeftClient } from '@weft/client';
import { decisionText } from '@weft/contract';
import { taskAttemptLabel, type AttemptLimits } from './attempts.js';
import type {
  ParentRunQuery,
  ParentRunQueryVariables,
  RunStatusQuery,
  RunStatusQueryVariables,
  RunStatusTaskFieldsFragment,
  RunStatusTasksPageQuery,
  RunStatusTasksPageQueryVariables,
} from './generated/graphql.js';
import { labelsText } from './label-arguments.js';
import { cell, clip, fields, table, took, when } from './output.js';
import { RUN_PAGE, restOfPages } from './run-pages.js';
import { countsKey, inLoopOrder, isBodyTask, loopNote, recentIterations, taskName } from './loop-tasks.js';
import { iterationSummaries, type TaskRow } from './run-watch.js';
import { held, HELD_SHOWN, waitText } from './wait-text.js';

/** The fields `run-status` reads of each task. */
const RUN_STATUS_TASK_FIELDS = /* GraphQL */ `
  fragment RunStatusTaskFields on Task {
    id nodeId nodeType status attempt attemptLimit input output error branches wakeAt awaitedSignal iteration loopIteration queue waitReason waitDetail createdAt updatedAt finishedAt
    decision { branches default defaultTaken conditions { to condition value } }
  }
`;

/**
 * What `run-status` reads of a run: the whole run, the first page of its tasks (the rest are read
 * page by page), and its place among parent and child runs.
 */
export const RUN_STATUS = operation<RunStatusQuery, RunStatusQueryVariables>(/* GraphQL */ `
  query RunStatus($id: ID!, $page: Int!) {
    run(id: $id) {
      id status workflowId version input config output error startNodeId idempotencyKey labels
      parentRunId parentTaskId depth seq priority concurrencyKey waitReason waitDetail pausedAt pauseReason deadlineAt createdAt updatedAt finishedAt
      tasks(first: $page) { ...RunStatusTaskFields }
      children { id workflowId status parentTaskId }
      graph { nodes { id loop } }
    }
  }
  ${RUN_STATUS_TASK_FIELDS}
`);

const RUN_STATUS_TASKS_PAGE = operation<RunStatusTasksPageQuery, RunStatusTasksPageQueryVariables>(/* GraphQL */ `
  query RunStatusTasksPage($id: ID!, $after: ID, $page: Int!) { run(id: $id) { tasks(first: $page, after: $after) { ...RunStatusTaskFields } } }
  ${RUN_STATUS_TASK_FIELDS}
`);

/** The parent of a child run, as `run-status` shows it. */
export const PARENT_RUN = operation<ParentRunQuery, ParentRunQueryVariables>(/* GraphQL */ `
  query ParentRun($id: ID!) { run(id: $id) { id workflowId status } }
`);

/** A run as {@link RUN_STATUS} reads it. */
export type RunStatusRun = NonNullable<RunStatusQuery['run']>;

/** The parent of a child run, as `run-status` shows it. */
export type ParentRun = NonNullable<ParentRunQuery['run']>;

/** The tasks of run `runId` after the first page `first` (read with {@link RUN_STATUS}), page by page. */
export function restOfStatusTasks(c: WeftClient, runId: string, first: readonly RunStatusTaskFieldsFragment[]): Promise<RunStatusTaskFieldsFragment[]> {
  return restOfPages(first, async (last) => (await c.request(RUN_STATUS_TASKS_PAGE, { id: runId, after: last.id, page: RUN_PAGE })).run!.tasks);
}

/**
 * What `run-status` prints of a run read with {@link RUN_STATUS}: the run with one entry per
 * node's own task (not per iteration); a for_each node's entry adds `iterations` (its counts),
 * `iterationTasks` (every iteration task as read, by index: status, attempt, error, why a
 * QUEUED one waits…) and `failedIterations` (index, attempt and error of each failed one). `parent` (id, workflow,
 * status, the starting task's id) and `children` (id, workflow, status, the node that started
 * each) are there only when the run has them; `depth` only for a child run. Attempts are the
 * API's, 0-based. A DO_WHILE loop's body tasks (each with its `loopIteration`) come right after
 * the loop's own task, by iteration (the run's graph says which nodes are in a body).
 */
export function runStatusView(run: RunStatusRun, parent: ParentRun | null): Record<string, unknown> {
  const { tasks, children, parentRunId, parentTaskId, depth, graph, ...rest } = run;
  const loopOf = new Map((graph?.nodes ?? []).flatMap((n) => (n.loop ? [[n.id, n.loop] as const] : [])));
  const summaries = iterationSummaries(tasks as TaskRow[]);
  const nodeOfTask = new Map<string, string>();
  for (const t of tasks as TaskRow[]) if (t.iteration == null && t.id) nodeOfTask.set(t.id, t.nodeId);
  const view: Record<string, unknown> = {
    ...rest,
    tasks: inLoopOrder(
      (tasks as TaskRow[]).filter((t) => t.iteration == null),
      loopOf,
    ).map(({ id: _id, iteration: _iteration, ...t }) => {
      const iterations = summaries.get(countsKey(t));
      if (!iterations) return t;
      const own = (tasks as TaskRow[]).filter((i) => countsKey(i) === countsKey(t) && i.iteration != null);
      const failed = own
        .filter((i) => i.status === 'FAILED')
        .map((i) => ({ iteration: i.iteration, attempt: i.attempt, attemptLimit: i.attemptLimit, error: i.error }));
      const iterationTasks = own.map(({ nodeId: _n, nodeType: _t, ...i }: TaskRow & { nodeType?: string }) => i);
      return { ...t, iterations, iterationTasks, ...(failed.length ? { failedIterations: failed } : {}) };
    }),
  };
  if (parentRunId) {
    view.depth = depth;
    view.parent = { id: parentRunId, workflowId: parent?.workflowId ?? null, status: parent?.status ?? null, taskId: parentTaskId };
  }
  if (children?.length) {
    view.children = children.map((c: { id: string; workflowId: string; status: string; parentTaskId: string | null }) => ({
      id: c.id,
      workflowId: c.workflowId,
      status: c.status,
      nodeId: (c.parentTaskId && nodeOfTask.get(c.parentTaskId)) ?? null,
    }));
  }
  return view;
}

/** Node types whose tasks execute, with attempts and retries: the others resolve inline or wait. */
const EXECUTING_TYPES = ['HTTP', 'CODE', 'SUBWORKFLOW'];

/**
 * Whether a task's attempt means something to people: it executes (or starts a child run) and
 * is not a for_each aggregate (whose iterations have the attempts) nor a skipped task.
 */
function executes(t: { nodeType?: string; status: string; iterations?: string }): boolean {
  return (t.nodeType === undefined || EXECUTING_TYPES.includes(t.nodeType)) && !t.iterations && t.status !== 'SKIPPED';
}

/** Longest run output or error `run-status` shows in its table form (the rest: `-o json`). */
const SHOWN_CHARS = 300;

/**
 * The detail of a node's row: its error, a SWITCH's `no branch taken: conditions evaluated: …`,
 * `default taken: <id>` or `taken: <id>, <id>` (the branches it selected), why it waits, the
 * awaited signal or when it wakes.
 */
function detail(t: any): string {
  if (t.error) return clip(cell(t.error), SHOWN_CHARS);
  const decided = t.decision ? (decisionText(t.decision) ?? `taken: ${(t.decision.branches as string[]).join(', ')}`) : undefined;
  if (decided) return clip(cell(decided), SHOWN_CHARS);
  if (t.waitDetail) return waitText(t);
  if (t.awaitedSignal) return `waiting for signal ${cell(t.awaitedSignal)}`;
  return t.wakeAt && t.status === 'WAITING' ? `wakes at ${when(t.wakeAt)}` : '';
}

/**
 * The table form of {@link runStatusView}: the run's fields (a run not ended says how long it
 * has been running, or queued; a PAUSED one since when and why), then one row per node (status, attempt 1-based with the node's
 * limit from `limits`, iteration counts, the awaited signal or the error; `-` for a task that
 * does not execute; a DO_WHILE node's ITERATIONS says `iteration 3`, and its body's tasks of its
 * last LOOP_ITERATIONS_SHOWN iterations follow, named `  check (iteration 2)`, after a row saying
 * which earlier iterations were left out), each for_each node followed by its held iterations (`  node[i]`, why each
 * waits; the first {@link HELD_SHOWN}, then `… and N more held`), then the failed iterations and
 * the child runs. `now` (ms since the epoch) dates a run still going.
 */
export function runStatusTable(view: Record<string, any>, limits: AttemptLimits | undefined, now: number): string {
  const going = view.status === 'QUEUED' ? 'queued' : 'running';
  const head: [string, string][] = [
    ['run', view.id],
    ['workflow', `${cell(view.workflowId)} version ${view.version}`],
    ['status', view.status],
    ['created', when(view.createdAt)],
    [
      'finished',
      view.finishedAt ? `${when(view.finishedAt)} (took ${took(view.createdAt, view.finishedAt, now)})` : `- (${going} for ${took(view.createdAt, null, now)})`,
    ],
  ];
  if (view.priority !== undefined) head.push(['priority', String(view.priority)]);
  if (view.labels && Object.keys(view.labels).length > 0) head.push(['labels', cell(labelsText(view.labels))]);
  if (view.concurrencyKey != null) head.push(['concurrency key', view.concurrencyKey === '' ? '""' : cell(view.concurrencyKey)]);
  if (view.waitDetail) head.push(['waiting', waitText(view)]);
  if (view.status === 'PAUSED') head.push(['paused', `since ${when(view.pausedAt)}${view.pauseReason ? `: ${cell(view.pauseReason)}` : ''}`]);
  // The deadline of a run still going (a finished run's error says whether it was the end of it).
  if (view.deadlineAt && !view.finishedAt) head.push(['deadline', when(view.deadlineAt)]);
  if (view.error) head.push(['error', clip(cell(view.error), SHOWN_CHARS)]);
  if (view.status === 'SUCCEEDED') head.push(['output', clip(cell(view.output), SHOWN_CHARS)]);
  if (view.parent) head.push(['parent', `${view.parent.id} (${cell(view.parent.workflowId)}, ${cell(view.parent.status)}), depth ${view.depth}`]);
  const rows = recentIterations(view.tasks as any[]).flatMap((t) => {
    if ('hidden' in t) {
      const span = t.from === t.to ? `iteration ${t.from + 1}` : `iterations ${t.from + 1} to ${t.to + 1}`;
      return [['  …', '', '', '', `${span} not shown (${t.hidden} ${t.hidden === 1 ? 'task' : 'tasks'}; -o json lists every task)`]];
    }
    // A DO_WHILE body task is indented under its loop's row and named with its iteration.
    const name = isBodyTask(t) ? `  ${cell(taskName(t))}` : cell(t.nodeId);
    const row = [name, t.status, executes(t) ? taskAttemptLabel(t, limits) : '-', t.iterations ? cell(t.iterations) : loopNote(t), detail(t)];
    const holds = ((t.iterationTasks ?? []) as TaskRow[]).filter(held);
    const shown = holds
      .slice(0, HELD_SHOWN)
      .map((i) => [`  ${cell(t.nodeId)}[${i.iteration}]`, i.status, taskAttemptLabel({ ...i, nodeId: t.nodeId }, limits), '', detail(i)]);
    const more = holds.length > HELD_SHOWN ? [['', '', '', '', `… and ${holds.length - HELD_SHOWN} more held (-o json lists every iteration)`]] : [];
    return [row, ...shown, ...more];
  });
  let out = `${fields(head)}\n${table(['NODE', 'STATUS', 'ATTEMPT', 'ITERATIONS', 'DETAIL'], rows)}`;
  const failed = (view.tasks as any[]).flatMap((t) =>
    (t.failedIterations ?? []).map((i: any) => [
      `${cell(t.nodeId)}[${i.iteration}]`,
      taskAttemptLabel({ ...i, nodeId: t.nodeId }, limits),
      clip(cell(i.error), SHOWN_CHARS),
    ]),
  );
  if (failed.length) out += `\n${table(['FAILED ITERATION', 'ATTEMPT', 'ERROR'], failed)}`;
  if (view.children?.length) {
    out += `\n${table(
      ['CHILD RUN', 'WORKFLOW', 'STATUS', 'NODE'],
      (view.children as any[]).map((c) => [c.id, cell(c.workflowId), c.status, cell(c.nodeId)]),
    )}`;
  }
  return out;
}

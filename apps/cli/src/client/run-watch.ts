import { operation, type WeftClient } from '@weft/client';
import { EXIT } from '../exit-codes.js';
import { attemptLimits, taskAttemptLabel, type AttemptLimits } from './attempts.js';
import type {
  WatchRunSubscription,
  WatchRunSubscriptionVariables,
  WatchTaskFieldsFragment,
  WatchTasksPageQuery,
  WatchTasksPageQueryVariables,
} from './generated/graphql.js';
import { escapeControls, formatData, jsonText, type OutputFormat } from './output.js';
import { RUN_PAGE, restOfPages } from './run-pages.js';
import { countsKey, loopNote, taskName, type LoopTaskFields } from './loop-tasks.js';
import { held, HELD_SHOWN, waitText } from './wait-text.js';

/** The task fields a watch reads of each update (`id`: the cursor of the next page of tasks). */
const WATCH_TASK_FIELDS = /* GraphQL */ `
  fragment WatchTaskFields on Task { id nodeId nodeType status attempt attemptLimit output error awaitedSignal iteration loopIteration waitReason waitDetail }
`;

/**
 * The run fields a watch reads from each update (also what `-o json` prints of each update): the
 * first page of tasks (`$page`: {@link RUN_PAGE}); the rest are read page by page after an update
 * whose page is full.
 */
export const WATCH_RUN = operation<WatchRunSubscription, WatchRunSubscriptionVariables>(/* GraphQL */ `
  subscription WatchRun($id: ID!, $page: Int!) {
    runUpdated(runId: $id) {
      id status workflowId version input output error waitReason waitDetail pausedAt pauseReason createdAt finishedAt
      tasks(first: $page) { ...WatchTaskFields }
    }
  }
  ${WATCH_TASK_FIELDS}
`);

const WATCH_TASKS_PAGE = operation<WatchTasksPageQuery, WatchTasksPageQueryVariables>(/* GraphQL */ `
  query WatchTasksPage($id: ID!, $after: ID, $page: Int!) { run(id: $id) { tasks(first: $page, after: $after) { ...WatchTaskFields } } }
  ${WATCH_TASK_FIELDS}
`);

/** A run as a watch reads it from each update. */
export type WatchedRun = WatchRunSubscription['runUpdated'];

/** The run statuses after which a run changes no more (PAUSED is not one: a paused run goes on after its resume). */
export const FINAL_RUN_STATUSES = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** A task as the client commands read it; `iteration` is set on a for_each node's iteration tasks. */
export type TaskRow = Omit<WatchTaskFieldsFragment, 'id' | 'output' | 'waitReason' | 'waitDetail'> &
  Partial<Pick<WatchTaskFieldsFragment, 'id' | 'output' | 'waitReason' | 'waitDetail'>>;

const COUNT_ORDER = ['COMPLETED', 'RUNNING', 'QUEUED', 'PENDING', 'WAITING', 'FAILED', 'CANCELLED', 'SKIPPED'];

/**
 * Node id (with the loop iteration for a node in a DO_WHILE body, see countsKey) -> `×5: 3
 * completed, 1 running, 1 failed` (the number of iterations, then each non-zero count per
 * status) for every node with iteration tasks; nodes without any are absent.
 */
export function iterationSummaries(tasks: readonly (Pick<TaskRow, 'nodeId' | 'status' | 'iteration'> & LoopTaskFields)[]): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const t of tasks) {
    if (t.iteration == null) continue;
    const byStatus = counts.get(countsKey(t)) ?? new Map<string, number>();
    counts.set(countsKey(t), byStatus.set(t.status, (byStatus.get(t.status) ?? 0) + 1));
  }
  const rank = (s: string) => (COUNT_ORDER.includes(s) ? COUNT_ORDER.indexOf(s) : COUNT_ORDER.length);
  return new Map(
    [...counts].map(([nodeId, byStatus]) => {
      const statuses = [...byStatus.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
      const total = [...byStatus.values()].reduce((n, c) => n + c, 0);
      return [nodeId, `×${total}: ${statuses.map((st) => `${byStatus.get(st)} ${st.toLowerCase()}`).join(', ')}`];
    }),
  );
}

/**
 * Follows a run over the `runUpdated` subscription until it ends; resolves the final run (read
 * with {@link WATCH_RUN}), or `undefined` when the subscription ended first. An update whose
 * first page of tasks is full has the rest read page by page (as they are then) before it is
 * shown, so a for_each node's counts cover all its iterations; updates are shown in order.
 *
 * With `format` `table`, prints one line per task change: `node: STATUS (notes)` (a DO_WHILE
 * body task named `node (iteration 2)`, each iteration's its own line), the notes being a
 * DO_WHILE node's iteration (`iteration 3`, a new line when it moves on), a for_each node's iteration counts (a new line when they change), the attempt from the
 * second one on, 1-based with the node's limit when `limits` has it (`attempt 2 of 3`), the
 * awaited signal while it waits, why a QUEUED task waits (`RATE_LIMIT: rate limit …`), and the
 * error. An iteration gets a line of its own, as `node[i]`, when it fails, and when it is held
 * (QUEUED with a reason) or why it is held changes: at most {@link HELD_SHOWN} of a node per
 * update, then `node: … and N more iterations held`. A QUEUED run gets
 * a `run:` line each time why it waits changes, and one when it leaves the queue; a PAUSED run
 * one with its pause reason, and one when it is resumed (a watch follows a paused run: it has
 * not ended). With `json` or `yaml`, prints every update whole: one JSON object per line, or one YAML
 * document each (`---`); attempts there are the API's, 0-based.
 * @throws a WeftApiError when a page of tasks cannot be read (the subscription is then closed).
 */
export async function watchRun(c: WeftClient, runId: string, limits?: AttemptLimits, format: OutputFormat = 'table'): Promise<WatchedRun | undefined> {
  const seen = new Map<string, string>();
  let last: WatchedRun | undefined;
  let shown: Promise<void> = Promise.resolve();
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const show = async (run: WatchedRun): Promise<void> => {
    if ((run.tasks?.length ?? 0) >= RUN_PAGE) {
      run.tasks = await restOfPages(run.tasks, async (t) => (await c.request(WATCH_TASKS_PAGE, { id: runId, after: t.id, page: RUN_PAGE })).run!.tasks);
    }
    last = run;
    if (format === 'json') process.stdout.write(`${jsonText(run)}\n`);
    else if (format === 'yaml') process.stdout.write(`---\n${formatData('yaml', run)}`);
    else {
      printRunWait(run, seen);
      printChanges(run.tasks, seen, limits);
    }
  };
  const sub = c.subscribe(WATCH_RUN, { id: runId, page: RUN_PAGE }, (data) => {
    const run = data.runUpdated;
    shown = shown
      .then(() => show(run))
      .catch((err: unknown) => {
        sub.dispose();
        fail(err);
      });
    return !FINAL_RUN_STATUSES.includes(run.status);
  });
  failed.catch(() => undefined);
  await Promise.race([sub.done, failed]);
  await Promise.race([shown, failed]);
  return last;
}

/** Seen-map key of the run's own line (a node id cannot hold a space). */
const RUN_LINE = 'run status';

/**
 * Prints `run: QUEUED (REASON: detail)` when a QUEUED run's wait changes, `run: PAUSED (reason)`
 * when the run is paused or its pause reason changes, and `run: STATUS` once it leaves the queue
 * or is resumed; a run that never waited nor paused prints nothing here.
 */
function printRunWait(
  run: { status: string; waitReason?: string | null; waitDetail?: string | null; pauseReason?: string | null },
  seen: Map<string, string>,
): void {
  const before = seen.get(RUN_LINE);
  const paused = run.status === 'PAUSED';
  if (!run.waitDetail && !paused && before === undefined) return;
  const key = run.status === 'QUEUED' || paused || run.waitDetail ? `${run.status}#${run.waitDetail ?? ''}#${run.pauseReason ?? ''}` : 'going';
  if (before === key) return;
  seen.set(RUN_LINE, key);
  const why = paused ? (run.pauseReason ?? '') : waitText(run);
  process.stdout.write(`${escapeControls(`run: ${run.status}${why ? ` (${why})` : ''}`)}\n`);
}

/** Prints a line for each task whose state changed since `seen` (which it updates), its texts' control characters escaped. */
export function printChanges(tasks: TaskRow[], seen: Map<string, string>, limits: AttemptLimits | undefined): void {
  const summaries = iterationSummaries(tasks);
  const holds = new Map<string, number>();
  for (const t of tasks) {
    const name = taskName(t);
    if (t.iteration != null && t.status !== 'FAILED') {
      // A held iteration: a line when why it is held changes, a few per node and update.
      if (!held(t)) {
        seen.delete(name);
        continue;
      }
      const key = `${t.status}#${t.attempt}#${t.waitDetail}`;
      if (seen.get(name) === key) continue;
      seen.set(name, key);
      const n = (holds.get(t.nodeId) ?? 0) + 1;
      holds.set(t.nodeId, n);
      if (n > HELD_SHOWN) continue;
    }
    const iterations = t.iteration == null ? summaries.get(countsKey(t)) : undefined;
    const loop = loopNote(t);
    const key = `${t.status}#${t.attempt}#${t.error ?? ''}#${iterations ?? ''}#${t.waitDetail ?? ''}#${loop}`;
    if (t.iteration == null || t.status === 'FAILED') {
      if (seen.get(name) === key) continue;
      seen.set(name, key);
    }
    const notes = [
      loop,
      iterations ?? '',
      t.attempt > 0 ? `attempt ${taskAttemptLabel(t, limits)}` : '',
      t.awaitedSignal && t.status === 'WAITING' ? `waiting for signal "${t.awaitedSignal}"` : '',
      waitText(t),
      t.error ? `error: ${t.error}` : '',
    ].filter(Boolean);
    // An error, a signal's name or a wait's detail is the tenant's text: it must not drive the terminal.
    process.stdout.write(`${escapeControls(`${name}: ${t.status}${notes.length ? ` (${notes.join('; ')})` : ''}`)}\n`);
  }
  for (const [nodeId, n] of holds) if (n > HELD_SHOWN) process.stdout.write(`${nodeId}: … and ${n - HELD_SHOWN} more iterations held\n`);
}

/**
 * Watches a run of `workflowId` at `version` to its end ({@link watchRun}, with the attempt
 * limits of that version); in `table` format then prints the outcome `{status, output, error}`
 * as JSON. Sets the exit code {@link EXIT}.runNotSucceeded (3) unless the run succeeded.
 * @throws Error when the subscription ends before the run does; a WeftApiError from the API
 *   (e.g. NOT_FOUND).
 */
export async function watchAndReport(c: WeftClient, run: { id: string; workflowId: string; version: number }, format: OutputFormat = 'table'): Promise<void> {
  const limits = format === 'table' ? await attemptLimits(c, run.workflowId, run.version) : undefined;
  const final = await watchRun(c, run.id, limits, format);
  if (!final || !FINAL_RUN_STATUSES.includes(final.status)) throw new Error(`the API ended the subscription before run ${run.id} finished`);
  if (format === 'table') process.stdout.write(`${jsonText({ status: final.status, output: final.output, error: final.error }, 2)}\n`);
  if (final.status !== 'SUCCEEDED') process.exitCode = EXIT.runNotSucceeded;
}

import type { Command } from 'commander';
import type { WorkflowDefinition } from './engine-side.js';
import { operation, WeftApiError, type WeftClient } from '@weft/client';
import { EXIT } from '../exit-codes.js';
import { VERSION_DEFINITION } from './attempts.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  LogTaskFieldsFragment,
  LogUpdatesSubscription,
  LogUpdatesSubscriptionVariables,
  RunLogsQuery,
  RunLogsQueryVariables,
  RunVersionOfLogsQuery,
  RunVersionOfLogsQueryVariables,
} from './generated/graphql.js';
import { taskName } from './loop-tasks.js';
import { escapeControls } from './output.js';
import { RUN_PAGE } from './run-pages.js';
import { FINAL_RUN_STATUSES } from './run-watch.js';

/** The task fields `weft logs` reads: each task's stored attempts with their logs. */
const LOG_TASK_FIELDS = /* GraphQL */ `
  fragment LogTaskFields on Task { id nodeId nodeType iteration loopIteration attempts { attempt logs } }
`;

/** One page of the run's tasks with their attempts' logs, and the run's status. */
const RUN_LOGS = operation<RunLogsQuery, RunLogsQueryVariables>(/* GraphQL */ `
  query RunLogs($id: ID!, $after: ID, $page: Int!) { run(id: $id) { status tasks(first: $page, after: $after) { ...LogTaskFields } } }
  ${LOG_TASK_FIELDS}
`);

const RUN_VERSION_OF_LOGS = operation<RunVersionOfLogsQuery, RunVersionOfLogsQueryVariables>(/* GraphQL */ `
  query RunVersionOfLogs($id: ID!) { run(id: $id) { workflowId version } }
`);

/** What `logs --follow` reads of each update: enough to tell when an attempt ended. */
const LOG_UPDATES = operation<LogUpdatesSubscription, LogUpdatesSubscriptionVariables>(/* GraphQL */ `
  subscription LogUpdates($id: ID!, $page: Int!) { runUpdated(runId: $id) { status tasks(first: $page) { id status attempt } } }
`);

/** The node types a worker runs, whose attempts have logs. */
const WORKER_NODE_TYPES = new Set(['HTTP', 'CODE']);

/** A task as `weft logs` reads it. */
type LogTask = LogTaskFieldsFragment;

/** What {@link newLogLines} reads of a task: the loop fields only matter for a DO_WHILE body task. */
type LoggedTask = Omit<LogTask, 'nodeType' | 'loopIteration'> & Partial<Pick<LogTask, 'nodeType' | 'loopIteration'>>;

/**
 * The lines of the attempts of `tasks` not in `printed` (keys `taskId#attempt`, added to it),
 * task by task, oldest attempt first; attempts without logs print nothing. With `prefix`, each
 * line starts with `[node #attempt] ` (`[node[i] #attempt] ` for a for_each iteration,
 * `[node (iteration 2) #attempt] ` for a DO_WHILE body task), the
 * attempt counted from 1, as people count executions (the API's `attempt` + 1). A line ends at
 * `\n` or `\r\n`; every other control character (a terminal escape, a lone `\r`) but the tab
 * is shown escaped ({@link escapeControls}), so that what an attempt printed cannot drive the
 * terminal nor write over the lines before it.
 */
export function newLogLines(tasks: readonly LoggedTask[], printed: Set<string>, prefix: boolean): string {
  let out = '';
  for (const t of tasks) {
    for (const a of t.attempts) {
      const key = `${t.id}#${a.attempt}`;
      if (printed.has(key) || a.logs === null) continue;
      printed.add(key);
      const name = taskName(t);
      const lines = a.logs.replace(/\r?\n$/, '').split(/\r?\n/);
      out += lines.map((l) => (prefix ? `[${name} #${a.attempt + 1}] ${escapeControls(l, '\t')}\n` : `${escapeControls(l, '\t')}\n`)).join('');
    }
  }
  return out;
}

/**
 * The run's status and its tasks (of node `node`, when given) with their attempts, every page. A
 * page whose logs pass the API's bound on one answer (WEFT_MAX_RESPONSE_BYTES: up to 64 KiB per
 * attempt, 100 attempts per task) is asked again at half the size, down to one task.
 */
async function readLogs(c: WeftClient, runId: string, node: string | undefined): Promise<{ status: string; tasks: LogTask[] }> {
  const tasks: LogTask[] = [];
  let status: string;
  let size = RUN_PAGE;
  for (let after: string | null = null; ;) {
    let page: LogTask[];
    try {
      const run = (await c.request(RUN_LOGS, { id: runId, after, page: size })).run!;
      status = run.status;
      page = run.tasks;
    } catch (err) {
      if (size > 1 && err instanceof WeftApiError && err.code === 'BAD_USER_INPUT' && /response too large/.test(err.message)) {
        size = Math.ceil(size / 2);
        continue;
      }
      throw err;
    }
    tasks.push(...page);
    if (page.length < size) break;
    after = page[page.length - 1]!.id;
  }
  return { status, tasks: node === undefined ? tasks : tasks.filter((t) => t.nodeId === node) };
}

/** A worker node (HTTP, CODE) of a definition; `inLoop` for one in a DO_WHILE body, whose tasks repeat per iteration. */
export interface WorkerNode {
  id: string;
  inLoop: boolean;
}

/**
 * The worker nodes among `placed` (a definition's nodes with their paths, those of DO_WHILE
 * bodies included: the engine's placedNodes), in definition order.
 */
export function workerNodesOf(placed: readonly { node: { node_id: string; type: string }; path: string }[]): WorkerNode[] {
  return placed
    .filter((p) => WORKER_NODE_TYPES.has(String(p.node.type ?? '').toUpperCase()))
    .map((p) => ({ id: String(p.node.node_id), inLoop: p.path.includes('.spec.body.') }));
}

/** The worker nodes of the run's definition; undefined when it cannot be read. */
async function workerNodes(c: WeftClient, runId: string): Promise<WorkerNode[] | undefined> {
  try {
    const run = (await c.request(RUN_VERSION_OF_LOGS, { id: runId })).run!;
    const r = await c.request(VERSION_DEFINITION, { id: run.workflowId, v: run.version });
    const { placedNodes } = await import('./engine-side.js');
    return workerNodesOf(placedNodes((r.workflowVersion?.definition as WorkflowDefinition | undefined)?.nodes));
  } catch {
    return undefined;
  }
}

/**
 * Prints the logs of run `runId`'s attempts (of node `node` only, when given); with `follow`,
 * then follows the run over the `runUpdated` subscription and prints each attempt's logs once it
 * ends, until the run ends (exit code {@link EXIT}.runNotSucceeded unless it succeeded).
 * @throws a WeftApiError from the API (NOT_FOUND for an unknown run or another tenant's)
 */
export async function printLogs(c: WeftClient, runId: string, node: string | undefined, follow: boolean): Promise<void> {
  const printed = new Set<string>();
  const workers = await workerNodes(c, runId);
  // A mistyped --node would print nothing and succeed, as a node that printed nothing does.
  const chosen = node === undefined ? undefined : workers?.find((w) => w.id === node);
  if (node !== undefined && workers !== undefined && !chosen) {
    throw new Error(
      `run ${runId} has no HTTP or CODE node ${JSON.stringify(node)}, so no logs${workers.length ? `; its nodes with logs: ${workers.map((w) => w.id).join(', ')}` : ''}`,
    );
  }
  // A node of a loop's body has a task per iteration: its lines keep the prefix that names it.
  const prefix = node === undefined ? workers?.length !== 1 || workers[0]!.inLoop : chosen?.inLoop === true;
  let status = '';
  const show = async (): Promise<void> => {
    const read = await readLogs(c, runId, node);
    status = read.status;
    process.stdout.write(newLogLines(read.tasks, printed, prefix));
  };
  if (!follow) {
    await show();
    return;
  }
  let shown: Promise<void> = Promise.resolve();
  let failure: unknown;
  // An update that changes no task's status or attempt ends no attempt: no read of the logs.
  let seen = '';
  const changed = (run: { tasks: { id: string; status: string; attempt: number }[] }): boolean => {
    if (run.tasks.length >= RUN_PAGE) return true;
    const state = run.tasks.map((t) => `${t.id}:${t.status}:${t.attempt}`).join(',');
    if (state === seen) return false;
    seen = state;
    return true;
  };
  // Subscribed before the first read: an attempt that ends meanwhile is read by the next update.
  const sub = c.subscribe(LOG_UPDATES, { id: runId, page: RUN_PAGE }, (data) => {
    const final = FINAL_RUN_STATUSES.includes(data.runUpdated.status);
    if (!final && !changed(data.runUpdated)) return true;
    shown = shown.then(show).catch((err: unknown) => {
      failure ??= err;
      sub.dispose();
    });
    return !final;
  });
  shown = shown.then(show).catch((err: unknown) => {
    failure ??= err;
    sub.dispose();
  });
  await shown;
  if (!failure && FINAL_RUN_STATUSES.includes(status)) sub.dispose();
  else await sub.done;
  await shown;
  if (failure) throw failure;
  // The last update may have come before the final read: read once more to miss nothing.
  if (!FINAL_RUN_STATUSES.includes(status)) await show();
  if (!FINAL_RUN_STATUSES.includes(status)) throw new Error(`the API ended the subscription before run ${runId} finished`);
  if (status !== 'SUCCEEDED') process.exitCode = EXIT.runNotSucceeded;
}

/** Registers `logs`: the logs of a run's attempts, once or followed live. */
export function logsCommand(program: Command): void {
  withConnection(program.command('logs <runId>'))
    .description(
      "print what a run's attempts printed or did (a CODE node's output, at most its last 64 KiB each; an HTTP node's requests); with several nodes each line starts with [node #attempt], attempts counted from 1 (#1 is the first execution); control characters but the tab are shown escaped",
    )
    .option('--node <nodeId>', 'only the attempts of this node')
    .option('-f, --follow', 'then follow the run live, printing each attempt once it ends, until the run ends (exit code 3 unless it succeeds)')
    .action(async (runId: string, o: ConnectionFlags & { node?: string; follow?: boolean }) => {
      await withClient(o, (c) => printLogs(c, runId, o.node, o.follow ?? false));
    });
}

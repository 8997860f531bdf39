import { Option, type Command } from 'commander';
import { operation, type WeftClient } from '@weft/client';
import { RUNS_PAGE_MAX } from '@weft/contract';
import { positiveInt } from './arguments.js';
import { attemptLimits } from './attempts.js';
import { labelsText } from './label-arguments.js';
import { runFilterOf, withRunFilter, type RunFilterFlags } from './run-filter-flags.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import { usageError } from '../exit-codes.js';
import type {
  RunListQuery,
  RunListQueryVariables,
  RunMermaidQuery,
  RunMermaidQueryVariables,
  RunVersionQuery,
  RunVersionQueryVariables,
} from './generated/graphql.js';
import { cell, printAs, table, took, when, withOutput, type OutputFormat } from './output.js';
import { grantedLimits, historyTable, restOfHistory, RUN_HISTORY, type HistoryEvent } from './run-history.js';
import { RUN_PAGE } from './run-pages.js';
import { PARENT_RUN, restOfStatusTasks, RUN_STATUS, runStatusTable, runStatusView } from './run-view.js';
import { watchAndReport } from './run-watch.js';
import { pauseText, waitText } from './wait-text.js';

/**
 * What `runs -o json` prints of each run: every field of the run but its tasks, history and
 * children (flow control included: priority, concurrency key, why a QUEUED run waits).
 */
const RUN_LIST = operation<RunListQuery, RunListQueryVariables>(/* GraphQL */ `
  query RunList($f: RunFilter, $n: Int, $a: String) {
    runs(filter: $f, first: $n, after: $a) {
      edges {
        node {
          id status workflowId version input config output error startNodeId idempotencyKey labels
          parentRunId parentTaskId scheduleId nominalTime depth seq priority concurrencyKey waitReason waitDetail pausedAt pauseReason
          createdAt updatedAt finishedAt
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

/** A run as `runs` lists it. */
export type ListedRun = RunListQuery['runs']['edges'][number]['node'];

/** A run's workflow version, to watch it with its attempt limits. */
const RUN_VERSION = operation<RunVersionQuery, RunVersionQueryVariables>(/* GraphQL */ `
  query RunVersion($id: ID!) { run(id: $id) { id workflowId version } }
`);

const RUN_MERMAID = operation<RunMermaidQuery, RunMermaidQueryVariables>(/* GraphQL */ `
  query RunMermaid($id: ID!) { run(id: $id) { mermaid } }
`);

/**
 * The table of `runs`: id, workflow, version, status, priority (1 first … 5), created, how long
 * it took (or has been going), for a QUEUED run why it waits (`CONCURRENCY_LIMIT: …`), for a
 * PAUSED one why it is paused (`paused: maintenance window`), and when
 * any listed run has labels, each run's (`env=prod,team=pay`, `-` for none). `now` is in ms since
 * the epoch.
 */
export function runsTable(runs: readonly ListedRun[], now: number): string {
  const labelled = runs.some((r) => labelsText(r.labels) !== '-');
  return table(
    ['ID', 'WORKFLOW', 'VERSION', 'STATUS', 'PRIORITY', 'CREATED', 'DURATION', 'WAITING', ...(labelled ? ['LABELS'] : [])],
    runs.map((r) => [
      r.id,
      cell(r.workflowId),
      String(r.version),
      r.status,
      r.priority == null ? '-' : String(r.priority),
      when(r.createdAt),
      took(r.createdAt, r.finishedAt, now),
      r.status === 'QUEUED' ? waitText(r) : pauseText(r),
      ...(labelled ? [cell(labelsText(r.labels))] : []),
    ]),
  );
}

/** How many runs `runs` lists without `--limit`. */
const DEFAULT_LIMIT = 20;

/** The filter of `runs`, in the API's terms (RunFilter). */
export type RunListFilter = NonNullable<RunListQueryVariables['f']>;

/**
 * Up to `limit` runs matching `filter`, newest first, read page by page (at most
 * {@link RUNS_PAGE_MAX} a page) by following the connection's `endCursor`; `more` tells whether
 * runs beyond `limit` match.
 */
export async function listRuns(c: WeftClient, filter: RunListFilter, limit: number): Promise<{ runs: ListedRun[]; more: boolean }> {
  const runs: ListedRun[] = [];
  let after: string | null = null;
  for (;;) {
    const r: RunListQuery = await c.request(RUN_LIST, { f: filter, n: Math.min(RUNS_PAGE_MAX, limit - runs.length), a: after });
    const edges = r.runs.edges;
    runs.push(...edges.map((e) => e.node));
    const { hasNextPage, endCursor } = r.runs.pageInfo;
    if (!hasNextPage || !endCursor || edges.length === 0) return { runs, more: false };
    if (runs.length >= limit) return { runs, more: true };
    after = endCursor;
  }
}

/** Registers `runs`, `run-status`, `watch` and `history`: the commands that read runs. */
export function runReadCommands(program: Command): void {
  withRunFilter(withOutput(withConnection(program.command('runs'))))
    .description('list runs, newest first')
    .option('--limit <n>', `how many runs at most (default ${DEFAULT_LIMIT}); pages through the API ${RUNS_PAGE_MAX} at a time`, positiveInt('--limit'))
    .addOption(new Option('--first <n>', 'the same as --limit').argParser(positiveInt('--first')).hideHelp())
    .action(
      async (
        o: ConnectionFlags &
          RunFilterFlags & {
            limit?: number;
            first?: number;
            output: OutputFormat;
          },
      ) => {
        const filter: RunListFilter = runFilterOf(o, Date.now());
        const limit = o.limit ?? o.first ?? DEFAULT_LIMIT;
        const { runs, more } = await withClient(o, (c) => listRuns(c, filter, limit));
        printAs(o.output, runs, () => runsTable(runs, Date.now()));
        if (more && o.output === 'table') process.stderr.write(`note: the newest ${runs.length} runs shown; more match (--limit N to see them)\n`);
      },
    );

  withOutput(withConnection(program.command('run-status <runId>')))
    .description("show a run, its tasks (a for_each node's with its iteration counts and held iterations), and its parent and child runs")
    .option('--mermaid', 'print the DAG with node statuses as a Mermaid flowchart')
    .option('-w, --watch', 'follow the run live until it ends, as `weft watch` does (exit code 3 unless it succeeds)')
    .action(async (runId: string, o: ConnectionFlags & { mermaid?: boolean; watch?: boolean; output: OutputFormat }, cmd: Command) => {
      if (o.watch && o.mermaid) usageError(cmd, 'give --watch or --mermaid, not both');
      await withClient(o, async (c) => {
        if (o.watch) {
          const { run } = await c.request(RUN_VERSION, { id: runId });
          await watchAndReport(c, run!, o.output);
          return;
        }
        if (o.mermaid) {
          const r = await c.request(RUN_MERMAID, { id: runId });
          process.stdout.write(`${r.run!.mermaid}\n`);
          return;
        }
        const run = (await c.request(RUN_STATUS, { id: runId, page: RUN_PAGE })).run!;
        run.tasks = await restOfStatusTasks(c, runId, run.tasks);
        const parent = run.parentRunId ? (await c.request(PARENT_RUN, { id: run.parentRunId })).run : null;
        const view = runStatusView(run, parent);
        const limits = o.output === 'table' ? await attemptLimits(c, run.workflowId, run.version) : undefined;
        printAs(o.output, view, () => runStatusTable(view, limits, Date.now()));
      });
    });

  withOutput(withConnection(program.command('watch <runId>')))
    .description("follow a run's progress live until it ends (exit code 0 when it succeeded, 3 when it failed or was cancelled)")
    .action(async (runId: string, o: ConnectionFlags & { output: OutputFormat }) => {
      await withClient(o, async (c) => {
        const { run } = await c.request(RUN_VERSION, { id: runId });
        await watchAndReport(c, run!, o.output);
      });
    });

  withOutput(withConnection(program.command('history <runId>')))
    .description('list the events applied to a run, oldest first, with the actions each produced')
    .action(async (runId: string, o: ConnectionFlags & { output: OutputFormat }) => {
      await withClient(o, async (c) => {
        const run = (await c.request(RUN_HISTORY, { id: runId, page: RUN_PAGE })).run!;
        const history = (await restOfHistory(c, runId, run.history)) as HistoryEvent[];
        const limits = o.output === 'table' ? await attemptLimits(c, run.workflowId, run.version) : undefined;
        const granted = o.output === 'table' ? await grantedLimits(c, runId) : undefined;
        printAs(o.output, history, () => historyTable(history, limits, granted));
      });
    });
}

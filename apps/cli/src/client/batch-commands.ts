import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { operation, type WeftClient } from '@weft/client';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { positiveInt } from './arguments.js';
import {
  BATCH_ACTIONS,
  BATCH_FIELDS,
  batchDetailText,
  batchExitCode,
  batchListTable,
  confirmed,
  confirmQuestion,
  createdLine,
  isFinished,
  matchLine,
  notAppliedText,
  progressLine,
  refusalMessage,
  type BatchItem,
  type BatchVerb,
} from './batch-view.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  CountBatchRunsQuery,
  CountBatchRunsQueryVariables,
  CreateRunBatchMutation,
  CreateRunBatchMutationVariables,
  RunBatchAction,
  RunBatchDetailQuery,
  RunBatchDetailQueryVariables,
  RunBatchFieldsFragment,
  RunBatchListQuery,
  RunBatchListQueryVariables,
  RunBatchProgressQuery,
  RunBatchProgressQueryVariables,
  StopRunBatchMutation,
  StopRunBatchMutationVariables,
} from './generated/graphql.js';
import { printAs, withOutput, type OutputFormat } from './output.js';
import { isEmptyFilter, runFilterOf, withRunFilter, type RunFilterFlags } from './run-filter-flags.js';

/** Items read per page: the API's largest page of `RunBatch.items`. */
const ITEMS_PAGE = 1000;

/** Batches read per page by `list`. */
const LIST_PAGE = 100;

/** How many batches `list` shows without `--limit`. */
const DEFAULT_LIMIT = 20;

/** How often `--watch` reads the batch, in ms: the scheduler acts on runs in slices a second apart. */
const WATCH_INTERVAL_MS = 500;

const COUNT_RUNS = operation<CountBatchRunsQuery, CountBatchRunsQueryVariables>(/* GraphQL */ `
  query CountBatchRuns($f: RunFilter) { countRuns(filter: $f) }
`);

const CREATE_RUN_BATCH = operation<CreateRunBatchMutation, CreateRunBatchMutationVariables>(/* GraphQL */ `
  mutation CreateRunBatch($i: CreateRunBatchInput!) { createRunBatch(input: $i) { ...RunBatchFields } }
  ${BATCH_FIELDS}
`);

const RUN_BATCH_PROGRESS = operation<RunBatchProgressQuery, RunBatchProgressQueryVariables>(/* GraphQL */ `
  query RunBatchProgress($id: ID!) { runBatch(id: $id) { ...RunBatchFields } }
  ${BATCH_FIELDS}
`);

const RUN_BATCH_DETAIL = operation<RunBatchDetailQuery, RunBatchDetailQueryVariables>(/* GraphQL */ `
  query RunBatchDetail($id: ID!, $n: Int!, $a: String) {
    runBatch(id: $id) { ...RunBatchFields items(first: $n, after: $a) { edges { node { runId outcome error } } pageInfo { hasNextPage endCursor } } }
  }
  ${BATCH_FIELDS}
`);

const RUN_BATCH_LIST = operation<RunBatchListQuery, RunBatchListQueryVariables>(/* GraphQL */ `
  query RunBatchList($n: Int!, $a: String) { runBatches(first: $n, after: $a) { edges { node { ...RunBatchFields } } pageInfo { hasNextPage endCursor } } }
  ${BATCH_FIELDS}
`);

const STOP_RUN_BATCH = operation<StopRunBatchMutation, StopRunBatchMutationVariables>(/* GraphQL */ `
  mutation StopRunBatch($id: ID!) { stopRunBatch(id: $id) { ...RunBatchFields } }
  ${BATCH_FIELDS}
`);

/** A bulk action as the `batch` commands read it. */
export type RunBatch = RunBatchFieldsFragment;

/** The flags of `batch cancel|retry|pause|resume`. */
interface ActFlags extends ConnectionFlags, RunFilterFlags {
  fromNode?: string;
  reason?: string;
  idempotencyKey?: string;
  yes?: boolean;
  watch?: boolean;
  output: OutputFormat;
}

/**
 * The batch `id` with every one of its items, read page by page ({@link ITEMS_PAGE} a page); the
 * batch's fields are those of the first page.
 */
export async function batchWithItems(c: WeftClient, id: string): Promise<{ batch: RunBatch; items: BatchItem[] }> {
  let batch: RunBatch | undefined;
  const items: BatchItem[] = [];
  let after: string | null = null;
  for (;;) {
    const r: RunBatchDetailQuery = await c.request(RUN_BATCH_DETAIL, { id, n: ITEMS_PAGE, a: after });
    const { items: page, ...fields } = r.runBatch;
    batch ??= fields;
    items.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor || page.edges.length === 0) return { batch, items };
    after = page.pageInfo.endCursor;
  }
}

/** Up to `limit` of the tenant's batches, newest first; `more` tells whether there are others. */
async function listBatches(c: WeftClient, limit: number): Promise<{ batches: RunBatch[]; more: boolean }> {
  const batches: RunBatch[] = [];
  let after: string | null = null;
  for (;;) {
    const r: RunBatchListQuery = await c.request(RUN_BATCH_LIST, { n: Math.min(LIST_PAGE, limit - batches.length), a: after });
    batches.push(...r.runBatches.edges.map((e) => e.node));
    const { hasNextPage, endCursor } = r.runBatches.pageInfo;
    if (!hasNextPage || !endCursor || r.runBatches.edges.length === 0) return { batches, more: false };
    if (batches.length >= limit) return { batches, more: true };
    after = endCursor;
  }
}

/** Asks `question` on stderr and reads one line of stdin. */
async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/**
 * Reads the batch every {@link WATCH_INTERVAL_MS} until it is finished, printing
 * {@link progressLine} at each change for people; then its items. Prints the SKIPPED and FAILED
 * runs (`-o json|yaml`: the batch with all its items) and sets the exit code
 * ({@link batchExitCode}).
 */
async function watchBatch(c: WeftClient, first: RunBatch, format: OutputFormat): Promise<void> {
  let b = first;
  let last = '';
  for (;;) {
    const line = progressLine(b);
    if (format === 'table' && line !== last) process.stdout.write(line);
    last = line;
    if (isFinished(b)) break;
    await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
    b = (await c.request(RUN_BATCH_PROGRESS, { id: b.id })).runBatch;
  }
  const { batch, items } = await batchWithItems(c, b.id);
  printAs(format, { ...batch, items }, () => notAppliedText(items));
  process.exitCode = batchExitCode(batch);
}

/** The action of `batch VERB`: checks, counts, confirms, creates, and follows when `--watch`. */
async function act(verb: BatchVerb, o: ActFlags, cmd: Command): Promise<void> {
  const filter = runFilterOf(o, Date.now());
  if (isEmptyFilter(filter)) {
    usageError(cmd, `batch ${verb} needs at least one filter flag (--status, --workflow, --label, …): it never acts on every run`);
  }
  if (verb === 'retry' && !o.fromNode) usageError(cmd, 'batch retry needs --from-node NODE: the node each run is retried from');
  const info = o.output === 'table' ? process.stdout : process.stderr;
  await withClient(o, async (c) => {
    const count = (await c.request(COUNT_RUNS, { f: filter })).countRuns;
    info.write(matchLine(count));
    if (count === 0) return;
    if (!o.yes) {
      if (!process.stdin.isTTY) usageError(cmd, refusalMessage(verb, count));
      if (!confirmed(await ask(confirmQuestion(verb, count)))) throw new CliError('not confirmed: nothing was done', EXIT.failure);
    }
    const action: RunBatchAction = BATCH_ACTIONS[verb];
    const i = { action, filter, fromNodeId: o.fromNode, reason: o.reason, idempotencyKey: o.idempotencyKey };
    const b = (await c.request(CREATE_RUN_BATCH, { i })).createRunBatch;
    if (o.watch) info.write(createdLine(b));
    else printAs(o.output, b, () => createdLine(b));
    if (o.watch) await watchBatch(c, b, o.output);
  });
}

/** What each action does to a run, for its help. */
const ACTION_HELP: Record<BatchVerb, string> = {
  cancel: 'cancel every run the filter matches',
  retry: 'retry every run the filter matches from a node (--from-node)',
  pause: 'pause every run the filter matches',
  resume: 'resume every paused run the filter matches',
};

/**
 * Registers `batch` with `cancel`, `retry`, `pause` and `resume` (a bulk action over the runs the
 * filter flags of `runs` match), `list`, `describe` and `stop`.
 */
export function batchCommands(program: Command): void {
  const batch = program.command('batch').description('act on many runs at once: the runs a filter matches, at a rate the API sets');

  for (const verb of Object.keys(BATCH_ACTIONS) as BatchVerb[]) {
    const cmd = withRunFilter(withOutput(withConnection(batch.command(verb)))).description(`${ACTION_HELP[verb]}; prints the batch's id`);
    if (verb === 'retry') cmd.option('--from-node <nodeId>', 'the node each run is retried from (required)');
    else cmd.option('--reason <text>', verb === 'pause' ? "why: each run's pause reason" : "why: kept in each run's history");
    cmd
      .option('--idempotency-key <key>', 'return the batch created with this key instead of creating another')
      .option('-y, --yes', 'act without asking (needed when stdin is not a terminal)')
      .option('--watch', 'follow the batch until it is finished, then list the runs it skipped or failed on (exit code 3 if one failed)')
      .addHelpText(
        'after',
        '\nPrints how many runs the filter matches now and asks before acting (give --yes where no one can answer).\n' +
          'The runs are those the filter matches when the batch is created (at most 100,000); the API acts on each once,\n' +
          'at a limited rate. A run the action does not apply to (it has ended, it is not paused) is SKIPPED with why.\n' +
          '-o json|yaml prints the batch as created; with --watch, the batch as it finished, with all its items.',
      )
      .action((o: ActFlags, c: Command) => act(verb, o, c));
  }

  withOutput(withConnection(batch.command('list')))
    .description("list the tenant's batches, newest first")
    .option('--limit <n>', `how many at most (default ${DEFAULT_LIMIT})`, positiveInt('--limit'))
    .action(async (o: ConnectionFlags & { limit?: number; output: OutputFormat }) => {
      const { batches, more } = await withClient(o, (c) => listBatches(c, o.limit ?? DEFAULT_LIMIT));
      printAs(o.output, batches, () => batchListTable(batches));
      if (more && o.output === 'table') process.stderr.write(`note: the newest ${batches.length} batches shown; more exist (--limit N to see them)\n`);
    });

  withOutput(withConnection(batch.command('describe <id>')))
    .description('show a batch: its action, filter and counters, and the runs it skipped or failed on, with why')
    .action(async (id: string, o: ConnectionFlags & { output: OutputFormat }) => {
      const { batch: b, items } = await withClient(o, (c) => batchWithItems(c, id));
      printAs(o.output, { ...b, items }, () => batchDetailText(b, items));
    });

  withOutput(withConnection(batch.command('stop <id>')))
    .description('stop a running batch: the runs it has not acted on yet are left as they are')
    .action(async (id: string, o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(STOP_RUN_BATCH, { id }));
      printAs(o.output, r.stopRunBatch, () => progressLine(r.stopRunBatch));
    });
}

import type { Command } from 'commander';
import { operation, type WeftClient } from '@weft/client';
import { EXIT } from '../exit-codes.js';
import { jsonOption, positiveInt, priority, readJsonOptions } from './arguments.js';
import { label, LABEL_HELP } from './label-arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  CancelRunMutation,
  CancelRunMutationVariables,
  PauseRunMutation,
  PauseRunMutationVariables,
  ResumeRunMutation,
  ResumeRunMutationVariables,
  RetryRunMutation,
  RetryRunMutationVariables,
  SendSignalMutation,
  SendSignalMutationVariables,
  StartedRunFieldsFragment,
  StartRunMutation,
  StartRunMutationVariables,
} from './generated/graphql.js';
import { cell, printAs, withOutput, type OutputFormat } from './output.js';
import { FINAL_RUN_STATUSES, watchAndReport } from './run-watch.js';
import { waitText } from './wait-text.js';

const JSON_HELP = 'JSON, or @FILE to read it from a file (@- for stdin)';

/** What `run` and `retry` read of the run they started. */
const STARTED_FIELDS = /* GraphQL */ `
  fragment StartedRunFields on Run { id status workflowId version priority concurrencyKey idempotencyKey labels error waitReason waitDetail createdAt }
`;

const START_RUN = operation<StartRunMutation, StartRunMutationVariables>(/* GraphQL */ `
  mutation StartRun($i: StartRunInput!) { startRun(input: $i) { ...StartedRunFields } }
  ${STARTED_FIELDS}
`);

const RETRY_RUN = operation<RetryRunMutation, RetryRunMutationVariables>(/* GraphQL */ `
  mutation RetryRun($i: RetryRunInput!) { retryRun(input: $i) { ...StartedRunFields } }
  ${STARTED_FIELDS}
`);

const SEND_SIGNAL = operation<SendSignalMutation, SendSignalMutationVariables>(/* GraphQL */ `
  mutation SendSignal($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }
`);

const CANCEL_RUN = operation<CancelRunMutation, CancelRunMutationVariables>(/* GraphQL */ `
  mutation CancelRun($i: CancelRunInput!) { cancelRun(input: $i) { id status workflowId version error finishedAt } }
`);

/** What `pause` and `resume` read of the run, and print with `-o json|yaml`. */
const PAUSED_FIELDS = /* GraphQL */ `
  fragment PausedRunFields on Run { id status workflowId version pausedAt pauseReason error finishedAt }
`;

const PAUSE_RUN = operation<PauseRunMutation, PauseRunMutationVariables>(/* GraphQL */ `
  mutation PauseRun($i: PauseRunInput!) { pauseRun(input: $i) { ...PausedRunFields } }
  ${PAUSED_FIELDS}
`);

const RESUME_RUN = operation<ResumeRunMutation, ResumeRunMutationVariables>(/* GraphQL */ `
  mutation ResumeRun($i: ResumeRunInput!) { resumeRun(input: $i) { ...PausedRunFields } }
  ${PAUSED_FIELDS}
`);

/**
 * The line `pause` and `resume` print of the run as the API returned it: `run ID STATUS`, a
 * PAUSED run with why (`run ID PAUSED (maintenance window)`; the reason's control characters
 * escaped).
 */
export function pausedLine(run: { id: string; status: string; pauseReason?: string | null }): string {
  if (run.status === 'PAUSED' && run.pauseReason) return `run ${run.id} PAUSED (${cell(run.pauseReason)})\n`;
  return `run ${run.id} ${run.status}\n`;
}

/**
 * The line `run` and `retry` print of the run they started: `run ID STATUS`; a QUEUED run adds
 * why it waits (`run ID QUEUED (CONCURRENCY_LIMIT: concurrency limit 2 reached …)`), a run that
 * ended at once (cancelled by its concurrency key's `cancel_newest`) its reason
 * (`run ID CANCELLED: concurrency limit 2 reached for key "acme" (cancel_newest)`).
 */
export function startedLine(run: { id: string; status: string; error?: string | null; waitReason?: string | null; waitDetail?: string | null }): string {
  if (run.status === 'QUEUED' && run.waitDetail) return `run ${run.id} QUEUED (${waitText(run)})\n`;
  if (run.error) return `run ${run.id} ${run.status}: ${cell(run.error)}\n`;
  return `run ${run.id} ${run.status}\n`;
}

/**
 * Prints {@link startedLine} (with `-o json|yaml` the run as started), then follows the run when
 * `watch` (which sets the exit code; with `-o json|yaml` each update is printed whole, as `weft
 * watch -o json|yaml` prints them, instead of the started run); without it, a run that ended at
 * once without succeeding (FAILED, CANCELLED) sets {@link EXIT}.runNotSucceeded (3), as a watched
 * one would.
 */
async function reportStarted(c: WeftClient, run: StartedRunFieldsFragment, watch: boolean | undefined, format: OutputFormat): Promise<void> {
  if (!watch || format === 'table') printAs(format, run, () => startedLine(run));
  if (watch) await watchAndReport(c, run, format);
  else if (FINAL_RUN_STATUSES.includes(run.status) && run.status !== 'SUCCEEDED') process.exitCode = EXIT.runNotSucceeded;
}

/** Registers `run`, `signal`, `cancel`, `pause`, `resume` and `retry`: the commands that act on runs. */
export function runControlCommands(program: Command): void {
  withOutput(withConnection(program.command('run <workflowId>')))
    .description('start a run')
    .option('--input <json>', `run input: ${JSON_HELP}`, jsonOption('--input'), {})
    .option('--config <json>', `run config: ${JSON_HELP}`, jsonOption('--config'))
    .option('--version <n>', "definition version (default: the workflow's default version)", positiveInt('--version'))
    .option('--idempotency-key <key>', 'return the existing run for a repeated key')
    .option('--priority <n>', "dispatch priority of the run's tasks, 1 (first) to 5 (default: the definition's, else 3)", priority)
    .option('--label <key=value>', `a label to find the run by: ${LABEL_HELP}`, label)
    .option('--watch', 'stream task progress until the run ends (exit code 3 unless it succeeds)')
    .addHelpText(
      'after',
      '\nA run cancelled at once (its concurrency key full, strategy cancel_newest) is printed with its reason, exit code 3.\n' +
        '-o json|yaml prints the run as started; with --watch, every update of the run instead, one JSON object per line\n' +
        '(the last is the run as it ended) or one YAML document each.',
    )
    .action(
      async (
        workflowId: string,
        o: ConnectionFlags & {
          input: unknown;
          config?: unknown;
          version?: number;
          idempotencyKey?: string;
          priority?: number;
          label?: Record<string, string>;
          watch?: boolean;
          output: OutputFormat;
        },
      ) => {
        const { input, config } = await readJsonOptions({ input: o.input, config: o.config });
        await withClient(o, async (c) => {
          const r = await c.request(START_RUN, {
            i: { workflowId, input, config, version: o.version, idempotencyKey: o.idempotencyKey, priority: o.priority, labels: o.label },
          });
          await reportStarted(c, r.startRun, o.watch, o.output);
        });
      },
    );

  withOutput(withConnection(program.command('signal <runId> <name>')))
    .description('send a signal to a run')
    .option('--payload <json>', `signal payload: ${JSON_HELP}`, jsonOption('--payload'))
    .action(async (runId: string, name: string, o: ConnectionFlags & { payload?: unknown; output: OutputFormat }) => {
      const { payload } = await readJsonOptions({ payload: o.payload });
      const r = await withClient(o, (c) => c.request(SEND_SIGNAL, { i: { runId, name, payload } }));
      const sent = { runId, name, delivered: r.sendSignal.delivered };
      printAs(o.output, sent, () => (sent.delivered ? 'delivered\n' : 'buffered (no node is waiting for it yet)\n'));
    });

  withOutput(withConnection(program.command('cancel <runId>')))
    .description('cancel a run')
    .option('--reason <text>', 'why')
    .action(async (runId: string, o: ConnectionFlags & { reason?: string; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(CANCEL_RUN, { i: { runId, reason: o.reason } }));
      printAs(o.output, r.cancelRun, () => `run ${r.cancelRun.id} ${r.cancelRun.status}\n`);
    });

  withOutput(withConnection(program.command('pause <runId>')))
    .description('pause a run and its child runs: nothing more is dispatched until `weft resume`')
    .option('--reason <text>', 'why: kept as the run\'s pause reason and in its history (default "paused")')
    .addHelpText(
      'after',
      '\nAttempts already running finish, timers fire and signals are delivered; ready tasks wait QUEUED (RUN_PAUSED).\n' +
        'Pausing a paused run changes nothing. A run that has ended, or is QUEUED for a concurrency slot, cannot be\n' +
        'paused: CONFLICT, exit code 4. `weft cancel` ends a paused run.',
    )
    .action(async (runId: string, o: ConnectionFlags & { reason?: string; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(PAUSE_RUN, { i: { runId, reason: o.reason } }));
      printAs(o.output, r.pauseRun, () => pausedLine(r.pauseRun));
    });

  withOutput(withConnection(program.command('resume <runId>')))
    .description('resume a paused run and its paused child runs')
    .option('--reason <text>', "why: kept in the run's history")
    .addHelpText(
      'after',
      '\nWhat waited is dispatched; a node that ran out of attempts (on_exhausted: pause) gets its max_attempts again.\n' +
        'Resuming a run that is not paused changes nothing; a run that has ended: CONFLICT, exit code 4.',
    )
    .action(async (runId: string, o: ConnectionFlags & { reason?: string; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(RESUME_RUN, { i: { runId, reason: o.reason } }));
      printAs(o.output, r.resumeRun, () => pausedLine(r.resumeRun));
    });

  withOutput(withConnection(program.command('retry <runId>')))
    .description('retry a run from a node (that node and its descendants are reset)')
    .requiredOption('--from <nodeId>', 'node to restart from')
    .option('--input <json>', `new run input: ${JSON_HELP}`, jsonOption('--input'))
    .option('--config <json>', `new run config: ${JSON_HELP}`, jsonOption('--config'))
    .option('--version <n>', "definition version to continue on (default the run's)", positiveInt('--version'))
    .option(
      '--failed-iterations-only',
      'the --from node is a for_each node: run again only its failed, skipped and cancelled iterations, keeping the completed ones (its descendants are reset)',
    )
    .option('--watch', 'stream task progress until the run ends (exit code 3 unless it succeeds)')
    .action(
      async (
        runId: string,
        o: ConnectionFlags & {
          from: string;
          input?: unknown;
          config?: unknown;
          version?: number;
          failedIterationsOnly?: boolean;
          watch?: boolean;
          output: OutputFormat;
        },
      ) => {
        const { input, config } = await readJsonOptions({ input: o.input, config: o.config });
        await withClient(o, async (c) => {
          const r = await c.request(RETRY_RUN, {
            i: { runId, fromNodeId: o.from, input, config, version: o.version, ...(o.failedIterationsOnly ? { failedIterationsOnly: true } : {}) },
          });
          await reportStarted(c, r.retryRun, o.watch, o.output);
        });
      },
    );
}

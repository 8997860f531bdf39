import type { Command } from 'commander';
import { operation, type WeftClient } from '@weft/client';
import { EXIT, usageError } from '../exit-codes.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  BackfillProgressQuery,
  BackfillProgressQueryVariables,
  BackfillScheduleMutation,
  BackfillScheduleMutationVariables,
  PauseScheduleMutation,
  PauseScheduleMutationVariables,
  ScheduleOverlapQuery,
  ScheduleOverlapQueryVariables,
  TriggerScheduleMutation,
  TriggerScheduleMutationVariables,
  UnpauseScheduleMutation,
  UnpauseScheduleMutationVariables,
} from './generated/graphql.js';
import { cell, formatData, printAs, when, withOutput, type OutputFormat } from './output.js';
import { checkNote, instant } from './schedule-arguments.js';
import { BACKFILL_FIELDS, backfillProgress, type Backfill } from './schedule-view.js';

/** How often `backfill --watch` reads the backfill's progress, in milliseconds. */
const BACKFILL_POLL_MS = 250;

/** A backfill's progress, and whether its schedule is paused (then it waits). */
const BACKFILL_PROGRESS = operation<BackfillProgressQuery, BackfillProgressQueryVariables>(/* GraphQL */ `
  query BackfillProgress($b: ID!, $s: ID!) { scheduleBackfill(id: $b) { ...BackfillFields } schedule(id: $s) { paused } }
  ${BACKFILL_FIELDS}
`);

const PAUSE_SCHEDULE = operation<PauseScheduleMutation, PauseScheduleMutationVariables>(/* GraphQL */ `
  mutation PauseSchedule($id: ID!, $n: String) { pauseSchedule(id: $id, note: $n) { id paused pauseNote pausedBy pausedAt } }
`);

const UNPAUSE_SCHEDULE = operation<UnpauseScheduleMutation, UnpauseScheduleMutationVariables>(/* GraphQL */ `
  mutation UnpauseSchedule($id: ID!, $n: String) { unpauseSchedule(id: $id, note: $n) { id paused pauseNote pausedBy nextFireAt } }
`);

const TRIGGER_SCHEDULE = operation<TriggerScheduleMutation, TriggerScheduleMutationVariables>(/* GraphQL */ `
  mutation TriggerSchedule($id: ID!) { triggerSchedule(id: $id) { nominalTime outcome reason run { id status } cancelledRunIds } }
`);

/** Why a trigger buffered or skipped: the schedule's overlap policy and last error. */
const SCHEDULE_OVERLAP = operation<ScheduleOverlapQuery, ScheduleOverlapQueryVariables>(/* GraphQL */ `
  query ScheduleOverlap($id: ID!) { schedule(id: $id) { overlapPolicy lastError } }
`);

const BACKFILL_SCHEDULE = operation<BackfillScheduleMutation, BackfillScheduleMutationVariables>(/* GraphQL */ `
  mutation BackfillSchedule($id: ID!, $f: DateTime!, $t: DateTime!) { backfillSchedule(id: $id, from: $f, to: $t) { ...BackfillFields } }
  ${BACKFILL_FIELDS}
`);

/** What `trigger` reads of the fire. */
type Fire = TriggerScheduleMutation['triggerSchedule'];

/** Why a trigger started no run, for people, from the API's reason (and the schedule's lastError for start_failed). */
function skipWhy(f: Fire, policy: string, lastError: string | null): string {
  switch (f.reason) {
    case 'overlap':
      return `the schedule's previous run is still running and its overlap policy is ${policy}`;
    case 'buffer_full':
      return `the schedule's previous run is still running and its buffer is full (overlap policy ${policy})`;
    case 'start_failed':
      return `the run could not start: ${cell(lastError ?? 'no reason recorded')}`;
    case 'already_fired':
      return `run ${f.run?.id ?? '?'} exists for that nominal time already`;
    default:
      return cell(f.reason ?? 'no reason given');
  }
}

/**
 * Follows backfill `id` until it is finished, printing a progress line on stdout each time it
 * changes (unless `quiet`), and a note on stderr (once) while its schedule is paused: then it
 * does not proceed.
 */
async function watchBackfill(c: WeftClient, first: Backfill, quiet: boolean): Promise<Backfill> {
  let shown = '';
  let notedPause = false;
  let b = first;
  for (;;) {
    const line = backfillProgress(b);
    if (line !== shown && !quiet) process.stdout.write(`backfill ${b.id}: ${line}\n`);
    shown = line;
    if (b.finishedAt) return b;
    await new Promise((r) => setTimeout(r, BACKFILL_POLL_MS));
    const r = await c.request(BACKFILL_PROGRESS, { b: b.id, s: b.scheduleId });
    b = r.scheduleBackfill!;
    if (r.schedule!.paused && !notedPause) process.stderr.write(`note: schedule ${b.scheduleId} is paused: the backfill waits until it is unpaused\n`);
    notedPause ||= r.schedule!.paused;
  }
}

/** Registers `schedules pause`, `unpause`, `trigger` and `backfill` on the `schedules` command. */
export function scheduleFireCommands(schedules: Command): void {
  withOutput(withConnection(schedules.command('pause <id>')))
    .description('pause a schedule: nothing fires (clock, buffer, backfills) until it is unpaused; a trigger still fires')
    .option('--note <text>', 'why, shown by describe with the key that paused it')
    .action(async (id: string, o: ConnectionFlags & { note?: string; output: OutputFormat }, cmd: Command) => {
      await checkNote(cmd, o.note);
      const r = await withClient(o, (c) => c.request(PAUSE_SCHEDULE, { id, n: o.note ?? null }));
      const s = r.pauseSchedule;
      printAs(
        o.output,
        s,
        () => `schedule ${s.id} paused at ${when(s.pausedAt)} by ${cell(s.pausedBy)}${s.pauseNote !== null ? `: ${cell(s.pauseNote)}` : ''}\n`,
      );
    });

  withOutput(withConnection(schedules.command('unpause <id>')))
    .description('unpause a schedule; its next fire time is computed from now, so nothing missed while paused fires')
    .option('--note <text>', 'why, shown by describe with the key that unpaused it')
    .action(async (id: string, o: ConnectionFlags & { note?: string; output: OutputFormat }, cmd: Command) => {
      await checkNote(cmd, o.note);
      const r = await withClient(o, (c) => c.request(UNPAUSE_SCHEDULE, { id, n: o.note ?? null }));
      const s = r.unpauseSchedule;
      const note = s.pauseNote !== null ? `: ${cell(s.pauseNote)}` : '';
      printAs(o.output, s, () => `schedule ${s.id} unpaused by ${cell(s.pausedBy)}${note}; next fire ${when(s.nextFireAt)}\n`);
    });

  withOutput(withConnection(schedules.command('trigger <id>')))
    .description(
      'fire a schedule now (nominal time: now) under its overlap policy; prints the run started, or why none was (exit code 1 when the run could not start)',
    )
    .action(async (id: string, o: ConnectionFlags & { output: OutputFormat }) => {
      await withClient(o, async (c) => {
        const r = await c.request(TRIGGER_SCHEDULE, { id });
        const f: Fire = r.triggerSchedule;
        if (o.output !== 'table') {
          process.stdout.write(formatData(o.output, f));
          if (f.reason === 'start_failed') process.exitCode = EXIT.failure;
          return;
        }
        for (const cancelled of f.cancelledRunIds) process.stdout.write(`run ${cancelled} cancelled first (overlap policy cancel_other)\n`);
        if (f.outcome === 'STARTED') {
          process.stdout.write(`run ${f.run!.id} started (nominal time ${when(f.nominalTime)})\n`);
          return;
        }
        const s = (await c.request(SCHEDULE_OVERLAP, { id })).schedule!;
        const policy = String(s.overlapPolicy).toLowerCase();
        if (f.outcome === 'BUFFERED') {
          process.stdout.write(
            `buffered (nominal time ${when(f.nominalTime)}): the schedule's previous run is still running; this fire starts when it ends (overlap policy ${policy})\n`,
          );
          return;
        }
        process.stdout.write(`skipped (nominal time ${when(f.nominalTime)}): ${skipWhy(f, policy, s.lastError)}\n`);
        if (f.reason === 'start_failed') process.exitCode = EXIT.failure;
      });
    });

  withOutput(withConnection(schedules.command('backfill <id>')))
    .description("fire each of the schedule's nominal times in [--from, --to], oldest first, under its overlap policy; prints the backfill's id")
    .requiredOption('--from <time>', 'the first instant of the range, RFC 3339', instant('--from'))
    .requiredOption('--to <time>', 'the last instant of the range (inclusive), RFC 3339', instant('--to'))
    .option('--watch', 'show the progress until the backfill is finished (-o json|yaml: print the finished backfill)')
    .action(async (id: string, o: ConnectionFlags & { from: string; to: string; watch?: boolean; output: OutputFormat }, cmd: Command) => {
      if (Date.parse(o.to) < Date.parse(o.from)) usageError(cmd, `--to ${o.to} is before --from ${o.from}`);
      await withClient(o, async (c) => {
        const r = await c.request(BACKFILL_SCHEDULE, { id, f: o.from, t: o.to });
        const b: Backfill = r.backfillSchedule;
        if (o.output !== 'table') {
          process.stdout.write(formatData(o.output, o.watch ? await watchBackfill(c, b, true) : b));
          return;
        }
        const times = b.total === 1 ? '1 fire time' : `${b.total} fire times`;
        process.stdout.write(`backfill ${b.id} of schedule ${b.scheduleId}: ${times} from ${when(b.from)} to ${when(b.to)}\n`);
        if (!o.watch) return;
        const done = await watchBackfill(c, b, false);
        process.stdout.write(`backfill ${done.id} finished at ${when(done.finishedAt)}: ${done.started} started, ${done.skipped} skipped\n`);
      });
    });
}

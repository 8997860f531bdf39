import { Option, type Command } from 'commander';
import { operation, type WeftClient } from '@weft/client';
import { jsonOption, positiveInt, readJsonOptions } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import { label, LABEL_HELP } from './label-arguments.js';
import type {
  CreateScheduleMutation,
  CreateScheduleMutationVariables,
  DeleteScheduleMutation,
  DeleteScheduleMutationVariables,
  ScheduleDetailQuery,
  ScheduleDetailQueryVariables,
  ScheduleListQuery,
  ScheduleListQueryVariables,
  ScheduleOverlapPolicy,
  ScheduleToDeleteQuery,
  ScheduleToDeleteQueryVariables,
} from './generated/graphql.js';
import { cell, printAs, when, withOutput, type OutputFormat } from './output.js';
import { checkTiming, instant, OVERLAP_POLICIES, overlapPolicy, seconds, timeZone, upcomingCount, type TimingFlags } from './schedule-arguments.js';
import { scheduleFireCommands } from './schedule-fire-commands.js';
import {
  BACKFILL_FIELDS,
  SCHEDULE_FIELDS,
  SCHEDULE_RUN_FIELDS,
  scheduleDetailText,
  scheduleListTable,
  specText,
  type Schedule,
  type ScheduleDetail,
} from './schedule-view.js';

const JSON_HELP = 'JSON, or @FILE to read it from a file (@- for stdin)';

/**
 * Schedules read per page: the API's default page. It would return 200, but 200 whole schedules
 * are over the API's query complexity budget.
 */
export const SCHEDULES_PAGE = 50;

/** How many of its newest runs and backfills `describe` shows. */
const DESCRIBE_RECENT = 10;

const SCHEDULE_LIST = operation<ScheduleListQuery, ScheduleListQueryVariables>(/* GraphQL */ `
  query ScheduleList($w: String, $n: Int, $a: String) {
    schedules(workflowId: $w, first: $n, after: $a) { edges { node { ...ScheduleFields } } pageInfo { hasNextPage endCursor } }
  }
  ${SCHEDULE_FIELDS}
`);

const CREATE_SCHEDULE = operation<CreateScheduleMutation, CreateScheduleMutationVariables>(/* GraphQL */ `
  mutation CreateSchedule($i: CreateScheduleInput!) { createSchedule(input: $i) { ...ScheduleFields } }
  ${SCHEDULE_FIELDS}
`);

const SCHEDULE_DETAIL = operation<ScheduleDetailQuery, ScheduleDetailQueryVariables>(/* GraphQL */ `
  query ScheduleDetail($id: ID!, $n: Int!, $k: Int!) {
    schedule(id: $id) { ...ScheduleFields upcoming(count: $n) recentRuns(first: $k) { ...ScheduleRunFields } backfills(first: $k) { ...BackfillFields } }
  }
  ${SCHEDULE_FIELDS}
  ${SCHEDULE_RUN_FIELDS}
  ${BACKFILL_FIELDS}
`);

/** What `delete` says of the schedule it deletes; up to 100 of its backfills are counted. */
const SCHEDULE_TO_DELETE = operation<ScheduleToDeleteQuery, ScheduleToDeleteQueryVariables>(/* GraphQL */ `
  query ScheduleToDelete($id: ID!) { schedule(id: $id) { id workflowId cron intervalSeconds timeZone firedCount backfills(first: 100) { id } } }
`);

const DELETE_SCHEDULE = operation<DeleteScheduleMutation, DeleteScheduleMutationVariables>(/* GraphQL */ `
  mutation DeleteSchedule($id: ID!) { deleteSchedule(id: $id) }
`);

/** The flags of `schedules create`. */
interface CreateFlags extends ConnectionFlags, TimingFlags {
  workflow: string;
  version?: number;
  input?: unknown;
  config?: unknown;
  label?: Record<string, string>;
  overlap?: string;
  paused?: boolean;
  output: OutputFormat;
}

/** Every schedule of the tenant (of `workflowId` when given), in creation order, read page by page. */
export async function listSchedules(c: WeftClient, workflowId: string | undefined): Promise<Schedule[]> {
  const out: Schedule[] = [];
  let after: string | null = null;
  for (;;) {
    const r: ScheduleListQuery = await c.request(SCHEDULE_LIST, { w: workflowId ?? null, n: SCHEDULES_PAGE, a: after });
    out.push(...r.schedules.edges.map((e) => e.node));
    const { hasNextPage, endCursor } = r.schedules.pageInfo;
    if (!hasNextPage || !endCursor) return out;
    after = endCursor;
  }
}

/**
 * Registers `schedules` (also `schedule`) with `create`, `list`, `describe` and `delete`, and
 * the commands that fire or hold a schedule (see {@link scheduleFireCommands}).
 */
export function scheduleCommands(program: Command): void {
  const schedules = program
    .command('schedules')
    .alias('schedule')
    .description('start runs of a workflow by the clock: a cron expression in a time zone, or an interval');

  withOutput(withConnection(schedules.command('create')))
    .description('create a schedule of a workflow (operator or admin); prints its id')
    .requiredOption('--workflow <id>', 'the workflow it starts')
    .option('--version <n>', "pin a version (default: the workflow's default version at each fire)", positiveInt('--version'))
    .option('--cron <expr>', 'a cron expression: 5 fields (minute first), 6 (seconds first), or @hourly, @daily, @weekly, @monthly, @yearly')
    .option('--every <length>', 'fire every this long instead (30s, 5m, 1h, 1h30m, 1d), counted from --start, else from now', seconds('--every', 1))
    .option('--tz <zone>', 'the IANA time zone --cron is read in (default UTC), e.g. Europe/Paris', timeZone)
    .option('--input <json>', `the runs' input: ${JSON_HELP}; each run also gets input.schedule = {id, nominalTime}`, jsonOption('--input'))
    .option('--config <json>', `the runs' config: ${JSON_HELP}`, jsonOption('--config'))
    .option('--label <key=value>', `a label every run it starts gets: ${LABEL_HELP}`, label)
    .addOption(
      new Option('--overlap <policy>', 'what a fire does while the previous run still runs (default skip)').choices(OVERLAP_POLICIES).argParser(overlapPolicy),
    )
    .option(
      '--catch-up <length>',
      "fire times missed by at most this long (the scheduler was down) still fire (default 1m; 0: no catch-up beyond the scheduler's 10s grace)",
      seconds('--catch-up', 0),
    )
    .option('--jitter <length>', 'delay each fire by up to this long (default 0)', seconds('--jitter', 0))
    .option('--start <time>', 'no fire before this RFC 3339 time', instant('--start'))
    .option('--end <time>', 'no fire at or after this RFC 3339 time', instant('--end'))
    .option('--note <text>', 'what the schedule is for')
    .option('--paused', 'create it paused: nothing fires until `weft schedules unpause ID`')
    .action(async (o: CreateFlags, cmd: Command) => {
      await checkTiming(cmd, o);
      const { input, config } = await readJsonOptions({ input: o.input, config: o.config });
      const i = {
        workflowId: o.workflow,
        version: o.version,
        cron: o.cron,
        intervalSeconds: o.every,
        timeZone: o.tz,
        input,
        config,
        labels: o.label,
        overlapPolicy: o.overlap?.toUpperCase() as ScheduleOverlapPolicy | undefined,
        catchUpSeconds: o.catchUp,
        jitterSeconds: o.jitter,
        startAt: o.start,
        endAt: o.end,
        note: o.note,
        paused: o.paused,
      };
      const r = await withClient(o, (c) => c.request(CREATE_SCHEDULE, { i }));
      const s: Schedule = r.createSchedule;
      printAs(
        o.output,
        s,
        () => `schedule ${s.id} created: ${specText(s)}, workflow ${cell(s.workflowId)}; ${s.paused ? 'paused' : `next fire ${when(s.nextFireAt)}`}\n`,
      );
    });

  withOutput(withConnection(schedules.command('list')))
    .description("list the tenant's schedules in creation order")
    .option('--workflow <id>', 'only the schedules of this workflow')
    .action(async (o: ConnectionFlags & { workflow?: string; output: OutputFormat }) => {
      const list = await withClient(o, (c) => listSchedules(c, o.workflow));
      printAs(o.output, list, () => scheduleListTable(list));
    });

  withOutput(withConnection(schedules.command('describe <id>')))
    .description('show a schedule: its fields, pause, counters, upcoming fire times (in its zone and UTC), recent runs and backfills')
    .option('--upcoming <n>', 'how many upcoming fire times (default 5, at most 100)', upcomingCount, 5)
    .action(async (id: string, o: ConnectionFlags & { upcoming: number; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(SCHEDULE_DETAIL, { id, n: o.upcoming, k: DESCRIBE_RECENT }));
      const s: ScheduleDetail = r.schedule!;
      printAs(o.output, s, () => scheduleDetailText(s, Date.now()));
    });

  withOutput(withConnection(schedules.command('delete <id>')))
    .description('delete a schedule and its backfills (operator or admin); the runs it started stay')
    .action(async (id: string, o: ConnectionFlags & { output: OutputFormat }) => {
      const { s, backfills } = await withClient(o, async (c) => {
        const schedule = (await c.request(SCHEDULE_TO_DELETE, { id })).schedule!;
        await c.request(DELETE_SCHEDULE, { id: schedule.id });
        return { s: schedule, backfills: schedule.backfills.length };
      });
      printAs(o.output, { id: s.id, workflowId: s.workflowId, deleted: true, backfillsDeleted: backfills, firedCount: s.firedCount }, () => {
        const extra = backfills ? ` and its ${backfills === 100 ? '100 or more' : backfills} backfill${backfills === 1 ? '' : 's'}` : '';
        const runs = s.firedCount === 1 ? 'the 1 run it started stays' : `the ${s.firedCount} runs it started stay`;
        return `schedule ${s.id} deleted (${specText(s)}, workflow ${cell(s.workflowId)})${extra}; ${runs}\n`;
      });
    });

  scheduleFireCommands(schedules);
}

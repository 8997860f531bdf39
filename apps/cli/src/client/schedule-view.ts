import type { BackfillFieldsFragment, ScheduleFieldsFragment, ScheduleRunFieldsFragment } from './generated/graphql.js';
import { cell, clip, fields, table, took, when } from './output.js';
import { labelsText } from './label-arguments.js';
import { lengthText } from './schedule-arguments.js';

/** What `schedules list`, `create` and `describe` read of a schedule: every field of the API's Schedule. */
export const SCHEDULE_FIELDS = /* GraphQL */ `
  fragment ScheduleFields on Schedule {
    id workflowId version cron intervalSeconds timeZone input config labels startAt endAt jitterSeconds note
    overlapPolicy catchUpSeconds paused pauseNote pausedBy pausedAt nextFireAt bufferedTimes firedCount
    skipped { overlap missed bufferFull startFailed alreadyFired } lastNominalTime lastFiredAt lastRunId lastError createdAt updatedAt
  }
`;

/** What is read of a backfill. */
export const BACKFILL_FIELDS = /* GraphQL */ `
  fragment BackfillFields on ScheduleBackfill { id scheduleId from to total started skipped pending nextNominalTime createdAt finishedAt }
`;

/** What `describe` reads of each recent run. */
export const SCHEDULE_RUN_FIELDS = /* GraphQL */ `
  fragment ScheduleRunFields on Run { id status version nominalTime createdAt finishedAt }
`;

/** A schedule as the API returns it ({@link SCHEDULE_FIELDS}). */
export type Schedule = ScheduleFieldsFragment;

/** Skip counters by reason, as the API names them. */
export type Skips = Schedule['skipped'];

/** A backfill as the API returns it ({@link BACKFILL_FIELDS}). */
export type Backfill = BackfillFieldsFragment;

/** A schedule as `describe` reads it: the schedule, its next fire times, recent runs and backfills. */
export type ScheduleDetail = Schedule & { upcoming: string[]; recentRuns: ScheduleRunFieldsFragment[]; backfills: Backfill[] };

/** The skip reasons as people read them, in the API's order. */
const SKIP_LABELS: [keyof Skips, string][] = [
  ['overlap', 'overlap'],
  ['missed', 'missed'],
  ['bufferFull', 'buffer full'],
  ['startFailed', 'start failed'],
  ['alreadyFired', 'already fired'],
];

/** When a schedule fires: `0 9 * * * (Asia/Kolkata)` or `every 30s`. */
export function specText(s: Pick<Schedule, 'cron' | 'intervalSeconds' | 'timeZone'>): string {
  return s.cron !== null ? `${cell(s.cron)} (${s.timeZone})` : `every ${lengthText(s.intervalSeconds ?? 0)}`;
}

/** The overlap policy as `--overlap` takes it: `skip`, `buffer_one`. */
export function policyText(p: string): string {
  return p.toLowerCase();
}

/** All skips of a schedule. */
export function skipTotal(s: Skips): number {
  return SKIP_LABELS.reduce((n, [k]) => n + s[k], 0);
}

/** An instant in `zone` as RFC 3339 with that zone's offset: `2030-01-01T09:00:00+05:30`; `-` for none. */
export function zoned(iso: string | null | undefined, zone: string): string {
  if (!iso) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : String(parts.timeZoneName).replace(/^GMT/, '');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

/** The table of `schedules list`. */
export function scheduleListTable(schedules: Schedule[]): string {
  return table(
    ['ID', 'WORKFLOW', 'SPEC', 'OVERLAP', 'PAUSED', 'NEXT FIRE', 'LAST FIRE', 'FIRED/SKIPPED'],
    schedules.map((s) => [
      s.id,
      cell(s.workflowId),
      specText(s),
      policyText(s.overlapPolicy),
      s.paused ? 'yes' : 'no',
      s.paused ? '-' : when(s.nextFireAt),
      when(s.lastFiredAt),
      `${s.firedCount}/${skipTotal(s.skipped)}`,
    ]),
  );
}

/** A backfill's progress: `5 of 13 done (5 started, 0 skipped, 8 pending)`: a skipped time is done, not fired. */
export function backfillProgress(b: Backfill): string {
  return `${b.started + b.skipped} of ${b.total} done (${b.started} started, ${b.skipped} skipped, ${b.pending} pending)`;
}

/** Whether and why the schedule is paused, with who paused or unpaused it last and their note. */
function pausedText(s: Schedule): string {
  const by = s.pausedBy ? ` by ${cell(s.pausedBy)}` : '';
  const note = s.pauseNote !== null ? `: ${cell(s.pauseNote)}` : '';
  if (s.paused) return `yes, since ${when(s.pausedAt)}${by}${note}`;
  return s.pausedBy || s.pauseNote !== null ? `no (last unpaused${by}${note})` : 'no';
}

/** The view of `schedules describe`: the fields, then the upcoming times, the recent runs and the backfills. */
export function scheduleDetailText(s: ScheduleDetail, now: number): string {
  const skips = skipTotal(s.skipped);
  const byReason = SKIP_LABELS.filter(([k]) => s.skipped[k] > 0).map(([k, label]) => `${label} ${s.skipped[k]}`);
  const last = s.lastFiredAt ? `${when(s.lastFiredAt)} (nominal ${when(s.lastNominalTime)}, run ${cell(s.lastRunId)})` : '-';
  const head = fields([
    ['schedule', s.id],
    ['workflow', `${cell(s.workflowId)} ${s.version === null ? "(the workflow's default version at each fire)" : `version ${s.version}`}`],
    ['spec', s.cron !== null ? `cron ${cell(s.cron)} in ${s.timeZone}` : `every ${lengthText(s.intervalSeconds ?? 0)}`],
    ['overlap', policyText(s.overlapPolicy)],
    ['catch-up', lengthText(s.catchUpSeconds)],
    ['jitter', lengthText(s.jitterSeconds)],
    ['start', when(s.startAt)],
    ['end', when(s.endAt)],
    ['input', clip(cell(s.input), 200)],
    ['config', clip(cell(s.config), 200)],
    ...(labelsText(s.labels) === '-' ? [] : [['labels', cell(labelsText(s.labels))] as [string, string]]),
    ['note', cell(s.note)],
    ['paused', pausedText(s)],
    ['next fire', s.paused ? `- (paused; unpausing computes it from then)` : when(s.nextFireAt)],
    ['last fire', last],
    ['last error', cell(s.lastError)],
    ['fired', String(s.firedCount)],
    ['skipped', `${skips}${byReason.length ? ` (${byReason.join(', ')})` : ''}`],
    ['buffered', s.bufferedTimes.length ? s.bufferedTimes.map(when).join(', ') : '-'],
    ['created', when(s.createdAt)],
    ['updated', when(s.updatedAt)],
  ]);
  const utc = s.timeZone === 'UTC';
  const upcoming = s.upcoming.length
    ? table(
        utc ? ['UPCOMING (UTC)'] : [`UPCOMING (${s.timeZone})`, 'UTC'],
        s.upcoming.map((t) => (utc ? [when(t)] : [zoned(t, s.timeZone), when(t)])),
      )
    : 'no upcoming fire times\n';
  const runs = s.recentRuns.length
    ? table(
        ['RUN', 'STATUS', 'VERSION', 'NOMINAL TIME', 'CREATED', 'DURATION'],
        s.recentRuns.map((r) => [r.id, r.status, String(r.version), when(r.nominalTime), when(r.createdAt), took(r.createdAt, r.finishedAt, now)]),
      )
    : 'no runs yet\n';
  const backfills = s.backfills.length
    ? table(
        ['BACKFILL', 'FROM', 'TO', 'PROGRESS', 'STATUS'],
        s.backfills.map((b) => [
          b.id,
          when(b.from),
          when(b.to),
          backfillProgress(b),
          b.finishedAt ? `finished ${when(b.finishedAt)}` : `next ${when(b.nextNominalTime)}`,
        ]),
      )
    : 'no backfills\n';
  return [head, upcoming, runs, backfills].join('\n');
}

import { parseJsonField, prettyJson } from '../runs/json.js';
import { isoToLocalInput, localInputToIso } from '../runs/time.js';
import type { Json } from '../runs/types.js';
import { OVERLAP_POLICIES, type OverlapPolicy, type ScheduleDetail, type ScheduleFire, type ScheduleSkips, type ScheduleSummary } from './operations.js';

/** The words the schedules pages use for a schedule's fields, and the form's values to the API's input. */

/** The skip reasons, in the order the page lists them, with what each means. */
export const SKIP_REASONS: { key: keyof ScheduleSkips; label: string; means: string }[] = [
  { key: 'overlap', label: 'Overlap', means: 'the previous run was still RUNNING under SKIP' },
  { key: 'missed', label: 'Missed', means: 'due longer ago than the catch-up window (the scheduler was down)' },
  { key: 'bufferFull', label: 'Buffer full', means: 'BUFFER_ONE kept one already (or BUFFER_ALL its maximum)' },
  { key: 'startFailed', label: 'Start failed', means: 'the run could not start (see the last error)' },
  { key: 'alreadyFired', label: 'Already fired', means: 'a run for that nominal time existed already' },
];

/** What each overlap policy does while the schedule's previous run is still RUNNING. */
export const OVERLAP_MEANS: Record<OverlapPolicy, string> = {
  SKIP: 'skip the fire (counted)',
  BUFFER_ONE: 'keep one fire, start it when the run ends',
  BUFFER_ALL: 'keep every fire, start them in order',
  CANCEL_OTHER: 'cancel the running run, then start',
  ALLOW_ALL: 'start beside it',
};

/** `BUFFER_ONE` as `buffer one`. */
export function overlapText(policy: string): string {
  return policy.toLowerCase().replace(/_/g, ' ');
}

/** Nominal times skipped for any reason. */
export function skippedTotal(skips: ScheduleSkips): number {
  return SKIP_REASONS.reduce((sum, r) => sum + (skips[r.key] ?? 0), 0);
}

/** `every 90 s (1 min 30 s)`, `every 3600 s (1 h)`. */
export function intervalText(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['min', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  if (rest && parts.length) parts.push(`${rest} s`);
  return parts.length ? `every ${seconds} s (${parts.join(' ')})` : `every ${seconds} s`;
}

/** The timing of a schedule in one line: its cron and zone, or its interval. */
export function timingText(s: Pick<ScheduleSummary, 'cron' | 'intervalSeconds' | 'timeZone'>): string {
  if (s.cron) return `cron ${s.cron} (${s.timeZone})`;
  if (s.intervalSeconds) return intervalText(s.intervalSeconds);
  return '—';
}

/** The version a schedule runs: `3` pinned, or `default`. */
export function versionText(version: number | null): string {
  return version === null ? 'default' : String(version);
}

const pad = (n: string) => n.padStart(2, '0');

/**
 * An instant as `2025-03-04 09:00:00 GMT+5:30` in the IANA zone `zone` (the reader's own
 * zone when absent); the ISO text itself when it is not a date or the zone is unknown.
 */
export function formatInZone(iso: string, zone?: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    }).formatToParts(date);
  } catch {
    return iso;
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${pad(part('month'))}-${pad(part('day'))} ${pad(part('hour'))}:${pad(part('minute'))}:${pad(part('second'))} ${part('timeZoneName')}`.trim();
}

/** The reader's IANA time zone (`Europe/Paris`), or UTC when the browser does not say. */
export function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The IANA zones the browser knows, UTC first (the form's suggestions; the API checks the zone). */
export function timeZones(): string[] {
  let zones: string[] = [];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    // An older browser: the field still takes any zone, only without suggestions.
  }
  return ['UTC', ...zones.filter((z) => z !== 'UTC')];
}

/** What a trigger did, in words (the run itself is linked beside it when there is one). */
export function fireText(fire: ScheduleFire): string {
  const cancelled = fire.cancelledRunIds.length
    ? ` It cancelled ${fire.cancelledRunIds.length} running run${fire.cancelledRunIds.length === 1 ? '' : 's'} first.`
    : '';
  if (fire.outcome === 'STARTED') return `Triggered: started a run for the nominal time ${fire.nominalTime}.${cancelled}`;
  if (fire.outcome === 'BUFFERED') return `Buffered: a run is still RUNNING; the fire for ${fire.nominalTime} starts when it ends.${cancelled}`;
  const why = fire.reason === 'already_fired' ? 'already_fired (a run for this nominal time exists)' : (fire.reason ?? 'no reason given');
  return `Skipped: ${why}.${cancelled}`;
}

/** The schedule form's own values: numbers and JSON as typed, dates as `datetime-local` values. */
export interface ScheduleDraft {
  workflowId: string;
  version: string;
  timing: 'cron' | 'interval';
  cron: string;
  intervalSeconds: string;
  timeZone: string;
  overlapPolicy: OverlapPolicy;
  catchUpSeconds: string;
  jitterSeconds: string;
  input: string;
  config: string;
  startAt: string;
  endAt: string;
  note: string;
}

export const EMPTY_DRAFT: ScheduleDraft = {
  workflowId: '',
  version: '',
  timing: 'interval',
  cron: '',
  intervalSeconds: '3600',
  timeZone: 'UTC',
  overlapPolicy: 'SKIP',
  catchUpSeconds: '60',
  jitterSeconds: '0',
  input: '{}',
  config: '{}',
  startAt: '',
  endAt: '',
  note: '',
};

/** The form's values for editing `s`. */
export function draftOf(s: ScheduleDetail): ScheduleDraft {
  return {
    workflowId: s.workflowId,
    version: s.version === null ? '' : String(s.version),
    timing: s.cron ? 'cron' : 'interval',
    cron: s.cron ?? '',
    intervalSeconds: s.intervalSeconds === null ? '' : String(s.intervalSeconds),
    timeZone: s.timeZone,
    overlapPolicy: (OVERLAP_POLICIES as readonly string[]).includes(s.overlapPolicy) ? s.overlapPolicy : 'SKIP',
    catchUpSeconds: String(s.catchUpSeconds),
    jitterSeconds: String(s.jitterSeconds),
    input: prettyJson(s.input),
    config: prettyJson(s.config),
    startAt: isoToLocalInput(s.startAt),
    endAt: isoToLocalInput(s.endAt),
    note: s.note ?? '',
  };
}

/** The fields of CreateScheduleInput / UpdateScheduleInput the form sets. */
export type ScheduleInput = Record<string, string | number | boolean | Json | null>;

export type DraftResult = { ok: true; input: ScheduleInput } | { ok: false; error: string };

/**
 * The API's input from the form, or the first problem the form can tell by itself (a field
 * that is not a number, not JSON, not a date), naming the field. Everything else (a bad cron,
 * an unknown zone, an interval under 1 s) is the API's to say. For an update (`update`) an
 * emptied optional field is sent as null (cleared, or back to its default); for a create it is
 * left out. The unused one of cron and interval is cleared on update.
 */
export function toScheduleInput(draft: ScheduleDraft, update = false): DraftResult {
  const input: ScheduleInput = {};
  const empty = (key: string) => {
    if (update) input[key] = null;
  };
  const workflowId = draft.workflowId.trim();
  if (!workflowId) return { ok: false, error: 'Choose a workflow.' };
  input.workflowId = workflowId;

  const whole = (label: string, text: string, key: string, min?: number): string | null => {
    const t = text.trim();
    if (!t) return (empty(key), null);
    if (!/^-?\d+$/.test(t) || !Number.isSafeInteger(Number(t)) || (min !== undefined && Number(t) < min)) {
      return `${label} must be a whole number${min !== undefined ? ` from ${min}` : ''}, not "${t}".`;
    }
    input[key] = Number(t);
    return null;
  };

  const problem =
    whole('Version', draft.version, 'version', 1) ??
    (draft.timing === 'cron' ? cronProblem(draft, input, update) : intervalProblem(draft, input, update, whole)) ??
    whole('Catch-up seconds', draft.catchUpSeconds, 'catchUpSeconds') ??
    whole('Jitter seconds', draft.jitterSeconds, 'jitterSeconds');
  if (problem) return { ok: false, error: problem };

  const zone = draft.timeZone.trim();
  if (zone) input.timeZone = zone;
  else empty('timeZone');
  input.overlapPolicy = draft.overlapPolicy;

  for (const [label, key] of [
    ['Input', 'input'],
    ['Config', 'config'],
  ] as const) {
    const parsed = parseJsonField(label, draft[key], { object: true, fallback: {} });
    if (!parsed.ok) return { ok: false, error: parsed.error };
    input[key] = parsed.value;
  }

  for (const [label, key] of [
    ['Start', 'startAt'],
    ['End', 'endAt'],
  ] as const) {
    const text = draft[key].trim();
    if (!text) {
      empty(key);
      continue;
    }
    const iso = localInputToIso(text);
    if (!iso) return { ok: false, error: `${label} is not a date and time: "${text}".` };
    input[key] = iso;
  }

  const note = draft.note.trim();
  if (note) input.note = note;
  else empty('note');
  return { ok: true, input };
}

function cronProblem(draft: ScheduleDraft, input: ScheduleInput, update: boolean): string | null {
  const cron = draft.cron.trim();
  if (!cron) return 'Enter a cron expression, e.g. 0 9 * * 1-5 or @daily.';
  input.cron = cron;
  if (update) input.intervalSeconds = null;
  return null;
}

function intervalProblem(
  draft: ScheduleDraft,
  input: ScheduleInput,
  update: boolean,
  whole: (label: string, text: string, key: string, min?: number) => string | null,
): string | null {
  if (!draft.intervalSeconds.trim()) return 'Enter the interval in seconds, e.g. 3600.';
  const problem = whole('Interval seconds', draft.intervalSeconds, 'intervalSeconds');
  if (!problem && update) input.cron = null;
  return problem;
}

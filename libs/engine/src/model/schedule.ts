/**
 * Schedules: runs started by the clock. What a schedule says (its timing, overlap policy and
 * catch-up window) and the checks a schedule's fields pass before they are stored. The fire
 * times themselves are computed in `schedule-times.ts`. Pure: no clock is read here; every
 * "now" comes in as an argument.
 */

/**
 * What happens when a fire comes while the schedule's previous run is still RUNNING:
 * - `skip` (default): the fire is skipped and counted (`overlap`);
 * - `buffer_one`: one fire is kept and started when the active run ends; a further one while one
 *   is kept is skipped and counted (`buffer_full`);
 * - `buffer_all`: every fire is kept (up to {@link MAX_BUFFERED_FIRES}) and they start in order,
 *   one after each run's end;
 * - `cancel_other`: the active run is cancelled, then the new one starts;
 * - `allow_all`: the new run starts beside the active one.
 */
export const OverlapPolicy = {
  Skip: 'skip',
  BufferOne: 'buffer_one',
  BufferAll: 'buffer_all',
  CancelOther: 'cancel_other',
  AllowAll: 'allow_all',
} as const;
/** One of the {@link OverlapPolicy} values. */
export type OverlapPolicy = (typeof OverlapPolicy)[keyof typeof OverlapPolicy];
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = Object.values(OverlapPolicy);

/** Why a nominal fire time did not start a run. */
export const SkipReason = {
  /** The previous run was still active under the `skip` policy. */
  Overlap: 'overlap',
  /** The scheduler was down past the catch-up window when the time came. */
  Missed: 'missed',
  /** `buffer_one` already kept a fire, or `buffer_all` kept {@link MAX_BUFFERED_FIRES}. */
  BufferFull: 'buffer_full',
  /** The run could not start (its workflow or version is gone or deprecated, its input refused). */
  StartFailed: 'start_failed',
  /** A run with this nominal time already exists (a backfill over fired times). */
  AlreadyFired: 'already_fired',
} as const;
/** One of the {@link SkipReason} values. */
export type SkipReason = (typeof SkipReason)[keyof typeof SkipReason];
export const SKIP_REASONS: readonly SkipReason[] = Object.values(SkipReason);

/** The default catch-up window, in seconds: fire times missed by at most this much are still fired. */
export const DEFAULT_CATCH_UP_SECONDS = 60;
/**
 * The least grace of the scheduler, in seconds: how late a poll may reach a due time in its normal
 * course (a poll interval, a drain of many due schedules, a loaded machine). No catch-up window is
 * narrower than the grace, so `catchUpSeconds: 0` means "no catch-up": fire what the scheduler
 * reaches in its normal course, never a time that came due longer than the grace before a poll.
 */
export const MIN_SCHEDULE_GRACE_SECONDS = 10;

/**
 * The grace of a scheduler polling every `pollIntervalMs` milliseconds, in milliseconds: two poll
 * intervals, and at least {@link MIN_SCHEDULE_GRACE_SECONDS}.
 */
export function scheduleGraceMs(pollIntervalMs: number): number {
  return Math.max(MIN_SCHEDULE_GRACE_SECONDS * 1000, 2 * pollIntervalMs);
}
/** The most fires `buffer_all` keeps; a fire beyond it is skipped (`buffer_full`). */
export const MAX_BUFFERED_FIRES = 1_000;
/** The most nominal times one backfill may cover. */
export const MAX_BACKFILL_FIRES = 10_000;
/** The largest jitter, in seconds (one day). */
export const MAX_JITTER_SECONDS = 86_400;
/** The largest interval, in seconds (366 days). */
export const MAX_INTERVAL_SECONDS = 366 * 86_400;
/** The largest catch-up window, in seconds (366 days). */
export const MAX_CATCH_UP_SECONDS = 366 * 86_400;
/** The longest note (pause, unpause, schedule's own), in characters. */
export const MAX_SCHEDULE_NOTE_CHARS = 2_000;
/**
 * The key under which a scheduled run's input carries `{id, nominalTime}` of its schedule:
 * templates read `input.schedule.id` and `input.schedule.nominalTime` (RFC 3339, UTC). A
 * schedule's own input may not use this key.
 */
export const SCHEDULE_INPUT_KEY = 'schedule';

/** When a schedule fires: a cron expression in a time zone, or a fixed interval. */
export interface ScheduleTiming {
  /** 5 fields (minute first), 6 (second first), or `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`. */
  cron?: string | null;
  /** Seconds between fires (at least 1), counted from `startAt` (else the schedule's creation). */
  intervalSeconds?: number | null;
  /** IANA time zone the cron expression is read in (default `UTC`); intervals ignore it. */
  timeZone?: string | null;
  /** No fire before this instant (inclusive). */
  startAt?: Date | null;
  /** No fire at or after this instant. */
  endAt?: Date | null;
}

/** A problem with one field of a schedule, named as the API names it. */
export interface ScheduleProblem {
  path: string;
  message: string;
}

const CRON_NICKNAMES = new Set(['@hourly', '@daily', '@weekly', '@monthly', '@yearly', '@annually', '@midnight']);

/** True when `zone` is an IANA time zone this runtime knows (`UTC` included). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The shape rules of a cron expression that croner does not enforce itself: 5 or 6
 * whitespace-separated fields (croner would also take a seventh, the year), or one of the
 * `@` names. Returns the problem, or undefined when the shape is right (the fields' values are
 * croner's to judge).
 */
export function cronShapeProblem(cron: string): string | undefined {
  const text = cron.trim();
  if (text.startsWith('@'))
    return CRON_NICKNAMES.has(text.toLowerCase()) ? undefined : `unknown cron name ${JSON.stringify(text)}; use @hourly, @daily, @weekly, @monthly or @yearly`;
  const fields = text.split(/\s+/).filter(Boolean).length;
  if (fields !== 5 && fields !== 6) return `a cron expression has 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), not ${fields}`;
  return undefined;
}

/**
 * The problems with a schedule's timing fields, each naming its field (`cron`, `intervalSeconds`,
 * `timeZone`, `endAt`…); empty when the timing is valid. `cronProblem` judges a cron
 * expression's values (the caller passes croner's verdict, see `schedule-times.ts`).
 */
export function timingProblems(t: ScheduleTiming, cronProblem: (cron: string, zone: string) => string | undefined): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  const hasCron = t.cron !== undefined && t.cron !== null;
  const hasInterval = t.intervalSeconds !== undefined && t.intervalSeconds !== null;
  if (hasCron === hasInterval) {
    const message = hasCron ? 'give either cron or intervalSeconds, not both' : 'give either cron or intervalSeconds';
    problems.push({ path: hasCron ? 'intervalSeconds' : 'cron', message });
  }
  const zone = t.timeZone ?? 'UTC';
  if (!isTimeZone(zone))
    problems.push({ path: 'timeZone', message: `unknown time zone ${JSON.stringify(zone)}; use an IANA name such as Europe/Paris or UTC` });
  if (hasCron) {
    const shape = cronShapeProblem(t.cron!);
    const bad = shape ?? (isTimeZone(zone) ? cronProblem(t.cron!, zone) : undefined);
    if (bad) problems.push({ path: 'cron', message: bad });
  }
  if (hasInterval) {
    const s = t.intervalSeconds!;
    if (!Number.isInteger(s) || s < 1) problems.push({ path: 'intervalSeconds', message: 'must be a whole number of seconds, at least 1' });
    else if (s > MAX_INTERVAL_SECONDS) problems.push({ path: 'intervalSeconds', message: `must be at most ${MAX_INTERVAL_SECONDS} (366 days)` });
  }
  if (t.startAt && t.endAt && t.endAt.getTime() <= t.startAt.getTime()) {
    problems.push({ path: 'endAt', message: `must be after startAt (${t.startAt.toISOString()})` });
  }
  return problems;
}

/** The problems with a jitter or catch-up window in seconds (`path` names the field); empty when valid. */
export function secondsProblems(path: string, value: number | null | undefined, max: number): ScheduleProblem[] {
  if (value === undefined || value === null) return [];
  if (!Number.isInteger(value) || value < 0) return [{ path, message: 'must be a whole number of seconds, at least 0' }];
  if (value > max) return [{ path, message: `must be at most ${max}` }];
  return [];
}

/**
 * The delay a fire at `nominal` of schedule `scheduleId` waits after its nominal time, in
 * milliseconds, from 0 up to `jitterSeconds` · 1000: a hash of the id and the time, so every
 * scheduler replica (and a retry after a crash) computes the same delay, and schedules sharing a
 * cron expression spread out instead of firing together.
 */
export function jitterMs(scheduleId: string, nominal: Date, jitterSeconds: number): number {
  if (!jitterSeconds || jitterSeconds <= 0) return 0;
  const text = `${scheduleId}@${nominal.getTime()}`;
  // FNV-1a, 32 bits.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % (jitterSeconds * 1000 + 1);
}

/**
 * The idempotency key of the run a schedule starts for nominal time `nominal`:
 * `schedule:<schedule id>:<nominal time, ISO 8601 UTC with milliseconds>`. The same schedule and
 * time always give the same key, so no two runs can exist for one nominal time.
 */
export function scheduleRunKey(scheduleId: string, nominal: Date): string {
  return `schedule:${scheduleId}:${nominal.toISOString()}`;
}

/**
 * What a fire does, given the schedule's overlap policy, whether its previous run is still
 * active and how many fires it keeps already: `start` a run, `cancel_then_start` (cancel the
 * active run first), `buffer` the fire, or `skip` it with a reason.
 */
export type FireDecision = { kind: 'start' } | { kind: 'cancel_then_start' } | { kind: 'buffer' } | { kind: 'skip'; reason: SkipReason };

/** Decides a fire under `policy` (see {@link FireDecision}). */
export function decideFire(policy: OverlapPolicy, active: boolean, buffered: number): FireDecision {
  if (!active)
    return buffered > 0 && (policy === OverlapPolicy.BufferOne || policy === OverlapPolicy.BufferAll) ? bufferOr(policy, buffered) : { kind: 'start' };
  switch (policy) {
    case OverlapPolicy.AllowAll:
      return { kind: 'start' };
    case OverlapPolicy.CancelOther:
      return { kind: 'cancel_then_start' };
    case OverlapPolicy.BufferOne:
    case OverlapPolicy.BufferAll:
      return bufferOr(policy, buffered);
    default:
      return { kind: 'skip', reason: SkipReason.Overlap };
  }
}

/** Buffer a fire behind the ones already kept, or skip it when the buffer is full. */
function bufferOr(policy: OverlapPolicy, buffered: number): FireDecision {
  const cap = policy === OverlapPolicy.BufferOne ? 1 : MAX_BUFFERED_FIRES;
  return buffered < cap ? { kind: 'buffer' } : { kind: 'skip', reason: SkipReason.BufferFull };
}

/**
 * A schedule's nominal fire times, computed with croner for cron expressions (time zones and
 * daylight saving time included) and by arithmetic for fixed intervals. Pure: every "after" is
 * an argument; croner is only asked about given instants and never starts a timer.
 *
 * Daylight saving time, as croner evaluates a cron expression in a zone:
 * - a local time that does not exist on a spring-forward day (02:30 in America/New_York on
 *   2027-03-14, when 02:00 jumps to 03:00) fires once, at the first instant after the gap
 *   (03:00 local, 07:00 UTC);
 * - a local time that happens twice on a fall-back day (01:30 on 2027-11-07) fires once, at its
 *   first occurrence (01:30 EDT); 02:30 on that day exists once (EST) and fires once. This holds
 *   for every expression, hourly and every-n-minutes ones too: croner would fire some of them in
 *   the repeated hour again, so each of its times whose local time already passed is left out
 *   ({@link repeatsLocalTime}). `0 * * * *` fires at 01:00 EDT and then 02:00 EST, two real hours
 *   apart; a cron read in a zone follows that zone's clock, not elapsed time.
 */
import { Cron } from 'croner';
import { timingProblems, type ScheduleProblem, type ScheduleTiming } from './schedule.js';

/** A timing whose fields were checked by {@link scheduleTimingProblems}, with the anchor of its interval. */
export interface CheckedTiming extends ScheduleTiming {
  /** Where a fixed interval counts from when there is no `startAt`: the schedule's creation. */
  anchor: Date;
}

/** croner's verdict on a cron expression in `zone`, or undefined when it takes it. */
export function cronValueProblem(cron: string, zone: string): string | undefined {
  try {
    const c = new Cron(cron.trim(), { timezone: zone, paused: true });
    // An expression that can never match (30 February) has no next time.
    if (c.nextRun(new Date(Date.UTC(2000, 0, 1))) === null) return 'the cron expression never matches';
    return undefined;
  } catch (err) {
    return `invalid cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

/** Every problem with a schedule's timing fields, each naming its field; empty when valid. */
export function scheduleTimingProblems(t: ScheduleTiming): ScheduleProblem[] {
  return timingProblems(t, cronValueProblem);
}

/**
 * The first nominal fire time strictly after `after` (and at or after `startAt`, before `endAt`),
 * or null when the schedule has none left. Cron times have whole-second precision; interval
 * times are `anchor + k · intervalSeconds` (anchor: `startAt`, else the creation).
 */
export function nextFireTime(t: CheckedTiming, after: Date): Date | null {
  return fireTimeAfter(t)(after);
}

/** Offset probes: how far before an instant the offset it may have fallen back from is looked for (3 hours, and a day for a date-line move). */
const FALL_BACK_PROBES_MS = [3 * 3_600_000, 86_400_000];

/** A zone's offset from UTC at an instant, in milliseconds (east positive), read through `Intl`. */
function offsetReader(zone: string): (at: number) => number {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  return (at) => {
    const part: Record<string, number> = {};
    for (const p of format.formatToParts(new Date(at))) if (p.type !== 'literal') part[p.type] = Number(p.value);
    // Years before 100 would be read as 19xx by Date.UTC: set the full year explicitly.
    const wall = new Date(Date.UTC(2000, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!));
    wall.setUTCFullYear(part.year!);
    return wall.getTime() - (at - (((at % 1000) + 1000) % 1000));
  };
}

/**
 * True when the local time `at` shows in its zone was already shown by an earlier instant: `at` lies
 * in the second pass of a fall-back (01:30 EST on 2026-11-01 in America/New_York, after 01:30 EDT).
 * Such an instant `e` has a larger offset `o'` and `e = at - (o' - offset(at))`; `o'` is the offset
 * some hours before `at` (see {@link FALL_BACK_PROBES_MS}), and `e` must really have it.
 */
function repeatsLocalTime(offsetAt: (at: number) => number, at: Date): boolean {
  const t = at.getTime();
  const o = offsetAt(t);
  for (const back of FALL_BACK_PROBES_MS) {
    const earlier = offsetAt(t - back);
    if (earlier > o && offsetAt(t - (earlier - o)) === earlier) return true;
  }
  return false;
}

/** {@link nextFireTime} of `t` as a function of `after`, the cron expression parsed once for every call. */
function fireTimeAfter(t: CheckedTiming): (after: Date) => Date | null {
  const zone = t.timeZone ?? 'UTC';
  const cron = t.cron ? new Cron(t.cron.trim(), { timezone: zone, paused: true }) : null;
  const offsetAt = cron ? offsetReader(zone) : null;
  return (after) => {
    const from = t.startAt && t.startAt.getTime() > after.getTime() ? new Date(t.startAt.getTime() - 1) : after;
    let next: Date | null;
    if (cron) {
      next = cron.nextRun(from);
      // A time in the repeated hour of a fall-back fired at its first occurrence: go on past it.
      while (next && repeatsLocalTime(offsetAt!, next)) next = cron.nextRun(next);
    } else {
      const step = t.intervalSeconds! * 1000;
      const anchor = (t.startAt ?? t.anchor).getTime();
      const k = from.getTime() < anchor ? 0 : Math.floor((from.getTime() - anchor) / step) + 1;
      next = new Date(anchor + k * step);
    }
    if (next && t.endAt && next.getTime() >= t.endAt.getTime()) return null;
    return next;
  };
}

/** The next `count` nominal fire times strictly after `after`, fewer when the schedule ends. */
export function upcomingFireTimes(t: CheckedTiming, after: Date, count: number): Date[] {
  const nextFireTime = fireTimeAfter(t);
  const out: Date[] = [];
  for (let at = after; out.length < count;) {
    const next = nextFireTime(at);
    if (!next) break;
    out.push(next);
    at = next;
  }
  return out;
}

/**
 * The nominal fire times in `[from, to]` (both inclusive), at most `limit` + 1 of them, so a
 * caller can tell a range holding more than `limit` times.
 */
export function fireTimesBetween(t: CheckedTiming, from: Date, to: Date, limit: number): Date[] {
  const nextFireTime = fireTimeAfter(t);
  const out: Date[] = [];
  for (let next = nextFireTime(new Date(from.getTime() - 1)); next && next.getTime() <= to.getTime() && out.length <= limit; next = nextFireTime(next)) {
    out.push(next);
  }
  return out;
}

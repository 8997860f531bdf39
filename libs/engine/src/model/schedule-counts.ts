/**
 * How many nominal times a range of a schedule holds, bounded by arithmetic instead of walking
 * the times one by one, and the smallest gap a schedule's timing allows between two fires. A
 * backfill over more times than it may hold is refused from these bounds alone, so refusing a
 * range of every second over a century costs as little as refusing an hour of it. Pure: croner
 * only parses the expression here; no fire time is computed.
 *
 * Cron bounds read the expression's second, minute and hour fields as sets (from croner's own
 * parse). Between two consecutive fires there are at least `minGap` and, when every day (or
 * every listed weekday) matches, at most `maxGap` of local time. In a zone that changes its
 * offset, a repeated local hour fires once and a skipped one is folded into the instant after
 * it, so real gaps can differ from local ones around a change: the bounds then allow
 * {@link ZONE_SLACK_MS} of repeated time and {@link ZONE_CHANGES_PER_YEAR} changes per started year.
 */
import { CronPattern } from 'croner';
import type { ScheduleTiming } from './schedule.js';
import type { CheckedTiming } from './schedule-times.js';

const SECOND = 1_000;
const DAY = 86_400 * SECOND;
const YEAR = 365 * DAY;
/** Repeated local time one offset change may add to a gap (a day: a date-line move included). */
const ZONE_SLACK_MS = DAY;
/** Offset changes a zone may make in a year, counted generously (most make two, a few four). */
const ZONE_CHANGES_PER_YEAR = 8;
/** The years croner computes times in: none before year 1 or after 9999. */
const FIRST_INSTANT = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** Zones without offset changes, where local gaps are real gaps. */
const FIXED_ZONES = new Set([
  'utc',
  'etc/utc',
  'etc/uct',
  'uct',
  'gmt',
  'etc/gmt',
  'etc/universal',
  'universal',
  'zulu',
  'etc/zulu',
  'etc/gmt0',
  'etc/gmt+0',
  'etc/gmt-0',
  'gmt0',
]);

/** At least and at most how many nominal times a range holds; `atMost` may be `Infinity` (no cheap bound). */
export interface FireCountBounds {
  atLeast: number;
  atMost: number;
}

/** The time-of-day fields of a cron expression as sorted sets, and which days it matches. */
interface CronClock {
  seconds: number[];
  minutes: number[];
  hours: number[];
  /**
   * Largest number of days from one matching day to the next: 1 when every day matches, up to 7
   * when only weekdays are listed; null when years, months or days of the month restrict it (no cheap bound).
   */
  dayStep: number | null;
}

const members = (flags: readonly number[]): number[] => flags.flatMap((v, i) => (v ? [i] : []));

/** Reads `cron` with croner's parser. @throws croner's error for an invalid expression. */
function cronClock(cron: string): CronClock {
  const p = new CronPattern(cron.trim(), 'UTC');
  // A year field (croner's seventh) restricts the days as months do.
  const everyMonth = p.month.every(Boolean) && (p.starYear || p.year.every(Boolean));
  const everyDom = p.starDOM || (p.day.every(Boolean) && !p.lastDayOfMonth && !p.lastWeekday && p.nearestWeekdays.every((w) => !w));
  // A weekday is listed plainly (0) or for some of its weeks (#n, L): only plain lists give a bound.
  const plainDow = p.dayOfWeek.every((v) => v === 0 || v === 0b111111);
  const weekdays = members(p.dayOfWeek);
  let dayStep: number | null = null;
  if (everyMonth && everyDom && (p.starDOW || weekdays.length === 7)) dayStep = 1;
  // With every day of the month, the listed weekdays all match (whether croner ORs or ANDs them).
  else if (everyMonth && everyDom && plainDow && weekdays.length > 0) dayStep = largestCyclicStep(weekdays, 7);
  return { seconds: members(p.second), minutes: members(p.minute), hours: members(p.hour), dayStep };
}

/** The largest step between consecutive members of `sorted` going round a cycle of `size`. */
function largestCyclicStep(sorted: readonly number[], size: number): number {
  let step = sorted[0]! + size - sorted[sorted.length - 1]!;
  for (let i = 1; i < sorted.length; i++) step = Math.max(step, sorted[i]! - sorted[i - 1]!);
  return step;
}

/** The gaps, in seconds, between consecutive times of day of a clock, the step to the next matching day last. */
function dayGaps(c: CronClock, dayStep: number): { within: number[]; toNextDay: number } {
  const [s0, sN, m0, mN] = [c.seconds[0]!, c.seconds.at(-1)!, c.minutes[0]!, c.minutes.at(-1)!];
  const within: number[] = [];
  for (let i = 1; i < c.seconds.length; i++) within.push(c.seconds[i]! - c.seconds[i - 1]!);
  for (let i = 1; i < c.minutes.length; i++) within.push(60 * (c.minutes[i]! - c.minutes[i - 1]!) + s0 - sN);
  for (let i = 1; i < c.hours.length; i++) within.push(3600 * (c.hours[i]! - c.hours[i - 1]!) + 60 * (m0 - mN) + s0 - sN);
  const toNextDay = 86_400 * dayStep - 3600 * (c.hours.at(-1)! - c.hours[0]!) + 60 * (m0 - mN) + s0 - sN;
  return { within, toNextDay };
}

/**
 * The smallest gap, in seconds, a timing allows between two fires: `intervalSeconds` itself, or
 * for a cron expression the smallest step of its seconds, minutes and hours taken together (in
 * its zone's local time: `0,30 * * * * *` gives 30, `0 9,17 * * *` eight hours).
 * @throws croner's error for an invalid cron expression (check the timing first).
 */
export function minFireGapSeconds(t: Pick<ScheduleTiming, 'cron' | 'intervalSeconds'>): number {
  if (!t.cron) return t.intervalSeconds!;
  const c = cronClock(t.cron);
  const g = dayGaps(c, 1);
  return Math.min(g.toNextDay, ...g.within);
}

/**
 * At least and at most how many nominal times of `t` lie in `[from, to]` (both inclusive; and
 * from `startAt`, before `endAt`, as `nextFireTime` gives them; an interval counts from its
 * anchor). Exact for an interval. For a cron expression, `atLeast` assumes the widest gap
 * between two fires, `atMost` the narrowest (see the file's comment); `atLeast` is 0 when the
 * expression restricts months or days of the month. Computed from the fields, never by walking.
 */
export function fireCountBounds(t: CheckedTiming, from: Date, to: Date): FireCountBounds {
  const start = Math.max(from.getTime(), t.startAt?.getTime() ?? -Infinity);
  const end = Math.min(to.getTime(), (t.endAt?.getTime() ?? Infinity) - 1);
  if (!t.cron) {
    const step = t.intervalSeconds! * SECOND;
    const anchor = (t.startAt ?? t.anchor).getTime();
    const first = Math.max(0, Math.ceil((start - anchor) / step));
    const last = Math.floor((end - anchor) / step);
    const n = Math.max(0, last - first + 1);
    return { atLeast: n, atMost: n };
  }
  const lo = Math.max(start, FIRST_INSTANT);
  const hi = Math.min(end, LAST_INSTANT);
  if (hi < lo) return { atLeast: 0, atMost: 0 };
  const c = cronClock(t.cron);
  const span = hi - lo;
  const fixed = FIXED_ZONES.has((t.timeZone ?? 'UTC').toLowerCase());
  const changes = fixed ? 0 : ZONE_CHANGES_PER_YEAR * (Math.ceil((span + 1) / YEAR) + 1);
  const min = dayGaps(c, 1);
  const minGap = Math.min(min.toNextDay, ...min.within) * SECOND;
  // Each change folds at most two gaps (the ones either side of its instant) to as little as nothing.
  const atMost = Math.floor(span / minGap) + 1 + 2 * changes;
  if (c.dayStep === null) return { atLeast: 0, atMost };
  const max = dayGaps(c, c.dayStep);
  const maxGap = Math.max(max.toNextDay, ...max.within) * SECOND;
  // The fire before `from` and the one after `to` are one gap apart per time in between, plus one:
  // the span is shorter than that, and each change adds at most ZONE_SLACK_MS to one gap.
  const atLeast = Math.max(0, Math.floor((span - changes * ZONE_SLACK_MS) / maxGap));
  return { atLeast, atMost };
}

/** How a backfill of a range is counted: refused from the bounds, known from them, or walked with a stop. */
export type BackfillCount =
  /** Over the cap by arithmetic alone: refuse without computing a time. */
  | { kind: 'over'; atLeast: number }
  /** Exactly `total` times (an interval): the first is the only one to compute. */
  | { kind: 'exact'; total: number }
  /** Walk the times, stopping past `limit` (at most `limit` + 1 steps). */
  | { kind: 'walk'; limit: number };

/**
 * How to count the backfill of `[from, to]` under a cap of `cap` times: `over` when even the
 * lower bound passes the cap, `exact` when the bounds meet (an interval), else `walk` with the
 * cap as its stop — so no range costs more than `cap` + 1 computed times, and a hopeless one none.
 */
export function backfillCount(t: CheckedTiming, from: Date, to: Date, cap: number): BackfillCount {
  const b = fireCountBounds(t, from, to);
  if (b.atLeast > cap) return { kind: 'over', atLeast: b.atLeast };
  if (b.atLeast === b.atMost) return { kind: 'exact', total: b.atLeast };
  return { kind: 'walk', limit: cap };
}

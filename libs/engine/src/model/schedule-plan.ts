/**
 * Which of a schedule's nominal times are due at a given now, and which of them came too long
 * ago to fire (the catch-up window). Pure: `now` is an argument.
 */
import { jitterMs, MIN_SCHEDULE_GRACE_SECONDS } from './schedule.js';
import { nextFireTime, type CheckedTiming } from './schedule-times.js';

/** Most due times one plan returns; the rest are left for the next pass. */
export const MAX_FIRES_PER_PASS = 100;
/** Most missed times one plan counts one by one before jumping to the window's start. */
const MAX_MISSED_COUNTED = 100_000;

/** What a schedule's clock asks for at one moment. */
export interface ClockPlan {
  /** Nominal times to fire now, oldest first (at most {@link MAX_FIRES_PER_PASS}). */
  due: Date[];
  /** Nominal times that were due longer ago than the catch-up window: skipped, not fired. */
  missed: number;
  /** The next nominal time after those, or null when the schedule has none left. */
  next: Date | null;
  /** When `next` is due: it plus its jitter. */
  nextDue: Date | null;
}

/**
 * The plan of schedule `scheduleId` whose next nominal time is `nextFireAt`, at `now`: every
 * nominal time whose due time (nominal + jitter) has come is due, unless it came more than the
 * window before `now` — then it is missed. The window is `catchUpSeconds`, or the scheduler's
 * `graceMs` (milliseconds; see `scheduleGraceMs`) when that is longer: a poll always reaches a due
 * time somewhat late, and a time reached within the grace was not missed, so `catchUpSeconds: 0`
 * fires on time under ordinary lag. After an outage only the times within the window fire, never
 * a burst of everything missed (unless the window is that large).
 */
export function planClockFires(
  t: CheckedTiming,
  scheduleId: string,
  nextFireAt: Date | null,
  now: Date,
  catchUpSeconds: number,
  jitterSeconds: number,
  graceMs = MIN_SCHEDULE_GRACE_SECONDS * 1000,
): ClockPlan {
  const cutoff = now.getTime() - Math.max(catchUpSeconds * 1000, graceMs);
  const dueAt = (d: Date) => d.getTime() + jitterMs(scheduleId, d, jitterSeconds);
  const due: Date[] = [];
  let missed = 0;
  let next = nextFireAt;
  while (next && dueAt(next) <= now.getTime() && due.length < MAX_FIRES_PER_PASS) {
    if (dueAt(next) < cutoff) {
      missed++;
      // A very long outage of a very frequent schedule: count what is cheap, then jump.
      next = missed >= MAX_MISSED_COUNTED ? nextFireTime(t, new Date(cutoff - 1)) : nextFireTime(t, next);
      if (missed >= MAX_MISSED_COUNTED) while (next && dueAt(next) < cutoff) next = nextFireTime(t, next);
      continue;
    }
    due.push(next);
    next = nextFireTime(t, next);
  }
  return { due, missed, next, nextDue: next ? new Date(dueAt(next)) : null };
}

/** The first nominal time of a schedule strictly after `after`, with its due time. */
export function firstFire(t: CheckedTiming, scheduleId: string, after: Date, jitterSeconds: number): { fireAt: Date | null; dueAt: Date | null } {
  const fireAt = nextFireTime(t, after);
  return { fireAt, dueAt: fireAt ? new Date(fireAt.getTime() + jitterMs(scheduleId, fireAt, jitterSeconds)) : null };
}

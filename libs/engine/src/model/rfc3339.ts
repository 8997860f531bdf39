/** RFC 3339 date-times, as WAIT `until` and `system.now` use them. */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * The latest instant a wake time may take: 9999-12-31T23:59:59.999Z. Later instants do not fit
 * an RFC 3339 (four-digit) year, and PostgreSQL and JSON consumers refuse them.
 */
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a 1-based month of the proleptic Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS[month - 1];
}

/**
 * Parses an RFC 3339 date-time such as `2030-01-01T00:00:00Z` or `2030-01-01T01:00:00.5+01:00`.
 * Returns `undefined` for anything else: dates without a time or an offset, and fields out of
 * range (`2030-02-30`, hour 24, offset +24:00), which `Date.parse` would silently roll over.
 *
 * Second 60 (a leap second, RFC 3339 §5.6 and §5.7) is accepted in the last minute of a UTC day
 * (`2016-12-31T23:59:60Z`, `2017-01-01T00:59:60+01:00`) and read as the following second
 * (`2017-01-01T00:00:00Z`; a fraction is kept: `23:59:60.5Z` is `00:00:00.5Z`), because a
 * JavaScript Date, like POSIX time, has no leap seconds. Second 60 in any other minute is refused.
 */
export function parseRfc3339(s: string): Date | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const offsetMinutes = m[9] === undefined ? 0 : (m[8]!.startsWith('-') ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  if (second === 60 && !lastMinuteOfUtcDay(hour, minute, offsetMinutes)) return undefined;
  // Date.parse refuses second 60: parse second 59 and add the leap second back.
  const ms = Date.parse(second === 60 ? `${s.slice(0, 17)}59${s.slice(19)}` : s);
  if (Number.isNaN(ms)) return undefined;
  return new Date(second === 60 ? ms + 1000 : ms);
}

/** True when local `hour:minute` at `offsetMinutes` east of UTC is 23:59 UTC. */
function lastMinuteOfUtcDay(hour: number, minute: number, offsetMinutes: number): boolean {
  const utc = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
  return utc === 23 * 60 + 59;
}

/** True for an RFC 3339 date-time (see {@link parseRfc3339}). */
export function isRfc3339(s: string): boolean {
  return parseRfc3339(s) !== undefined;
}

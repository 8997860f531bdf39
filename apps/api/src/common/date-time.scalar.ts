import { GraphQLScalarType, Kind } from 'graphql';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** What the validation pipe says of a DateTime input that {@link parseDateTime} refused. */
export const DATE_TIME_MESSAGE = 'must be an RFC 3339 date-time, e.g. 2026-03-07T09:30:00Z';

/**
 * An RFC 3339 date-time (`2026-03-07T09:30:00Z`, `2026-03-07T10:30:00.123+01:00`) as a Date;
 * undefined for anything else, including dates that do not exist (`2026-02-30`, month 13) and
 * the free forms `Date.parse` accepts (`yesterday` is NaN, `March 7 2026` is not).
 */
export function parseDateTime(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const offset = m[8] ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || Number(m[10] ?? 0) > 23 || Number(m[11] ?? 0) > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offset, second, ms);
  return date;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * The `DateTime` scalar (replaces Nest's GraphQLISODateTime, whose `new Date(text)` accepted
 * `March 7 2026` and let `yesterday` through as an Invalid Date that reached PostgreSQL).
 * Output: `toISOString()`. Input: RFC 3339 only; anything else becomes an Invalid Date, which the
 * validation pipe's `@IsDate()` refuses as BAD_USER_INPUT naming the field — for a variable and
 * a literal alike (a scalar that threw would name the field for variables only).
 */
export const GraphQLDateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'A date-time string at UTC, such as 2019-12-03T09:54:33Z, compliant with the date-time format.',
  serialize: (value) => (value instanceof Date ? value.toISOString() : null),
  parseValue: (value) => parseDateTime(value) ?? new Date(NaN),
  parseLiteral: (ast) => (ast.kind === Kind.STRING ? parseDateTime(ast.value) : undefined) ?? new Date(NaN),
});

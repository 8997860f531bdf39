import { GraphQLScalarType, Kind } from 'graphql';
import { parseRfc3339 } from '@weft/engine';

/** What the validation pipe says of a DateTime input that {@link parseDateTime} refused. */
export const DATE_TIME_MESSAGE = 'must be an RFC 3339 date-time, e.g. 2026-03-07T09:30:00Z';

/**
 * An RFC 3339 date-time (`2026-03-07T09:30:00Z`, `2026-03-07T10:30:00.123+01:00`, a leap second
 * `2016-12-31T23:59:60Z` as the following second) as a Date, by the engine's one parser;
 * undefined for anything else, including dates that do not exist (`2026-02-30`, month 13) and
 * the free forms `Date.parse` accepts (`yesterday` is NaN, `March 7 2026` is not).
 */
export function parseDateTime(text: unknown): Date | undefined {
  return typeof text === 'string' ? parseRfc3339(text) : undefined;
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

/** RFC 3339 date-times, as WAIT `until` and `system.now` use them (seed 000 `time.RFC3339`). */

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 date-time such as `2030-01-01T00:00:00Z` or `2030-01-01T01:00:00.5+01:00`.
 * Returns `undefined` for anything else (dates without a time or an offset, invalid dates).
 */
export function parseRfc3339(s: string): Date | undefined {
  if (!RFC3339.test(s)) return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** True for an RFC 3339 date-time (see {@link parseRfc3339}). */
export function isRfc3339(s: string): boolean {
  return parseRfc3339(s) !== undefined;
}

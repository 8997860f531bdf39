/**
 * A `for_each` node's `tolerated_failures`: how many of its iterations may fail for good while the
 * node still completes. Either a count (an integer from 0 to {@link MAX_ITERATIONS}) or a share of
 * the elements, a string `"P%"` with 0 ≤ P ≤ 100 and at most two decimals (`"20%"`, `"12.5%"`).
 */
import { MAX_ITERATIONS } from './workflow-definition.js';

/** `"P%"`: digits, at most two decimals, then `%` (no sign, no spaces). */
const PERCENT = /^(\d{1,3})(?:\.(\d{1,2}))?%$/;

/**
 * Why `value` is no valid `tolerated_failures`, or undefined when it is one.
 */
export function toleratedFailuresProblem(value: unknown): string | undefined {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= 0 && value <= MAX_ITERATIONS
      ? undefined
      : `tolerated_failures must be an integer from 0 to ${MAX_ITERATIONS}, or a percentage such as "20%"; got ${value}`;
  }
  if (typeof value === 'string') {
    const bp = basisPoints(value);
    if (bp !== undefined && bp <= 10_000) return undefined;
    return `tolerated_failures must be a percentage from "0%" to "100%" with at most two decimals (e.g. "20%", "12.5%"), or an integer; got ${JSON.stringify(value)}`;
  }
  return `tolerated_failures must be an integer from 0 to ${MAX_ITERATIONS}, or a percentage such as "20%"; got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`}`;
}

/**
 * How many of `count` iterations may fail for good: the count itself, or floor(P × count / 100)
 * for `"P%"` (computed in hundredths of a percent, so exactly). 0 without `tolerated_failures`
 * (or for a value validation would have refused).
 */
export function allowedFailures(tolerated: number | string | undefined, count: number): number {
  if (typeof tolerated === 'number') return Number.isInteger(tolerated) && tolerated >= 0 ? tolerated : 0;
  if (typeof tolerated !== 'string') return 0;
  const bp = basisPoints(tolerated);
  return bp === undefined ? 0 : Math.floor((Math.min(bp, 10_000) * count) / 10_000);
}

/** `"P%"` in hundredths of a percent (`"12.5%"` → 1250), or undefined when not of that form. */
function basisPoints(text: string): number | undefined {
  const m = PERCENT.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

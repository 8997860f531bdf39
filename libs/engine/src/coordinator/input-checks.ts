import { badCharacter, MAX_NAME_CHARS, WeftError } from '../index.js';
import { describeJsonProblem, jsonProblem, sanitizeText } from './storable.js';

/** The largest value of PostgreSQL's `int`, the type of attempts and versions. */
const INT4_MAX = 2 ** 31 - 1;

/**
 * Throws WeftError BAD_USER_INPUT when the text `value` of `field` is not a string, holds a
 * character the database cannot store, or is longer than `maxChars`; `undefined` passes.
 */
export function checkName(field: string, value: unknown, maxChars = MAX_NAME_CHARS): void {
  if (value === undefined) return;
  let msg: string | undefined;
  if (typeof value !== 'string') msg = `${field} must be a string`;
  else if (badCharacter(value)) msg = `${field} is not storable: ${badCharacter(value)}`;
  else if (value.length > maxChars) msg = `${field} is longer than ${maxChars} characters`;
  if (msg) throw new WeftError('BAD_USER_INPUT', msg, [{ path: field, message: msg }]);
}

/**
 * Throws WeftError BAD_USER_INPUT when the JSON `value` of `field` cannot be stored (NUL
 * character or lone surrogate in a string or key, not JSON, too deep) or exceeds `maxBytes`; the
 * message and the problem's `path` name the field and the JSON path (`payload is not storable:
 * NUL character at $.a`, path `payload.a`).
 */
export function checkJson(field: string, value: unknown, maxBytes: number): void {
  if (value === undefined) return;
  const p = jsonProblem(value, maxBytes);
  if (!p) return;
  const msg = describeJsonProblem(field, p);
  throw new WeftError('BAD_USER_INPUT', msg, [{ path: p.kind === 'unstorable' ? field + p.path.slice(1) : field, message: msg }]);
}

/** A 0-based attempt number the `int` columns can hold. */
export function isAttempt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= INT4_MAX;
}

/** An optional workflow version the `int` columns can hold (unknown ones are NOT_FOUND later). */
export function isVersion(n: unknown): boolean {
  return n === undefined || (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= INT4_MAX);
}

/**
 * An id of a worker/scheduler report as it may be stored: a report naming a node or task with
 * characters the database cannot hold matches nothing anyway, and is then ignored (and recorded).
 */
export function reportField(s: string): string {
  return typeof s === 'string' ? sanitizeText(s, MAX_NAME_CHARS) : String(s);
}

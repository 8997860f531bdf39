import { RUN_LABEL_KEY_MAX_CHARS, RUN_LABEL_VALUE_MAX_CHARS, RUN_LABELS_MAX } from '@weft/contract';
import { WeftError, type Problem } from '../errors.js';
import { badCharacter } from './storable-json.js';

/**
 * A run's labels: string keys to string values, set when the run starts (by `startRun` or by the
 * schedule that fires it) and never changed. Runs are found by them (`labels @> {...}`).
 */
export type RunLabels = Record<string, string>;

/** The limits of {@link RunLabels}: how many, which keys, how long a value (in characters, code points). */
export const RUN_LABEL_LIMITS = {
  maxLabels: RUN_LABELS_MAX,
  keyPattern: new RegExp(`^[A-Za-z0-9_.-]{1,${RUN_LABEL_KEY_MAX_CHARS}}$`),
  maxValueChars: RUN_LABEL_VALUE_MAX_CHARS,
} as const;

/** What a label key must be, as problems say it. */
export const LABEL_KEY_RULE = `key must be 1 to ${RUN_LABEL_KEY_MAX_CHARS} characters of A-Z, a-z, 0-9, "_", "." or "-"`;

/**
 * The problems of `value` as labels at `path` (`labels`): not a JSON object, more than
 * {@link RUN_LABEL_LIMITS}.maxLabels keys, a key outside `[A-Za-z0-9_.-]{1,64}`, a value that is
 * not a string, is longer than 256 characters or holds a character the database cannot store.
 * Each problem's path names the label (`labels.team`; a key that cannot be written so is quoted:
 * `labels["a b"]`). Empty when `value` is valid; `undefined` and `null` are valid (no labels).
 */
export function labelProblems(value: unknown, path = 'labels'): Problem[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return [{ path, message: 'must be a JSON object of string keys to string values' }];
  const entries = Object.entries(value as Record<string, unknown>);
  const problems: Problem[] = [];
  const { maxLabels, keyPattern, maxValueChars } = RUN_LABEL_LIMITS;
  if (entries.length > maxLabels) problems.push({ path, message: `has ${entries.length} labels; at most ${maxLabels} are allowed` });
  for (const [key, v] of entries) {
    const at = labelPath(path, key);
    if (!keyPattern.test(key)) problems.push({ path: at, message: LABEL_KEY_RULE });
    if (typeof v !== 'string')
      problems.push({ path: at, message: `value must be a string, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}` });
    else if (badCharacter(v)) problems.push({ path: at, message: `value is not storable: ${badCharacter(v)}` });
    else if ([...v].length > maxValueChars)
      problems.push({ path: at, message: `value is ${[...v].length} characters long; at most ${maxValueChars} are allowed` });
  }
  return problems;
}

/**
 * `value` as {@link RunLabels} (`{}` for undefined or null), keys in the order given.
 * @throws WeftError BAD_USER_INPUT listing every {@link labelProblems} problem; its message names the first
 */
export function checkLabels(value: unknown, path = 'labels'): RunLabels {
  const problems = labelProblems(value, path);
  if (problems.length > 0) throw new WeftError('BAD_USER_INPUT', `${problems[0]!.path}: ${problems[0]!.message}`, problems);
  return { ...((value ?? {}) as RunLabels) };
}

/** `labels.team` for a key that reads as a name, else `labels["a b"]` (JSON-quoted). */
function labelPath(path: string, key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

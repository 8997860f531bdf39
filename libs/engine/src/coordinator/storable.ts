/**
 * What PostgreSQL can store, checked before the coordinator writes a value that came from
 * outside (a worker's output or error, a user's signal, input or config). `jsonb` rejects a NUL
 * character (U+0000) in any string or key and a lone UTF-16 surrogate (both SQLSTATE class 22);
 * `text` rejects NUL. Everything here is synchronous; the
 * pure parts live in `model/storable-json.ts`; these need Buffer.
 */

import { BAD_CHARS, MAX_ERROR_CHARS, SUSPECT, findUnstorable, formatBytes, type Unstorable } from '../index.js';

/** Bytes of `value`'s JSON text (UTF-8); `undefined` counts as `null`. */
export function jsonBytes(value: unknown): number {
  return value === undefined ? 4 : Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

/** Why a JSON value cannot be stored: {@link findUnstorable}'s finding, or its size. */
export type JsonProblem = ({ kind: 'unstorable' } & Unstorable) | { kind: 'too_large'; bytes: number; maxBytes: number };

/**
 * Why a JSON `value` cannot be stored, or undefined when it can: characters, types and depth
 * first ({@link findUnstorable}), then the size of its JSON text against `maxBytes`.
 */
export function jsonProblem(value: unknown, maxBytes: number): JsonProblem | undefined {
  const bad = findUnstorable(value);
  if (bad) return { kind: 'unstorable', ...bad };
  const bytes = jsonBytes(value);
  return bytes > maxBytes ? { kind: 'too_large', bytes, maxBytes } : undefined;
}

/** Longest JSON path quoted in a problem's sentence; a longer one keeps its start and end. */
const MAX_PATH_CHARS = 120;

/**
 * A problem as one sentence about `field`: `output is not storable: NUL character at $.s`,
 * `output too large: 2.3 MiB > 1 MiB (OUTPUT_TOO_LARGE)` (`code` is appended to size problems).
 * A path longer than 120 characters (a value nested 1 000 levels deep) is shortened to its first
 * and last 50: `$[0][0]…[0][0] (3002 chars)`.
 */
export function describeJsonProblem(field: string, p: JsonProblem, code?: string): string {
  return p.kind === 'unstorable'
    ? `${field} is not storable: ${p.reason} at ${shortPath(p.path)}`
    : `${field} too large: ${formatBytes(p.bytes)} > ${formatBytes(p.maxBytes)}${code ? ` (${code})` : ''}`;
}

function shortPath(path: string): string {
  if (path.length <= MAX_PATH_CHARS) return path;
  // Never cut inside a surrogate pair (the sentence is stored as text).
  const head = Array.from(path.slice(0, 51)).slice(0, -1).join('');
  const tail = Array.from(path.slice(-51)).slice(1).join('');
  return `${head}…${tail} (${path.length} chars)`;
}

/**
 * `s` made storable as failure text: each NUL character and lone surrogate becomes U+FFFD, and
 * text beyond `maxChars` code units is cut (never inside a surrogate pair) and marked
 * `… (truncated, N chars)`.
 */
export function sanitizeText(s: string, maxChars = MAX_ERROR_CHARS): string {
  let out = SUSPECT.test(s) ? s.replace(BAD_CHARS, '\ufffd') : s;
  if (out.length > maxChars) {
    let cut = maxChars;
    const last = out.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut--;
    out = `${out.slice(0, cut)}… (truncated, ${out.length} chars)`;
  }
  return out;
}

/**
 * Longest logs text stored per attempt, in UTF-16 code units: the worker's 64 KiB of output and
 * its marker line. A longer text (a worker that does not cap) keeps its tail.
 */
export const MAX_LOG_CHARS = 64 * 1024 + 256;

/**
 * `s` made storable as an attempt's logs: each NUL character and lone surrogate becomes U+FFFD,
 * and text beyond {@link MAX_LOG_CHARS} keeps its tail after a line `… N chars cut …`.
 */
export function storableLog(s: string): string {
  let out = SUSPECT.test(s) ? s.replace(BAD_CHARS, '\ufffd') : s;
  if (out.length > MAX_LOG_CHARS) {
    let from = out.length - (MAX_LOG_CHARS - 64);
    const first = out.charCodeAt(from);
    if (first >= 0xdc00 && first <= 0xdfff) from++;
    out = `… ${from.toLocaleString('en-US')} chars cut …\n${out.slice(from)}`;
  }
  return out;
}

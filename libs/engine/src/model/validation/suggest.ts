/**
 * "Did you mean …?" for a misspelt key: the allowed key closest to what was written, when one is
 * close enough to be the likely intent. Keys are compared folded (lower case, without `_` and `-`),
 * so `timeoutSeconds`, `Timeout-Seconds` and `timeout_secnds` all point at `timeout_seconds`.
 */

/** A key folded for comparison: lower case, without `_` and `-`. */
function fold(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, '');
}

/**
 * The edit distance between `a` and `b` (optimal string alignment: an insertion, a deletion, a
 * substitution or a swap of two neighbours each count 1), or `limit + 1` as soon as it is known
 * to exceed `limit`. Pure; O(|a|·|b|).
 */
export function editDistance(a: string, b: string, limit = Number.MAX_SAFE_INTEGER): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * How many edits apart two folded keys, the longer of `length` characters, may be: 1 up to 5
 * characters (`FETCH` is two edits from `PATCH`, too far to be a slip), 2 up to 10, else 3.
 */
function tolerance(length: number): number {
  return length <= 5 ? 1 : length <= 10 ? 2 : 3;
}

/** Shortest written key that counts as an abbreviation of a longer allowed key (`timeout` for `timeout_seconds`). */
const MIN_PREFIX = 6;

/**
 * How far `key` is from `allowed`, folded, or undefined when it is too far to suggest: within
 * {@link tolerance} edits, or a prefix of at least {@link MIN_PREFIX} characters (counted as
 * the tolerance, so a real near-miss wins over an abbreviation).
 */
function closeness(key: string, allowed: string): number | undefined {
  const k = fold(key);
  const a = fold(allowed);
  if (k === '' || a === '') return undefined;
  const limit = tolerance(Math.max(k.length, a.length));
  const d = editDistance(k, a, limit);
  if (d <= limit) return d;
  return k.length >= MIN_PREFIX && a.startsWith(k) ? limit : undefined;
}

/**
 * The allowed key `key` most likely misspells, or undefined when none is close (see
 * {@link closeness}); among equally close keys, the first in `allowed`. A key that is itself
 * allowed has no suggestion.
 *
 * Example: `suggestKey('methd', ['url', 'method'])` is `'method'`; `suggestKey('colour', ['url'])`
 * is undefined.
 */
export function suggestKey(key: string, allowed: readonly string[]): string | undefined {
  if (allowed.includes(key)) return undefined;
  let best: { key: string; d: number } | undefined;
  for (const a of allowed) {
    const d = closeness(key, a);
    if (d !== undefined && (best === undefined || d < best.d)) best = { key: a, d };
  }
  return best?.key;
}

/** ` (did you mean "X"?)` for the allowed key `key` most likely misspells (see {@link suggestKey}), or `''`. */
export function didYouMean(key: string, allowed: readonly string[]): string {
  const s = suggestKey(key, allowed);
  return s === undefined ? '' : ` (did you mean ${JSON.stringify(s)}?)`;
}

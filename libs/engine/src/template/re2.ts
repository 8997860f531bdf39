/**
 * RE2 for CEL's `matches`, on the `re2js` library (a pure-JavaScript port of RE2/Go `regexp`).
 * This is the ONLY file that imports `re2js`; the resolver is its only user.
 *
 * Why: JavaScript's RegExp backtracks. `(a+)+$` against 30 a's and a `!`, or `a*a*a*b` against
 * 1,000 a's, runs for seconds to minutes and freezes the coordinator's event loop for every
 * tenant. RE2 never backtracks: a match costs O(program size × text length) at worst, whatever
 * the pattern. CEL specifies RE2 syntax for `matches`, so re2js is also the right dialect.
 *
 * What this wrapper adds to re2js:
 * - Refusals that say what is wrong: RE2 reports a backreference as `invalid escape sequence`
 *   and a lookbehind as `invalid named capture`; {@link RegexError} names them. re2js's optional
 *   lookbehinds (`RE2JS.LOOKBEHINDS`) stay off: CEL's dialect is plain RE2.
 * - Size limits, so compiling is cheap too: at most {@link MAX_REGEX_LENGTH} characters and
 *   {@link MAX_REGEX_PROGRAM} instructions (CEL's `regex_max_program_size`). re2js itself allows
 *   1.4 million instructions, which a 1,400-character pattern such as `(?:ab…){1000}` reaches and
 *   takes seconds to compile, so an upper bound of the size is computed from the text first
 *   ({@link estimateProgramSize}) and a pattern far over the limit is refused without compiling.
 * - A cost for the caller's budget: re2js cannot be stopped part-way, so a match is charged its
 *   worst case, program size × (text length + 1) ({@link Re2Regex.cost}), before it runs, and
 *   refused with {@link RegexBudgetError} when that exceeds what is left. Usually re2js does far
 *   less (a prefilter, then a lazy DFA); its NFA fallback does about 10^8 such units a second.
 * - A bounded cache of compiled patterns ({@link cachedRegex}). Besides its program, each
 *   compiled pattern keeps re2js's lazy-DFA state cache, which re2js caps at 8 MB and which only
 *   grows as far as the texts it has matched required.
 *
 * Pure: no I/O, no clock.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/** Longest pattern, in characters (UTF-16 code units). */
export const MAX_REGEX_LENGTH = 4_096;
/** Largest compiled program, in re2js instructions: the per-character cost of a match at worst. */
export const MAX_REGEX_PROGRAM = 5_000;
/** Patterns whose {@link estimateProgramSize} exceeds this are refused without compiling. */
const MAX_ESTIMATED_PROGRAM = 4 * MAX_REGEX_PROGRAM;
/** Bounds of the compiled-pattern cache: entries, and instructions of all cached programs. */
export const REGEX_CACHE_LIMITS = { maxPatterns: 200, maxInstructions: 100_000 } as const;

/** Longest piece of a pattern quoted in an error message. */
const QUOTE_MAX = 64;

function quote(text: string): string {
  return `\`${text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX)}…` : text}\``;
}

/**
 * A pattern that cannot be used, e.g. ``backreferences are not supported (RE2 syntax): `\1` in
 * `(a)\1` ``. `reason` alone never quotes the pattern (for messages that must not show data).
 */
export class RegexError extends Error {
  constructor(
    /** The pattern as given. */
    readonly pattern: string,
    /** What is wrong, without any of the pattern's text, e.g. `missing closing )`. */
    readonly reason: string,
    /** The offending part of the pattern, when RE2 names one (e.g. `\1`, `(?=`). */
    readonly fragment?: string,
  ) {
    super(`${reason}${fragment ? `: ${quote(fragment)}` : ''} in ${quote(pattern)}`);
    this.name = 'RegexError';
  }
}

/** A match whose worst-case cost exceeds what the caller's budget has left. */
export class RegexBudgetError extends Error {
  constructor(
    /** The steps the budget had left. */
    readonly limit: number,
    /** The worst-case steps of the refused match. */
    readonly cost: number,
  ) {
    super(`regular expression match would cost up to ${cost} steps, more than the ${limit} allowed`);
    this.name = 'RegexBudgetError';
  }
}

/** A compiled pattern; safe to share and reuse. */
export interface Re2Regex {
  /** The pattern as given. */
  readonly source: string;
  /** Instructions in the re2js program. */
  readonly size: number;
  /** Worst-case steps of `test(text)`: program size × (text length + 1). */
  cost(text: string): number;
  /**
   * True when the pattern matches somewhere in `text`: RE2's unanchored search, as CEL `matches`
   * (anchor with `^…$` for a whole-string match).
   * @throws RegexBudgetError, before doing anything, when `cost(text)` exceeds `maxCost`.
   */
  test(text: string, maxCost?: number): boolean;
}

/**
 * Compiles an RE2-syntax pattern (no flags: use `(?i)`, `(?m)`, `(?s)`, `(?U)` inline).
 * @throws RegexError for invalid or unsupported syntax or a pattern over the size limits.
 */
export function compileRegex(pattern: string): Re2Regex {
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw new RegexError(pattern, `regular expression longer than ${MAX_REGEX_LENGTH} characters`);
  }
  const tooLarge = (): RegexError => new RegexError(pattern, `regular expression too large (more than ${MAX_REGEX_PROGRAM} instructions)`);
  if (estimateProgramSize(pattern) > MAX_ESTIMATED_PROGRAM) throw tooLarge();
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw explain(pattern, err);
  }
  const size = re.programSize();
  if (size > MAX_REGEX_PROGRAM) throw tooLarge();
  const cost = (text: string): number => size * (text.length + 1);
  return {
    source: pattern,
    size,
    cost,
    test(text: string, maxCost = Number.POSITIVE_INFINITY): boolean {
      const c = cost(text);
      if (c > maxCost) throw new RegexBudgetError(maxCost, c);
      return re.test(text);
    },
  };
}

/** Turns a re2js exception into a {@link RegexError}; anything else is rethrown. */
function explain(pattern: string, err: unknown): RegexError {
  if (err instanceof RE2JSSyntaxException) {
    const code = err.error;
    const input = err.input ?? undefined;
    if (code === 'invalid escape sequence' && input !== undefined && /^\\([1-9]|[gk])/.test(input)) {
      return new RegexError(pattern, 'backreferences are not supported (RE2 syntax)', input);
    }
    if (code === 'invalid or unsupported Perl syntax' && (input === '(?=' || input === '(?!')) {
      return new RegexError(pattern, 'lookahead assertions are not supported (RE2 syntax)', input);
    }
    if (code === 'invalid or unsupported Perl syntax' && input === '(?P' && pattern.includes('(?P=')) {
      return new RegexError(pattern, 'backreferences are not supported (RE2 syntax)', '(?P=');
    }
    if (code === 'invalid named capture' && input !== undefined && /^\(\?<[=!]/.test(input)) {
      return new RegexError(pattern, 'lookbehind assertions are not supported (RE2 syntax)', input.slice(0, 4));
    }
    return new RegexError(pattern, code, input);
  }
  if (err instanceof RE2JSException) return new RegexError(pattern, err.message);
  throw err;
}

/**
 * An upper bound of the re2js program size of `pattern`, read from its text in one pass without
 * compiling it: every atom costs 1, a group 2 more (captures), `|` and `* + ?` 2, and `{n,m}`
 * multiplies what it repeats (plus one split per copy) by its largest count. It reads just enough
 * RE2 syntax to find atoms, groups and repeats (escapes, `\Q…\E`, `[…]` classes, `(?flags` and
 * group names); it is not a validator (re2js refuses invalid patterns while parsing, before the
 * costly steps). On valid patterns it is never below the compiled size and, for programs of some
 * size, at most about 3 times it (re2.spec.ts compares it with re2js on random patterns). Only
 * used to refuse, without compiling, patterns far over the limit.
 */
export function estimateProgramSize(pattern: string): number {
  const p = pattern;
  interface Frame {
    /** Estimated size of what the group holds so far. */
    sum: number;
    /** Estimated size of the last item (what a following repeat applies to). */
    last: number;
  }
  const stack: Frame[] = [{ sum: 0, last: 0 }];
  let top = stack[0];
  const item = (size: number): void => {
    top.sum += size;
    top.last = size;
  };
  /** Skips `{…}` after `\p`, `\P` or `\x` at `i` (so it is not read as a repeat). */
  const escapeEnd = (i: number): number => {
    if ('pPx'.includes(p[i + 1] ?? '') && p[i + 2] === '{') {
      const end = p.indexOf('}', i + 3);
      return end < 0 ? p.length : end + 1;
    }
    return i + 2;
  };
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '\\') {
      if (p[i + 1] === 'Q') {
        const end = p.indexOf('\\E', i + 2);
        const stop = end < 0 ? p.length : end;
        top.sum += stop - (i + 2);
        top.last = 1; // a repeat applies to the last literal only
        i = end < 0 ? p.length : end + 2;
      } else {
        item(1);
        i = escapeEnd(i);
      }
    } else if (c === '[') {
      // RE2: an optional ^, then a ] right away is a literal; [:name:] and escapes are members.
      let j = i + 1;
      if (p[j] === '^') j++;
      let first = true;
      while (j < p.length && (p[j] !== ']' || first)) {
        first = false;
        const named = p.startsWith('[:', j) ? p.indexOf(':]', j + 2) : -1;
        if (named >= 0) j = named + 2;
        else if (p[j] === '\\') j = escapeEnd(j);
        else j++;
      }
      item(1);
      i = j + 1;
    } else if (c === '(') {
      i++;
      if (p[i] === '?') {
        // (?i) sets flags for the rest of the group; (?i:…), (?P<name>…) and (?<name>…) open one.
        let j = i;
        while (j < p.length && p[j] !== ':' && p[j] !== '>' && p[j] !== ')') j++;
        if (p[j] === ')') {
          i = j + 1;
          continue;
        }
        i = j + 1;
      }
      stack.push((top = { sum: 2, last: 0 }));
    } else if (c === ')') {
      if (stack.length > 1) {
        const group = stack.pop() as Frame;
        top = stack[stack.length - 1];
        item(group.sum);
      }
      i++;
    } else if (c === '|') {
      top.sum += 2;
      top.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      top.sum += 2;
      i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(p.slice(i, i + 24));
      if (!m) {
        item(1); // a literal {
        i++;
        continue;
      }
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? min + 1 : Number(m[3]);
      const count = Math.max(min, max, 1);
      const repeated = count * (top.last + 1);
      top.sum += repeated - top.last;
      top.last = repeated;
      i += m[0].length;
    } else {
      item(1);
      i++;
    }
  }
  while (stack.length > 1) {
    const group = stack.pop() as Frame;
    top = stack[stack.length - 1];
    item(group.sum);
  }
  return top.sum + 5; // the program's fixed instructions (fail, whole-match captures, match)
}

/** Compiled patterns and refusals, least recently used first. */
const cache = new Map<string, Re2Regex | RegexError>();
let cachedInstructions = 0;

const weight = (e: Re2Regex | RegexError): number => (e instanceof RegexError ? 1 : e.size);

/**
 * {@link compileRegex}, through an LRU cache bounded by {@link REGEX_CACHE_LIMITS} (refusals are
 * cached too).
 * @throws RegexError
 */
export function cachedRegex(pattern: string): Re2Regex {
  let hit = cache.get(pattern);
  if (hit) cache.delete(pattern);
  else {
    try {
      hit = compileRegex(pattern);
    } catch (err) {
      if (!(err instanceof RegexError)) throw err;
      hit = err;
    }
    cachedInstructions += weight(hit);
  }
  cache.set(pattern, hit);
  while (cache.size > 1 && (cachedInstructions > REGEX_CACHE_LIMITS.maxInstructions || cache.size > REGEX_CACHE_LIMITS.maxPatterns)) {
    const [oldest, entry] = cache.entries().next().value as [string, Re2Regex | RegexError];
    cache.delete(oldest);
    cachedInstructions -= weight(entry);
  }
  if (hit instanceof RegexError) throw hit;
  return hit;
}

/** How many patterns the cache holds and their instructions (for tests). */
export function regexCacheStats(): { patterns: number; instructions: number } {
  return { patterns: cache.size, instructions: cachedInstructions };
}

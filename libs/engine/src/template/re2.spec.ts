import { describe, expect, it } from '@jest/globals';
import {
  cachedRegex,
  compileRegex,
  estimateProgramSize,
  MAX_REGEX_LENGTH,
  MAX_REGEX_PROGRAM,
  REGEX_CACHE_LIMITS,
  regexCacheStats,
  RegexBudgetError,
  RegexError,
} from './re2.js';

const matches = (pattern: string, text: string): boolean => compileRegex(pattern).test(text);

/** The RegexError `fn` throws. */
function refusal(fn: () => unknown): RegexError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RegexError);
    return err as RegexError;
  }
  throw new Error('expected a RegexError');
}

describe('RE2 answers as CEL matches requires', () => {
  it('finds a match anywhere in the text unless anchored (unanchored search)', () => {
    expect(matches('b', 'abc')).toBe(true);
    expect(matches('^b', 'abc')).toBe(false);
    expect(matches('c$', 'abc')).toBe(true);
    expect(matches('^abc$', 'abc')).toBe(true);
    expect(matches('', '')).toBe(true);
    expect(matches('x', '')).toBe(false);
  });

  it('handles the everyday RE2 syntax', () => {
    const cases: Array<[string, string, boolean]> = [
      ['^[a-z]+@[a-z]+\\.com$', 'bob@mail.com', true],
      ['^[a-z]+@[a-z]+\\.com$', 'Bob@mail.com', false],
      ['^\\d{3}-\\d{4}$', '555-1234', true],
      ['^\\d{3}-\\d{4}$', '555-12345', false],
      ['colou?r', 'color', true],
      ['(?:ab)+c', 'xababc', true],
      ['(cat|dog)s?$', 'hotdogs', true],
      ['\\bfoo\\b', 'a foo b', true],
      ['\\bfoo\\b', 'foobar', false],
      ['[^0-9]', '123', false],
      ['[[:upper:]][[:lower:]]+', 'Hello', true],
      ['\\p{Lu}\\p{Ll}+', 'Élan', true],
      ['\\p{Greek}', 'λ', true],
      ['^.$', '😀', true],
      ['\\x{1F600}', 'a😀', true],
      ['\\Qa.b\\E', 'axb', false],
      ['\\Qa.b\\E', 'a.b', true],
      ['a.b', 'a\nb', false],
      ['(?s)a.b', 'a\nb', true],
      ['^b', 'a\nb', false],
      ['(?m)^b$', 'a\nb\nc', true],
      ['(?i)hello', 'HeLLo', true],
      ['(?i:h)ello', 'HELLO', false],
      ['a{2,3}$', 'baa', true],
      ['^a{2,3}$', 'aaaa', false],
      ['x*?y', 'xxy', true],
      ['(?P<year>\\d{4})-(?<month>\\d{2})', '2030-01', true],
      ['[\\w.-]+', '...', true],
      ['\\s', 'no-space', false],
      ['\\101', 'A', true],
      ['\\12', '\n', true], // RE2 octal, not a backreference
      ['(?i)k', '\u212a', true], // Unicode simple case folding (Kelvin sign)
    ];
    for (const [pattern, text, expected] of cases) {
      expect([pattern, text, matches(pattern, text)]).toEqual([pattern, text, expected]);
    }
  });
});

describe('refusals name what is wrong and the pattern', () => {
  it('refuses backreferences and lookaround, which RE2 does not have', () => {
    expect(() => compileRegex('(a)\\1')).toThrow(new RegexError('(a)\\1', 'backreferences are not supported (RE2 syntax)', '\\1'));
    expect(refusal(() => compileRegex('(a)\\1')).message).toBe('backreferences are not supported (RE2 syntax): `\\1` in `(a)\\1`');
    expect(refusal(() => compileRegex('(?<n>a)\\k<n>')).reason).toBe('backreferences are not supported (RE2 syntax)');
    expect(refusal(() => compileRegex('(?P<n>a)(?P=n)')).reason).toBe('backreferences are not supported (RE2 syntax)');
    expect(refusal(() => compileRegex('a(?=b)')).message).toBe('lookahead assertions are not supported (RE2 syntax): `(?=` in `a(?=b)`');
    expect(refusal(() => compileRegex('a(?!b)')).reason).toBe('lookahead assertions are not supported (RE2 syntax)');
    expect(refusal(() => compileRegex('(?<!a)b')).message).toBe('lookbehind assertions are not supported (RE2 syntax): `(?<!` in `(?<!a)b`');
    expect(refusal(() => compileRegex('(?<=a)b')).reason).toBe('lookbehind assertions are not supported (RE2 syntax)');
  });

  it('reports other syntax errors in RE2 words, the reason apart from the pattern text', () => {
    const cases: Array<[string, string]> = [
      ['a**', 'invalid nested repetition operator'],
      ['*a', 'missing argument to repetition operator'],
      ['a{1001}', 'invalid repeat count'],
      ['(a', 'missing closing )'],
      ['a)', 'unexpected )'],
      ['[a', 'missing closing ]'],
      ['\\Z', 'invalid escape sequence'],
      ['\\C', 'invalid escape sequence'],
      ['\\p{Klingon}', 'invalid character class range'],
      ['(a{1000}){1000}', `regular expression too large (more than ${MAX_REGEX_PROGRAM} instructions)`],
    ];
    for (const [pattern, reason] of cases) {
      const err = refusal(() => compileRegex(pattern));
      expect([pattern, err.pattern, err.reason]).toEqual([pattern, pattern, reason]);
      expect(err.message).toContain(`in \`${pattern}\``);
    }
  });

  it('quotes at most 64 characters of a long pattern', () => {
    const long = `(${'x'.repeat(200)}`;
    const err = refusal(() => compileRegex(long));
    expect(err.message).toBe(`missing closing ): \`(${'x'.repeat(63)}…\` in \`(${'x'.repeat(63)}…\``);
  });
});

describe('size limits keep compiling cheap', () => {
  it('refuses a pattern over MAX_REGEX_LENGTH characters', () => {
    expect(refusal(() => compileRegex('a'.repeat(MAX_REGEX_LENGTH + 1))).reason).toBe(`regular expression longer than ${MAX_REGEX_LENGTH} characters`);
    expect(compileRegex('a'.repeat(MAX_REGEX_LENGTH)).test('a'.repeat(MAX_REGEX_LENGTH))).toBe(true);
  });

  it('refuses a program over MAX_REGEX_PROGRAM instructions, compiled or estimated', () => {
    expect(compileRegex('a{1000}b{1000}').size).toBeLessThanOrEqual(MAX_REGEX_PROGRAM);
    expect(refusal(() => compileRegex('[a-z]{1000}'.repeat(6))).reason).toMatch(/^regular expression too large/);
    // re2js would accept this (1.4 million instructions) after seconds of compiling.
    const huge = `(?:${'ab'.repeat(690)}){1000}`;
    expect(estimateProgramSize(huge)).toBeGreaterThan(1_000_000);
    expect(refusal(() => compileRegex(huge)).reason).toMatch(/^regular expression too large/);
  });

  it('estimates no less than the compiled size', () => {
    const patterns = [
      'a',
      '(a+)+$',
      '^[a-z]+@[a-z]+\\.com$',
      '(?:a{2}){500}',
      '((((((((a{2}){2}){2}){2}){2}){2}){2}){2})',
      '(?:[a-z]?){500}[a-z]{500}!',
      '(?:\\pL?){1000}\\pL{1000}0',
      '(?i)(?:\\p{Greek}|\\d){0,100}x{100}',
      '[]a]{300}(?P<n>[[:alpha:]\\]]{2,9}|\\Q(x{\\E){20,}',
      '\\x{41}{999}|[^\\x{10000}-\\x{10FFFF}]*',
      '(?s-i:.|\\n|\\b){1000}',
    ];
    for (const p of patterns) {
      expect([p, estimateProgramSize(p) >= compileRegex(p).size]).toEqual([p, true]);
    }
  });

  it('estimates no less than the compiled size on random patterns', () => {
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >> 4) % n;
    };
    const atoms = [
      'a',
      '.',
      '\\d',
      '\\pL',
      '\\p{Greek}',
      '\\x{41}',
      '[a-z]',
      '[^a]',
      '[]a]',
      '[[:alpha:]x]',
      '[\\]x]',
      '\\Qa(b\\E',
      '^',
      '\\b',
      '\\{',
      '😀',
      '(?i)',
      '{',
      'x{1,',
    ];
    const opens = ['(', '(?:', '(?i:', '(?P<n>', '(?<m>', '(?s-i:'];
    const gen = (depth: number): string => {
      let out = '';
      for (let k = 1 + rnd(4); k > 0; k--) {
        out +=
          depth > 0 && rnd(3) === 0 ? `${opens[rnd(opens.length)]}${gen(depth - 1)}${rnd(3) === 0 ? `|${gen(depth - 1)}` : ''})` : atoms[rnd(atoms.length)];
        const lo = rnd(10);
        out += ['*', '+', '?', `{${rnd(300)}}`, `{${lo},}`, `{${lo},${lo + rnd(300)}}`, '', '', '', ''][rnd(10)];
      }
      return out;
    };
    let compiled = 0;
    for (let i = 0; i < 3000; i++) {
      const p = gen(3);
      let size: number;
      try {
        size = compileRegex(p).size;
      } catch {
        continue; // invalid, or too large
      }
      compiled++;
      if (estimateProgramSize(p) < size) expect([p, estimateProgramSize(p), size]).toBe('an estimate at least the size');
    }
    expect(compiled).toBeGreaterThan(1000);
  });
});

describe('RE2 cannot be made to backtrack', () => {
  // Each of these takes V8's RegExp from seconds to minutes on a few dozen characters: (a+)+$
  // ~3 s at 26, (a|a)*$ ~4 s at 26, a*a*a*b ~40 s at 1,000, .*.*x ~1.3 s at 2,000. Here they
  // run on 100,000; that the test completes at all is the point.
  const cases: Array<[string, string, boolean]> = [
    ['(a+)+$', `${'a'.repeat(100_000)}!`, false],
    ['(a|a)*$', `${'a'.repeat(100_000)}!`, true],
    ['a*a*a*b', 'a'.repeat(100_000), false],
    ['.*.*x', 'a'.repeat(100_000), false],
    ['(x+x+)+y', 'x'.repeat(100_000), false],
  ];

  it('answers catastrophic patterns, and a match costs at most program size × (length + 1)', () => {
    for (const [pattern, text, expected] of cases) {
      const re = compileRegex(pattern);
      expect([pattern, re.test(text)]).toEqual([pattern, expected]);
      expect(re.cost(text)).toBe(re.size * (text.length + 1));
      expect(re.size).toBeLessThan(20);
    }
  });

  it('refuses, before running, a match that would cost more than allowed', () => {
    const re = compileRegex('a*a*a*b');
    let err: unknown;
    try {
      re.test('a'.repeat(20_000), 1000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RegexBudgetError);
    expect(err).toMatchObject({ limit: 1000, cost: re.size * 20_001 });
    expect(re.test('aab', 1000)).toBe(true); // and it is reusable afterwards
  });
});

describe('cachedRegex', () => {
  it('compiles each pattern once and caches refusals too', () => {
    expect(cachedRegex('^cache-me$')).toBe(cachedRegex('^cache-me$'));
    const first = refusal(() => cachedRegex('(a)\\1'));
    expect(refusal(() => cachedRegex('(a)\\1'))).toBe(first);
  });

  it('stays within its bounds', () => {
    for (let i = 0; i < REGEX_CACHE_LIMITS.maxPatterns + 50; i++) cachedRegex(`^p${i}$`);
    expect(regexCacheStats().patterns).toBeLessThanOrEqual(REGEX_CACHE_LIMITS.maxPatterns);
    // About 1,800 instructions each: 80 of them would hold 144,000.
    for (let i = 0; i < 80; i++) cachedRegex(`x{${900 + i}}y{${900 + i}}`);
    expect(regexCacheStats().instructions).toBeLessThanOrEqual(REGEX_CACHE_LIMITS.maxInstructions);
    expect(cachedRegex('x{979}y{979}').test('x'.repeat(979) + 'y'.repeat(979))).toBe(true);
  });
});

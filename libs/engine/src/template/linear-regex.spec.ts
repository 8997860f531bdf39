import { describe, expect, it } from '@jest/globals';
import { compileLinearRegex, MAX_REGEX_PROGRAM, RegexBudgetError, RegexError } from './linear-regex.js';

const matches = (pattern: string, text: string): boolean => compileLinearRegex(pattern).test(text);

describe('the linear-time matcher answers like RE2', () => {
  it('finds a match anywhere in the text unless anchored', () => {
    expect(matches('b', 'abc')).toBe(true);
    expect(matches('^b', 'abc')).toBe(false);
    expect(matches('c$', 'abc')).toBe(true);
    expect(matches('^abc$', 'abc')).toBe(true);
    expect(matches('', '')).toBe(true);
    expect(matches('x', '')).toBe(false);
  });

  it('handles the everyday syntax', () => {
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
    ];
    for (const [pattern, text, expected] of cases) {
      expect([pattern, text, matches(pattern, text)]).toEqual([pattern, text, expected]);
    }
  });

  it('refuses what RE2 refuses, with a reason', () => {
    expect(() => compileLinearRegex('(a)\\1')).toThrow(new RegexError('backreferences are not supported (RE2 syntax): \\1'));
    expect(() => compileLinearRegex('a(?=b)')).toThrow(/lookahead and lookbehind assertions are not supported/);
    expect(() => compileLinearRegex('(?<!a)b')).toThrow(/lookahead and lookbehind/);
    expect(() => compileLinearRegex('a**')).toThrow(/bad repetition operator/);
    expect(() => compileLinearRegex('*a')).toThrow(/missing argument to repetition operator/);
    expect(() => compileLinearRegex('a{1001}')).toThrow(/invalid repeat count/);
    expect(() => compileLinearRegex('(a')).toThrow(/missing closing \)/);
    expect(() => compileLinearRegex('a)')).toThrow(/unexpected \)/);
    expect(() => compileLinearRegex('[a')).toThrow(/missing closing \]/);
    expect(() => compileLinearRegex('\\Z')).toThrow(/invalid escape sequence/);
    expect(() => compileLinearRegex('\\p{Klingon}')).toThrow(/invalid character class/);
    expect(() => compileLinearRegex('(a{1000}){1000}')).toThrow(`regular expression too large (more than ${MAX_REGEX_PROGRAM} instructions)`);
  });
});

describe('the linear-time matcher cannot be made to backtrack', () => {
  // Each of these takes V8's RegExp from seconds to minutes: (a+)+$ ~3 s at 26 characters,
  // (a|a)*$ ~4 s at 26, a*a*a*b ~40 s at 1,000, .*.*x ~1.3 s at 2,000.
  const cases: Array<[string, string, boolean]> = [
    ['(a+)+$', `${'a'.repeat(30)}!`, false],
    ['(a|a)*$', `${'a'.repeat(30)}!`, true],
    ['a*a*a*b', 'a'.repeat(20_000), false],
    ['.*.*x', 'a'.repeat(20_000), false],
    ['(x+x+)+y', 'x'.repeat(20_000), false],
  ];

  it('does at most (text length + 1) × program size × 3 steps, so time grows linearly', () => {
    for (const [pattern, text, expected] of cases) {
      const re = compileLinearRegex(pattern);
      expect([pattern, re.test(text)]).toEqual([pattern, expected]);
      expect(re.lastSteps).toBeLessThanOrEqual((text.length + 1) * re.size * 3);
    }
  });

  it('stops with RegexBudgetError when a match would take more steps than allowed', () => {
    const re = compileLinearRegex('a*a*a*b');
    expect(() => re.test('a'.repeat(20_000), 1000)).toThrow(RegexBudgetError);
    expect(re.test('aab', 1000)).toBe(true); // and it is reusable afterwards
  });
});

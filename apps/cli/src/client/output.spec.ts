import { describe, expect, it } from '@jest/globals';
import { cell, duration, formatData, table, took, when } from './output.js';

describe('output for people', () => {
  it('writes lengths of time in the largest two units', () => {
    expect([0, 850, 4249, 12_345, 59_999, 192_000, 7_500_000, 273_600_000].map(duration)).toEqual([
      '0ms',
      '850ms',
      '4.2s',
      '12s',
      '59s',
      '3m12s',
      '2h05m',
      '3d04h',
    ]);
    expect(took('2030-01-01T00:00:00Z', '2030-01-01T00:01:05Z', 0)).toBe('1m05s');
    expect(took('2030-01-01T00:00:00Z', null, Date.parse('2030-01-01T00:00:03Z'))).toBe('3s');
  });

  it('aligns columns under their header and does not pad the last one', () => {
    expect(
      table(
        ['ID', 'NAME', 'NOTE'],
        [
          ['1', 'a', ''],
          ['22', 'longer', 'x'],
        ],
      ),
    ).toBe('ID  NAME    NOTE\n1   a\n22  longer  x\n');
  });

  it('keeps a cell on its line: control characters escaped, null as -', () => {
    expect(cell('boom\nat line 2\u001b[31m')).toBe('boom\\nat line 2\\u001b[31m');
    expect(cell(null)).toBe('-');
    // JSON leaves these raw: DEL, the C1 controls (U+009B is a terminal's one-byte CSI) and the separators.
    expect(cell('a\u007fb\u009b31mc\u0085d\u2028e\u2029f')).toBe('a\\u007fb\\u009b31mc\\u0085d\\u2028e\\u2029f');
    expect(cell({ a: 1 })).toBe('{"a":1}');
  });

  it('writes instants to the second in UTC', () => {
    expect(when('2030-01-01T12:00:00.123+01:00')).toBe('2030-01-01T11:00:00Z');
    expect(when(null)).toBe('-');
  });

  it('writes YAML without folding long strings', () => {
    const long = 'x '.repeat(100).trim();
    expect(formatData('yaml', { long, n: [1] })).toBe(`long: ${long}\nn:\n  - 1\n`);
    expect(formatData('json', { a: 1 })).toBe('{\n  "a": 1\n}\n');
  });
});

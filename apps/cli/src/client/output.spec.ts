import { describe, expect, it } from '@jest/globals';
import { cell, duration, formatData, table, took, when } from './output.js';
import { printChanges, type TaskRow } from './run-watch.js';

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

  it('writes JSON whose text holds no control a terminal acts on, for the same value', () => {
    const value = { error: 'a\u007fb\u009b2Jc\u0085d\u2028e\u001b[2J', n: 1 };
    const text = formatData('json', value);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/u);
    expect(text).toContain('"a\\u007fb\\u009b2Jc\\u0085d\\u2028e\\u001b[2J"');
    expect(JSON.parse(text)).toEqual(value);
  });

  it("escapes a watched task's error, signal name and wait text on its line", () => {
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((s: string) => lines.push(s) > 0) as typeof process.stdout.write;
    try {
      const task = { nodeId: 'e', status: 'FAILED', attempt: 0, iteration: null, error: 'boom\u001b]0;pwned\u0007\u009b2J\rOVER', awaitedSignal: null };
      printChanges([task as unknown as TaskRow], new Map(), undefined);
    } finally {
      process.stdout.write = write;
    }
    expect(lines).toEqual(['e: FAILED (error: boom\\u001b]0;pwned\\u0007\\u009b2J\\rOVER)\n']);
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

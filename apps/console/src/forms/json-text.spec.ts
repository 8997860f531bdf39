import { describe, expect, it } from '@jest/globals';
import { offsetOf, readJsonText, spotAt } from './json-text.js';

describe('readJsonText', () => {
  it('reads JSON, an empty object field as {}', () => {
    expect(readJsonText('Input', ' {"order_id": "A1", "n": [1, 2]} ', { object: true })).toEqual({ ok: true, value: { order_id: 'A1', n: [1, 2] } });
    expect(readJsonText('Input', '  \n', { object: true })).toEqual({ ok: true, value: {} });
  });

  it('names the line and column of a missing value', () => {
    const text = '{\n  "order_id": ,\n  "amount": 3\n}';
    const read = readJsonText('Input', text, { object: true });
    expect(read).toEqual({ ok: false, message: 'Input is not valid JSON: a value is expected at line 2, column 15', at: { line: 2, column: 15, offset: 16 } });
    expect(text[16]).toBe(',');
  });

  it('names a missing comma between members where the next member starts', () => {
    const read = readJsonText('Config', '{"a": 1\n "b": 2}');
    expect(read).toMatchObject({ ok: false, at: { line: 2, column: 2 } });
    expect(!read.ok && read.message).toBe('Config is not valid JSON: a comma is expected at line 2, column 2');
  });

  it('refuses what JSON.parse refuses though a lenient reading would take it', () => {
    expect(readJsonText('Input', '{"a": 1,}')).toMatchObject({ ok: false, at: { line: 1, column: 9 } });
    expect(readJsonText('Input', '{"a": 1} // note')).toMatchObject({ ok: false, at: { line: 1, column: 10 } });
    expect(readJsonText('Input', "{'a': 1}")).toMatchObject({ ok: false, at: { line: 1, column: 2 } });
  });

  it('wants an object for an object field, pointing at the value', () => {
    expect(readJsonText('Input', '\n  [1]', { object: true })).toEqual({
      ok: false,
      message: 'Input must be a JSON object ({…}), not an array.',
      at: { line: 2, column: 3, offset: 3 },
    });
    expect(readJsonText('Config', 'null', { object: true })).toMatchObject({ ok: false, message: 'Config must be a JSON object ({…}), not null.' });
  });
});

describe('spotAt and offsetOf', () => {
  const text = 'ab\ncde\n\nf';
  it('are inverse for every offset', () => {
    for (let offset = 0; offset <= text.length; offset++) {
      const { line, column } = spotAt(text, offset);
      expect(offsetOf(text, line, column)).toBe(offset);
    }
  });

  it('clamp a spot past a line or past the text', () => {
    expect(offsetOf(text, 1, 40)).toBe(2);
    expect(offsetOf(text, 9, 1)).toBe(text.length);
  });
});

describe('readJsonText on hostile text', () => {
  it('answers text nested too deeply to scan with what JSON.parse says, never throwing', () => {
    for (const text of ['['.repeat(100_000), '{"a":'.repeat(50_000)]) {
      const read = readJsonText('Input', text, { object: true });
      expect(read).toEqual({ ok: false, message: expect.stringMatching(/^Input is not valid JSON: /), at: null });
    }
  });
});

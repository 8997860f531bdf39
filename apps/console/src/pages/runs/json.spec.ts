import { describe, expect, it } from '@jest/globals';
import { parseJsonField, prettyJson } from './json.js';

describe('parseJsonField', () => {
  it('returns the parsed value', () => {
    expect(parseJsonField('Payload', '{"approved": true, "n": [1, 2]}')).toEqual({ ok: true, value: { approved: true, n: [1, 2] } });
    expect(parseJsonField('Payload', ' 42 ')).toEqual({ ok: true, value: 42 });
  });
  it('names the field and the parser problem for bad JSON', () => {
    const parsed = parseJsonField('Input', '{order_id: 7}');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    let reason = '';
    try {
      JSON.parse('{order_id: 7}');
    } catch (err) {
      reason = (err as Error).message;
    }
    expect(parsed.error).toBe(`Input is not valid JSON: ${reason}`);
  });
  it('refuses a non-object where an object is required, saying what it got', () => {
    expect(parseJsonField('Config', '[1]', { object: true })).toEqual({ ok: false, error: 'Config must be a JSON object ({…}), not an array.' });
    expect(parseJsonField('Config', 'null', { object: true })).toEqual({ ok: false, error: 'Config must be a JSON object ({…}), not null.' });
    expect(parseJsonField('Config', '"x"', { object: true })).toEqual({ ok: false, error: 'Config must be a JSON object ({…}), not a string.' });
    expect(parseJsonField('Config', '{}', { object: true })).toEqual({ ok: true, value: {} });
  });
  it('uses the fallback for an empty text, and refuses an empty text without one', () => {
    expect(parseJsonField('Payload', '  ', { fallback: {} })).toEqual({ ok: true, value: {} });
    const empty = parseJsonField('Input', '', { object: true });
    expect(empty).toEqual({ ok: false, error: 'Input is empty: enter JSON (an object, e.g. {}).' });
  });
});

describe('prettyJson', () => {
  it('indents by two spaces and leaves undefined empty', () => {
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyJson(null)).toBe('null');
    expect(prettyJson(undefined)).toBe('');
  });
});

import { describe, expect, it } from '@jest/globals';
import { WeftError } from '../errors.js';
import { checkLabels, labelProblems } from './run-labels.js';

describe('labelProblems', () => {
  it('accepts up to 16 labels of valid keys and values of up to 256 characters', () => {
    const labels = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k.${i}_a-B`, 'x'.repeat(256)]));
    expect(labelProblems(labels)).toEqual([]);
    expect(labelProblems(undefined)).toEqual([]);
    expect(labelProblems(null)).toEqual([]);
    expect(labelProblems({ emoji: '😀'.repeat(256) })).toEqual([]);
  });

  it('names the path and the problem of each violation', () => {
    expect(labelProblems(['a'])).toEqual([{ path: 'labels', message: 'must be a JSON object of string keys to string values' }]);
    expect(labelProblems(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])))).toEqual([
      { path: 'labels', message: 'has 17 labels; at most 16 are allowed' },
    ]);
    expect(labelProblems({ team: 'x'.repeat(257) })).toEqual([{ path: 'labels.team', message: 'value is 257 characters long; at most 256 are allowed' }]);
    expect(labelProblems({ team: 3 })).toEqual([{ path: 'labels.team', message: 'value must be a string, got number' }]);
    expect(labelProblems({ 'a b': 'v' })[0]).toEqual({ path: 'labels["a b"]', message: expect.stringContaining('key must be 1 to 64 characters') });
    expect(labelProblems({ ['k'.repeat(65)]: 'v' })[0]?.path).toBe(`labels.${'k'.repeat(65)}`);
    expect(labelProblems({ '': 'v' })[0]?.path).toBe('labels[""]');
    expect(labelProblems({ v: 'a\u0000b' }, 'input.labels')).toEqual([{ path: 'input.labels.v', message: expect.stringContaining('not storable') }]);
  });
});

describe('checkLabels', () => {
  it('returns a copy, {} for none, and throws BAD_USER_INPUT naming the first problem', () => {
    expect(checkLabels(undefined)).toEqual({});
    expect(checkLabels({ team: 'core' })).toEqual({ team: 'core' });
    let caught: unknown;
    try {
      checkLabels({ ok: 'v', 'no/slash': 'v' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WeftError);
    expect((caught as WeftError).code).toBe('BAD_USER_INPUT');
    expect((caught as WeftError).message).toMatch(/^labels\["no\/slash"\]: key must be/);
  });
});

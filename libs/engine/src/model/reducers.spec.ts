import { describe, expect, it } from '@jest/globals';
import { canonicalJson, joinReducers, reduceJoin, REDUCER_NAMES, type Contribution } from './reducers.js';
import type { JsonValue } from './workflow-types.js';

/** Contributions from nodes a, b, c… in the order given. */
function from(...outputs: JsonValue[]): Contribution[] {
  return outputs.map((output, i) => ({ nodeId: String.fromCharCode(97 + i), output }));
}

function merged(reducers: Record<string, JsonValue>, ...outputs: JsonValue[]): JsonValue {
  const r = reduceJoin(reducers, from(...outputs));
  if (!r.ok) throw new Error(r.error);
  return r.output;
}

function failure(reducers: Record<string, JsonValue>, ...outputs: JsonValue[]): string {
  const r = reduceJoin(reducers, from(...outputs));
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.output)}`);
  return r.error;
}

describe('each reducer folds one field across the contributions, in order', () => {
  it('add sums numbers', () => {
    expect(merged({ n: 'add' }, { n: 1 }, { n: 2.5 }, { n: -1 })).toEqual({ n: 2.5 });
  });

  it('append concatenates arrays', () => {
    expect(merged({ m: 'append' }, { m: ['x'] }, { m: [] }, { m: ['y', 'x'] })).toEqual({ m: ['x', 'y', 'x'] });
  });

  it('union concatenates without deep duplicates, keeping first occurrences in order', () => {
    expect(merged({ u: 'union' }, { u: [1, { a: 1, b: 2 }, 1] }, { u: [{ b: 2, a: 1 }, 2, [1]] }, { u: [[1], 3] })).toEqual({
      u: [1, { a: 1, b: 2 }, 2, [1], 3],
    });
  });

  it('min and max keep the extreme number', () => {
    expect(merged({ lo: 'min', hi: 'max' }, { lo: 3, hi: 3 }, { lo: -2, hi: 9 }, { lo: 5, hi: 1 })).toEqual({ lo: -2, hi: 9 });
  });

  it('merge merges objects shallowly, later keys winning', () => {
    expect(merged({ o: 'merge' }, { o: { a: 1, n: { x: 1 } } }, { o: { b: 2, n: { y: 2 } } })).toEqual({ o: { a: 1, n: { y: 2 }, b: 2 } });
  });

  it('and / or combine booleans', () => {
    expect(merged({ all: 'and', any: 'or' }, { all: true, any: false }, { all: false, any: true }, { all: true, any: false })).toEqual({
      all: false,
      any: true,
    });
  });

  it('concat concatenates strings', () => {
    expect(merged({ s: 'concat' }, { s: 'ab' }, { s: '' }, { s: 'c' })).toEqual({ s: 'abc' });
  });

  it('replace (explicit or for an unlisted field) keeps the last value in order', () => {
    expect(merged({ r: 'replace' }, { r: 1, u: 'x' }, { r: [2], u: 'y' }, { u: { z: 1 } })).toEqual({ r: [2], u: { z: 1 } });
  });

  it('a single contribution passes through unchanged for every reducer', () => {
    const one = { add: 1, append: [1], union: [1, 1], min: 1, max: 1, merge: { a: 1 }, and: true, or: false, concat: 'x', replace: null };
    const reducers = Object.fromEntries(REDUCER_NAMES.map((r) => [r, r]));
    expect(merged(reducers, one)).toEqual({ ...one, union: [1] });
  });
});

describe('null, absent fields and non-object outputs', () => {
  it('null is the identity of a listed reducer: it is skipped', () => {
    expect(merged({ n: 'add', m: 'append', s: 'concat' }, { n: 2, m: ['a'], s: 'x' }, { n: null, m: null, s: null }, { n: 3, m: ['b'], s: 'y' })).toEqual({
      n: 5,
      m: ['a', 'b'],
      s: 'xy',
    });
  });

  it('with replace, null wins like any other value', () => {
    expect(merged({}, { r: 1 }, { r: null })).toEqual({ r: null });
    expect(merged({ r: 'replace' }, { r: 1 }, { r: null })).toEqual({ r: null });
  });

  it('a listed field nobody provides — or only as null — stays absent, not the identity', () => {
    expect(merged({ n: 'add', m: 'append' }, { other: 1 }, { n: null })).toEqual({ other: 1 });
  });

  it('a contribution that is not an object (null, array, scalar) contributes nothing', () => {
    expect(merged({ n: 'add' }, { n: 1 }, null, [{ n: 5 }], 'n', 7, { n: 2 })).toEqual({ n: 3 });
    expect(merged({ n: 'add' })).toEqual({});
  });

  it('fields come out in order of first appearance', () => {
    expect(Object.keys(merged({ b: 'add' }, { a: 1, b: 1 }, { c: 1, b: 1 }) as object)).toEqual(['a', 'b', 'c']);
  });

  it('a field named __proto__ is data', () => {
    const out = merged({}, JSON.parse('{"__proto__": {"x": 1}}') as JsonValue) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe('order is the contributions order, not completion order', () => {
  it('replace and append follow the order given', () => {
    expect(merged({ m: 'append' }, { last: 'a', m: [1] }, { last: 'b', m: [2] })).toEqual({ last: 'b', m: [1, 2] });
    expect(merged({ m: 'append' }, { last: 'b', m: [2] }, { last: 'a', m: [1] })).toEqual({ last: 'a', m: [2, 1] });
  });
});

describe('a type mismatch fails the merge, naming the field, the reducer and the node', () => {
  it.each([
    ['add', 'a number', 'x', 'a string'],
    ['min', 'a number', true, 'a boolean'],
    ['max', 'a number', [1], 'an array'],
    ['append', 'an array', { a: 1 }, 'an object'],
    ['union', 'an array', 'x', 'a string'],
    ['merge', 'an object', [1], 'an array'],
    ['and', 'a boolean', 1, 'a number'],
    ['or', 'a boolean', 'true', 'a string'],
    ['concat', 'a string', 1, 'a number'],
  ] as Array<[string, string, JsonValue, string]>)('%s', (reducer, expects, bad, gave) => {
    expect(failure({ f: reducer }, { f: null }, { f: bad })).toBe(`field "f": reducer ${reducer} expects ${expects}, but node "b" gave ${gave}`);
  });

  it('an unknown reducer name fails the merge', () => {
    expect(failure({ f: 'sum' }, { f: 1 })).toBe(
      'field "f": unknown reducer "sum"; expected one of add, append, union, min, max, merge, and, or, concat, replace',
    );
  });
});

describe('helpers', () => {
  it('canonicalJson sorts keys at every level', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });

  it('joinReducers reads spec.reducers, undefined without it', () => {
    expect(joinReducers(undefined)).toBeUndefined();
    expect(joinReducers({})).toBeUndefined();
    expect(joinReducers({ reducers: { n: 'add' } })).toEqual({ n: 'add' });
  });
});

describe('a sum JSON cannot hold', () => {
  it('fails the JOIN naming the field and the node instead of becoming null', () => {
    const r = reduceJoin({ n: 'add' }, [
      { nodeId: 'a', output: { n: 1e308 } },
      { nodeId: 'b', output: { n: 1e308 } },
    ]);
    expect(r).toEqual({ ok: false, error: 'field "n": reducer add overflowed (the sum is beyond ±1.8e308) at node "b"' });
  });
});

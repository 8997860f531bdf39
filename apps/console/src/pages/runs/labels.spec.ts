import { describe, expect, it } from '@jest/globals';
import { labelEntries } from './labels.js';

describe('labelEntries', () => {
  it('lists a run’s labels sorted by key', () => {
    expect(labelEntries({ team: 'ops', env: 'prod', 'a.b': '' })).toEqual([
      ['a.b', ''],
      ['env', 'prod'],
      ['team', 'ops'],
    ]);
  });
  it('gives none for no labels or a value that is not an object', () => {
    expect(labelEntries({})).toEqual([]);
    expect(labelEntries(null)).toEqual([]);
    expect(labelEntries(undefined)).toEqual([]);
    expect(labelEntries('team=ops')).toEqual([]);
    expect(labelEntries(['team'])).toEqual([]);
  });
  it('shows a value that is not a string as its JSON', () => {
    expect(labelEntries({ n: 3, o: { x: 1 } })).toEqual([
      ['n', '3'],
      ['o', '{"x":1}'],
    ]);
  });
});

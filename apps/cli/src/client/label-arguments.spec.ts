import { describe, expect, it } from '@jest/globals';
import { label, labelsText } from './label-arguments.js';

describe('--label', () => {
  it('adds KEY=VALUE to the labels before it, splitting at the first =', () => {
    expect(label('team=pay', undefined)).toEqual({ team: 'pay' });
    expect(label('env=a=b', { team: 'pay' })).toEqual({ team: 'pay', env: 'a=b' });
    expect(label('empty=', undefined)).toEqual({ empty: '' });
    expect(label(`k=${'😀'.repeat(256)}`, undefined).k).toHaveLength(512);
  });

  it.each([
    ['team', undefined, 'must be KEY=VALUE, got "team"'],
    ['=v', undefined, 'key "" must be 1 to 64 characters'],
    ['a/b=v', undefined, 'key "a/b" must be 1 to 64 characters'],
    [`k=${'v'.repeat(257)}`, undefined, 'value of k is longer than 256 characters'],
    ['k=2', { k: '1' }, 'label k is given twice'],
    ['k16=v', Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'])), 'at most 16 labels'],
  ])('refuses %j', (v, previous, message) => {
    expect(() => label(v, previous)).toThrow(message);
  });
});

describe('labelsText', () => {
  it('writes labels as k=v pairs by key, - for none', () => {
    expect(labelsText({ team: 'pay', env: 'prod' })).toBe('env=prod,team=pay');
    expect(labelsText({})).toBe('-');
    expect(labelsText(null)).toBe('-');
  });
});

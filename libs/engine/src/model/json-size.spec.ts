import { describe, expect, it } from '@jest/globals';
import { jsonLongerThan } from './json-size.js';

describe('jsonLongerThan', () => {
  it('agrees with JSON.stringify on values without escapes, at the boundary', () => {
    const values: unknown[] = [{ a: [1, 'two', null, true, { b: 'c' }], d: {} }, [], 'text', 12.5, [[], [[]]], { k: [false, -3] }];
    for (const v of values) {
      const length = JSON.stringify(v).length;
      expect([jsonLongerThan(v, length), jsonLongerThan(v, length - 1)]).toEqual([false, true]);
    }
  });

  it('counts a shared value each time it appears, and stops early on a huge one', () => {
    const shared = Array(1_000).fill('xx');
    const twice = { a: shared, b: shared };
    expect(jsonLongerThan(twice, JSON.stringify(twice).length - 1)).toBe(true);
    // 10^4 references to 10^4 items: 10^8 items as JSON, refused after a bounded walk.
    const big = Array(10_000).fill(Array(10_000).fill(1));
    expect(jsonLongerThan(big, 1_000_000)).toBe(true);
  });
});

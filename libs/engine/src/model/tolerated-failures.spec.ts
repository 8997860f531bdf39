import { describe, expect, it } from '@jest/globals';
import { allowedFailures } from './tolerated-failures.js';

describe('allowedFailures', () => {
  it('is the count itself, or the percentage of the elements rounded down, exactly', () => {
    expect(allowedFailures(undefined, 10)).toBe(0);
    expect(allowedFailures(2, 10)).toBe(2);
    expect(allowedFailures(20, 3)).toBe(20);
    expect(allowedFailures('20%', 10)).toBe(2);
    expect(allowedFailures('20%', 4)).toBe(0);
    expect(allowedFailures('20%', 5)).toBe(1);
    expect(allowedFailures('0.7%', 1000)).toBe(7);
    expect(allowedFailures('12.5%', 8)).toBe(1);
    expect(allowedFailures('100%', 7)).toBe(7);
    expect(allowedFailures('0%', 7)).toBe(0);
  });
});

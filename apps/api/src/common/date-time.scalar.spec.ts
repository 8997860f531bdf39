import { describe, expect, it } from '@jest/globals';
import { parseDateTime } from './date-time.scalar.js';

describe('parseDateTime', () => {
  it('reads RFC 3339 date-times, a leap second as the following second', () => {
    expect(parseDateTime('2026-03-07T10:30:00.123+01:00')?.toISOString()).toBe('2026-03-07T09:30:00.123Z');
    expect(parseDateTime('2016-12-31T23:59:60Z')?.toISOString()).toBe('2017-01-01T00:00:00.000Z');
  });

  it('refuses what is not one: free forms, impossible dates, second 60 in another minute', () => {
    for (const text of ['yesterday', 'March 7 2026', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-07T12:00:60Z', 42]) {
      expect(parseDateTime(text)).toBeUndefined();
    }
  });
});

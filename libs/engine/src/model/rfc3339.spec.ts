import { describe, expect, it } from '@jest/globals';
import { isRfc3339, MAX_TIMESTAMP_MS, parseRfc3339 } from './rfc3339.js';

const iso = (s: string): string | undefined => parseRfc3339(s)?.toISOString();

describe('parseRfc3339', () => {
  it('reads ordinary date-times with Z, offsets and fractions', () => {
    expect(iso('2030-01-01T00:00:00Z')).toBe('2030-01-01T00:00:00.000Z');
    expect(iso('2030-01-01t01:00:00.5+01:00')).toBe('2030-01-01T00:00:00.500Z');
    expect(iso('2029-12-31T19:00:00-05:00')).toBe('2030-01-01T00:00:00.000Z');
  });

  it('refuses what is not an RFC 3339 date-time or is out of range', () => {
    for (const s of [
      '2030-01-01',
      '2030-01-01T00:00:00',
      'tomorrow',
      '2030-02-30T00:00:00Z',
      '2030-01-01T24:00:00Z',
      '2030-01-01T00:60:00Z',
      '2030-01-01T00:00:61Z',
      '2030-01-01T00:00:00+24:00',
    ]) {
      expect([s, parseRfc3339(s)]).toEqual([s, undefined]);
    }
  });

  it('accepts the leap second 23:59:60Z (RFC 3339 §5.6) as the following second', () => {
    expect(iso('2016-12-31T23:59:60Z')).toBe('2017-01-01T00:00:00.000Z');
    expect(iso('2015-06-30T23:59:60z')).toBe('2015-07-01T00:00:00.000Z');
    expect(isRfc3339('2016-12-31T23:59:60Z')).toBe(true);
  });

  it('keeps the fraction of a leap second and reads it in the next second', () => {
    expect(iso('2016-12-31T23:59:60.25Z')).toBe('2017-01-01T00:00:00.250Z');
  });

  it('accepts the leap second at a local offset, where it is not 23:59 local time', () => {
    expect(iso('2017-01-01T00:59:60+01:00')).toBe('2017-01-01T00:00:00.000Z');
    expect(iso('2016-12-31T18:59:60-05:00')).toBe('2017-01-01T00:00:00.000Z');
    expect(iso('2017-01-01T05:29:60+05:30')).toBe('2017-01-01T00:00:00.000Z');
  });

  it('refuses second 60 outside the last minute of a UTC day', () => {
    for (const s of ['2016-12-31T12:00:60Z', '2016-12-31T23:58:60Z', '2016-12-31T23:59:60+01:00', '2017-01-01T00:00:60Z']) {
      expect([s, parseRfc3339(s)]).toEqual([s, undefined]);
    }
  });

  it('reads the leap second at the end of year 9999 as an instant past the latest wake time', () => {
    expect(parseRfc3339('9999-12-31T23:59:60Z')!.getTime()).toBeGreaterThan(MAX_TIMESTAMP_MS);
  });
});

import { describe, expect, it } from '@jest/globals';
import { elapsed, formatDuration, formatTime, formatTimeShort, isoToLocalInput, localInputToIso } from './time.js';

describe('formatDuration', () => {
  it('shows milliseconds under a second', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(849.6)).toBe('850 ms');
  });
  it('shows seconds with one decimal under a minute, never rounding up to the next unit', () => {
    expect(formatDuration(1000)).toBe('1.0 s');
    expect(formatDuration(12_345)).toBe('12.3 s');
    expect(formatDuration(59_999)).toBe('59.9 s');
  });
  it('shows minutes and padded seconds, hours and padded minutes, then days and hours', () => {
    expect(formatDuration(60_000)).toBe('1 min 00 s');
    expect(formatDuration(4 * 60_000 + 5_000)).toBe('4 min 05 s');
    expect(formatDuration(2 * 3_600_000 + 3 * 60_000 + 59_000)).toBe('2 h 03 min');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000 + 1)).toBe('3 d 4 h');
  });
  it('shows a negative or non-finite duration (clock skew) as zero', () => {
    expect(formatDuration(-5)).toBe('0 ms');
    expect(formatDuration(Number.NaN)).toBe('0 ms');
  });
});

describe('elapsed', () => {
  it('is the time from start to end, null until there is an end', () => {
    expect(elapsed('2025-01-01T00:00:00.000Z', '2025-01-01T00:00:01.500Z')).toBe(1500);
    expect(elapsed('2025-01-01T00:00:00.000Z', null)).toBeNull();
    expect(elapsed('not a date', '2025-01-01T00:00:01.500Z')).toBeNull();
  });
});

describe('formatTime', () => {
  it('shows a local date and time to the second', () => {
    const d = new Date(2025, 2, 4, 13, 5, 9);
    expect(formatTime(d.toISOString())).toBe('2025-03-04 13:05:09');
  });
  it('shows a dash for no time and an unparsable text as is', () => {
    expect(formatTime(null)).toBe('—');
    expect(formatTime('soon')).toBe('soon');
  });
});

describe('formatTimeShort', () => {
  it('drops the date of a time on the same local day, keeps it otherwise', () => {
    const now = new Date(2025, 2, 4, 23, 0, 0);
    expect(formatTimeShort(new Date(2025, 2, 4, 0, 0, 1).toISOString(), now)).toBe('00:00:01');
    expect(formatTimeShort(new Date(2025, 2, 3, 23, 59, 59).toISOString(), now)).toBe('2025-03-03 23:59:59');
    expect(formatTimeShort(null, now)).toBe('—');
  });
});

describe('datetime-local values', () => {
  it('read as local time and become ISO instants', () => {
    expect(localInputToIso('2025-03-04T13:05')).toBe(new Date(2025, 2, 4, 13, 5).toISOString());
    expect(localInputToIso('2025-03-04T13:05:30')).toBe(new Date(2025, 2, 4, 13, 5, 30).toISOString());
  });
  it('are refused when empty, malformed or not a calendar date', () => {
    expect(localInputToIso('')).toBeNull();
    expect(localInputToIso('yesterday')).toBeNull();
    expect(localInputToIso('2025-02-30T10:00')).toBeNull();
  });
  it('come back from an ISO instant unchanged (seconds only when there are some)', () => {
    for (const value of ['2025-03-04T13:05', '2025-12-31T23:59:30', '2024-02-29T00:00']) {
      expect(isoToLocalInput(localInputToIso(value))).toBe(value);
    }
    expect(isoToLocalInput('')).toBe('');
    expect(isoToLocalInput('nonsense')).toBe('');
  });
});

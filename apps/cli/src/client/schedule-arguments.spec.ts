import { describe, expect, it } from '@jest/globals';
import { instant, lengthText, overlapPolicy, seconds, timeZone, upcomingCount } from './schedule-arguments.js';
import { specText, zoned } from './schedule-view.js';

describe('the schedule flags', () => {
  it('take lengths of time in whole seconds, 0 only where it means none', () => {
    expect(seconds('--every', 1)('30s')).toBe(30);
    expect(seconds('--every', 1)('1h30m')).toBe(5400);
    expect(seconds('--every', 1)('1d')).toBe(86_400);
    expect(seconds('--jitter', 0)('0')).toBe(0);
    expect(seconds('--jitter', 0)('0s')).toBe(0);
    expect(() => seconds('--every', 1)('0s')).toThrow('--every must be at least 1s');
    for (const bad of ['', '5', '1.5m', '5x', 'm', '-5m', '500ms']) expect(() => seconds('--every', 1)(bad)).toThrow('--every must be a length of time');
  });

  it('write lengths back as the flags take them', () => {
    expect([0, 30, 60, 90, 3600, 5400, 86_400, 90_061].map(lengthText)).toEqual(['0s', '30s', '1m', '1m30s', '1h', '1h30m', '1d', '1d1h1m1s']);
    for (const n of [1, 59, 61, 3599, 3601, 86_399, 31_622_400]) expect(seconds('--every', 1)(lengthText(n))).toBe(n);
  });

  it('take instants in RFC 3339 with an offset only', () => {
    expect(instant('--from')('2030-01-01T09:00:00+05:30')).toBe('2030-01-01T09:00:00+05:30');
    for (const bad of ['2030-01-01', '2030-01-01T00:00:00', '2030-02-30T00:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T00:00:00+25:00', 'now'])
      expect(() => instant('--from')(bad)).toThrow('--from must be an RFC 3339 time');
  });

  it('take IANA zones, overlap policies in any case and 1 to 100 upcoming times', () => {
    expect(timeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(() => timeZone('Mars/Olympus_Mons')).toThrow('--tz must be an IANA time zone');
    expect(() => timeZone('')).toThrow('--tz must be an IANA time zone');
    expect(overlapPolicy('BUFFER_ONE')).toBe('buffer_one');
    expect(() => overlapPolicy('queue')).toThrow('must be one of skip, buffer_one, buffer_all, cancel_other, allow_all');
    expect([upcomingCount('1'), upcomingCount('100')]).toEqual([1, 100]);
    for (const bad of ['0', '101', '2.5', 'five']) expect(() => upcomingCount(bad)).toThrow('--upcoming must be a whole number from 1 to 100');
  });
});

describe('the schedule views', () => {
  it("write an instant in the schedule's zone with its offset, across a change of offset", () => {
    expect(zoned('2030-01-01T03:30:00Z', 'Asia/Kolkata')).toBe('2030-01-01T09:00:00+05:30');
    expect(zoned('2030-03-10T06:30:00Z', 'America/New_York')).toBe('2030-03-10T01:30:00-05:00');
    expect(zoned('2030-03-10T07:00:00Z', 'America/New_York')).toBe('2030-03-10T03:00:00-04:00');
    expect(zoned('2030-01-01T00:00:00Z', 'Europe/London')).toBe('2030-01-01T00:00:00+00:00');
    expect(zoned(null, 'UTC')).toBe('-');
  });

  it('write the spec as a cron expression with its zone, or an interval', () => {
    expect(specText({ cron: '0 9 * * *', intervalSeconds: null, timeZone: 'Asia/Kolkata' })).toBe('0 9 * * * (Asia/Kolkata)');
    expect(specText({ cron: null, intervalSeconds: 5400, timeZone: 'UTC' })).toBe('every 1h30m');
  });
});

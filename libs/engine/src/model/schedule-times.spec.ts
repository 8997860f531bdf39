import { describe, expect, it } from '@jest/globals';
import { decideFire, jitterMs, OverlapPolicy, scheduleRunKey, SkipReason } from './schedule.js';
import { fireTimesBetween, nextFireTime, scheduleTimingProblems, upcomingFireTimes, type CheckedTiming } from './schedule-times.js';

const anchor = new Date('2027-01-01T00:00:00Z');
const cron = (expr: string, timeZone = 'UTC', extra: Partial<CheckedTiming> = {}): CheckedTiming => ({ cron: expr, timeZone, anchor, ...extra });
const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('nextFireTime over daylight saving time (croner)', () => {
  const daily0230 = cron('30 2 * * *', 'America/New_York');

  it('fires a daily 02:30 once on the 2027 spring-forward day, at 03:00 local, the first instant after the gap', () => {
    const times = fireTimesBetween(daily0230, new Date('2027-03-14T00:00:00-05:00'), new Date('2027-03-14T23:59:59-04:00'), 10);
    expect(iso(times)).toEqual(['2027-03-14T07:00:00.000Z']);
    // The days around it are at 02:30 local: EST the day before, EDT the day after.
    expect(iso(upcomingFireTimes(daily0230, new Date('2027-03-13T00:00:00Z'), 3))).toEqual([
      '2027-03-13T07:30:00.000Z',
      '2027-03-14T07:00:00.000Z',
      '2027-03-15T06:30:00.000Z',
    ]);
  });

  it('fires a daily 02:30 once, not twice, on the 2027 fall-back day', () => {
    const times = fireTimesBetween(daily0230, new Date('2027-11-07T00:00:00-04:00'), new Date('2027-11-07T23:59:59-05:00'), 10);
    expect(iso(times)).toEqual(['2027-11-07T07:30:00.000Z']);
  });

  it('fires a daily 01:30, which happens twice on the fall-back day, once: at its first occurrence (EDT)', () => {
    const times = fireTimesBetween(cron('30 1 * * *', 'America/New_York'), new Date('2027-11-07T00:00:00-04:00'), new Date('2027-11-07T23:59:59-05:00'), 10);
    expect(iso(times)).toEqual(['2027-11-07T05:30:00.000Z']);
  });
});

describe('nextFireTime', () => {
  it('reads a cron expression in Asia/Kolkata at local time (UTC+05:30)', () => {
    expect(nextFireTime(cron('0 9 * * *', 'Asia/Kolkata'), anchor)?.toISOString()).toBe('2027-01-01T03:30:00.000Z');
  });

  it('takes 6 fields with seconds first, and the @ names', () => {
    expect(nextFireTime(cron('*/5 * * * * *'), anchor)?.toISOString()).toBe('2027-01-01T00:00:05.000Z');
    expect(nextFireTime(cron('@hourly'), anchor)?.toISOString()).toBe('2027-01-01T01:00:00.000Z');
    expect(nextFireTime(cron('@daily'), anchor)?.toISOString()).toBe('2027-01-02T00:00:00.000Z');
    expect(nextFireTime(cron('@weekly'), anchor)?.toISOString()).toBe('2027-01-03T00:00:00.000Z');
    expect(nextFireTime(cron('@monthly'), anchor)?.toISOString()).toBe('2027-02-01T00:00:00.000Z');
    expect(nextFireTime(cron('@yearly'), anchor)?.toISOString()).toBe('2028-01-01T00:00:00.000Z');
  });

  it('counts an interval from startAt, else from the anchor, strictly after the given time', () => {
    const every90: CheckedTiming = { intervalSeconds: 90, anchor };
    expect(nextFireTime(every90, anchor)?.toISOString()).toBe('2027-01-01T00:01:30.000Z');
    expect(nextFireTime(every90, new Date('2027-01-01T00:01:29.999Z'))?.toISOString()).toBe('2027-01-01T00:01:30.000Z');
    expect(nextFireTime(every90, new Date('2026-12-31T00:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    const fromStart: CheckedTiming = { intervalSeconds: 60, anchor, startAt: new Date('2027-02-01T00:00:10Z') };
    expect(nextFireTime(fromStart, anchor)?.toISOString()).toBe('2027-02-01T00:00:10.000Z');
  });

  it('starts at startAt (inclusive) and stops before endAt (exclusive)', () => {
    const t = cron('0 * * * *', 'UTC', { startAt: new Date('2027-01-01T05:00:00Z'), endAt: new Date('2027-01-01T07:00:00Z') });
    expect(iso(upcomingFireTimes(t, anchor, 5))).toEqual(['2027-01-01T05:00:00.000Z', '2027-01-01T06:00:00.000Z']);
  });

  it('lists the times of a range, at most limit + 1', () => {
    const t: CheckedTiming = { intervalSeconds: 1, anchor };
    expect(fireTimesBetween(t, anchor, new Date('2027-01-01T00:00:09Z'), 100)).toHaveLength(10);
    expect(fireTimesBetween(t, anchor, new Date('2027-01-01T01:00:00Z'), 100)).toHaveLength(101);
  });
});

describe('scheduleTimingProblems', () => {
  const problems = (t: Parameters<typeof scheduleTimingProblems>[0]) => scheduleTimingProblems(t).map((p) => p.path);

  it('accepts a valid cron or interval', () => {
    expect(scheduleTimingProblems({ cron: '30 2 * * *', timeZone: 'America/New_York' })).toEqual([]);
    expect(scheduleTimingProblems({ intervalSeconds: 1 })).toEqual([]);
  });

  it('names the field of each problem', () => {
    expect(problems({ cron: '61 * * * *' })).toEqual(['cron']);
    expect(problems({ cron: '* * * *' })).toEqual(['cron']);
    expect(problems({ cron: '0 0 0 1 1 * 2030' })).toEqual(['cron']);
    expect(problems({ cron: '@sometimes' })).toEqual(['cron']);
    expect(problems({ cron: '0 0 30 2 *' })).toEqual(['cron']);
    expect(problems({ cron: '* * * * *', timeZone: 'Mars/Olympus_Mons' })).toEqual(['timeZone']);
    expect(problems({ intervalSeconds: 0 })).toEqual(['intervalSeconds']);
    expect(problems({ intervalSeconds: 0.5 })).toEqual(['intervalSeconds']);
    expect(problems({})).toEqual(['cron']);
    expect(problems({ cron: '* * * * *', intervalSeconds: 5 })).toEqual(['intervalSeconds']);
    expect(problems({ intervalSeconds: 5, startAt: new Date('2027-02-01T00:00:00Z'), endAt: new Date('2027-01-01T00:00:00Z') })).toEqual(['endAt']);
  });

  it('says why in words', () => {
    expect(scheduleTimingProblems({ cron: '* * * * *', timeZone: 'Nowhere/City' })[0]!.message).toContain('unknown time zone "Nowhere/City"');
    expect(scheduleTimingProblems({ intervalSeconds: 0 })[0]!.message).toContain('at least 1');
  });
});

describe('decideFire', () => {
  it('starts when nothing is active, whatever the policy', () => {
    for (const p of Object.values(OverlapPolicy)) expect(decideFire(p, false, 0)).toEqual({ kind: 'start' });
  });

  it('applies the policy while a run is active', () => {
    expect(decideFire(OverlapPolicy.Skip, true, 0)).toEqual({ kind: 'skip', reason: SkipReason.Overlap });
    expect(decideFire(OverlapPolicy.BufferOne, true, 0)).toEqual({ kind: 'buffer' });
    expect(decideFire(OverlapPolicy.BufferOne, true, 1)).toEqual({ kind: 'skip', reason: SkipReason.BufferFull });
    expect(decideFire(OverlapPolicy.BufferAll, true, 5)).toEqual({ kind: 'buffer' });
    expect(decideFire(OverlapPolicy.CancelOther, true, 0)).toEqual({ kind: 'cancel_then_start' });
    expect(decideFire(OverlapPolicy.AllowAll, true, 0)).toEqual({ kind: 'start' });
  });
});

describe('jitterMs and scheduleRunKey', () => {
  it('gives every replica the same delay, within the jitter', () => {
    const at = new Date('2027-01-01T00:00:00Z');
    const a = jitterMs('s1', at, 30);
    expect(jitterMs('s1', at, 30)).toBe(a);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThanOrEqual(30_000);
    expect(jitterMs('s1', at, 0)).toBe(0);
  });

  it('keys a run by schedule and nominal time', () => {
    expect(scheduleRunKey('0190', new Date('2027-01-01T00:00:00Z'))).toBe('schedule:0190:2027-01-01T00:00:00.000Z');
  });
});

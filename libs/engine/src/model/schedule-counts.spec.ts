import { describe, expect, it } from '@jest/globals';
import { backfillCount, fireCountBounds, minFireGapSeconds } from './schedule-counts.js';
import { MAX_BACKFILL_FIRES } from './schedule.js';
import { fireTimesBetween, type CheckedTiming } from './schedule-times.js';

const anchor = new Date('2027-01-01T00:00:00Z');
const cron = (expr: string, timeZone = 'UTC'): CheckedTiming => ({ cron: expr, timeZone, anchor });
const every = (intervalSeconds: number, extra: Partial<CheckedTiming> = {}): CheckedTiming => ({ intervalSeconds, anchor, ...extra });
const at = (s: string) => new Date(s);

describe('minFireGapSeconds', () => {
  it.each([
    ['* * * * * *', 1],
    ['*/10 * * * * *', 10],
    ['0,59 * * * * *', 1], // 59 s then 0 s of the next minute
    ['0,30 * * * * *', 30],
    ['* * * * *', 60],
    ['*/15 * * * *', 900],
    ['59 0,1 * * *', 3600],
    ['0 9,17 * * *', 8 * 3600],
    ['0 23,0 * * *', 3600], // 23:00 then 00:00 the next day
    ['30 2 * * *', 86_400],
    ['@hourly', 3600],
    ['@weekly', 86_400], // a bound: the smallest a day's times allow
  ])('%s: %i s', (expr, gap) => {
    expect(minFireGapSeconds({ cron: expr })).toBe(gap);
  });

  it('is the interval of an interval', () => {
    expect(minFireGapSeconds({ intervalSeconds: 7 })).toBe(7);
  });
});

describe('fireCountBounds', () => {
  it('counts an interval exactly, from its anchor, both ends inclusive', () => {
    expect(fireCountBounds(every(10), at('2027-01-01T00:00:00Z'), at('2027-01-01T00:01:00Z'))).toEqual({ atLeast: 7, atMost: 7 });
    expect(fireCountBounds(every(10), at('2027-01-01T00:00:01Z'), at('2027-01-01T00:00:59Z'))).toEqual({ atLeast: 5, atMost: 5 });
    // Nothing before the anchor: an interval starts there.
    expect(fireCountBounds(every(60), at('2026-12-31T00:00:00Z'), at('2027-01-01T00:02:00Z'))).toEqual({ atLeast: 3, atMost: 3 });
    expect(fireCountBounds(every(60), at('2026-12-31T00:00:00Z'), at('2026-12-31T23:00:00Z'))).toEqual({ atLeast: 0, atMost: 0 });
    expect(fireCountBounds(every(60, { endAt: at('2027-01-01T00:02:00Z') }), anchor, at('2027-01-02T00:00:00Z'))).toEqual({ atLeast: 2, atMost: 2 });
  });

  it('counts every second over five months in UTC within one time of the truth, without a walk', () => {
    const b = fireCountBounds(cron('* * * * * *'), at('2030-01-01T00:00:00Z'), at('2030-06-01T00:00:00Z'));
    const truth = (Date.parse('2030-06-01T00:00:00Z') - Date.parse('2030-01-01T00:00:00Z')) / 1000 + 1;
    expect(b.atLeast).toBeGreaterThanOrEqual(truth - 1);
    expect(b.atMost).toBe(truth);
  });

  // Each case walks its range (a few thousand times at most) and checks the bounds hold around the truth.
  const cases: [string, string, string, string][] = [
    ['* * * * * *', 'UTC', '2030-01-01T00:00:00.500Z', '2030-01-01T01:00:00Z'],
    ['*/7 * * * * *', 'Europe/Paris', '2030-03-31T00:30:00Z', '2030-03-31T02:30:00Z'],
    ['*/10 * * * * *', 'America/New_York', '2027-11-07T05:00:00Z', '2027-11-07T07:30:00Z'],
    ['*/5 * * * *', 'UTC', '2030-01-01T00:00:00Z', '2030-01-08T00:00:00Z'],
    ['30 2 * * *', 'America/New_York', '2027-03-01T00:00:00Z', '2027-12-01T00:00:00Z'],
    ['0,20 9-17 * * 1-5', 'Europe/Berlin', '2030-01-01T00:00:00Z', '2030-04-01T00:00:00Z'],
    ['0 0 1,15 * *', 'UTC', '2030-01-01T00:00:00Z', '2031-01-01T00:00:00Z'],
    ['* * * * 6', 'Asia/Kolkata', '2030-01-01T00:00:00Z', '2030-01-20T00:00:00Z'],
    ['@weekly', 'UTC', '2030-01-01T00:00:00Z', '2031-01-01T00:00:00Z'],
    ['0 0 * * 1#2', 'UTC', '2030-01-01T00:00:00Z', '2031-01-01T00:00:00Z'],
  ];
  it.each(cases)('%s in %s from %s to %s: atLeast <= walked count <= atMost', (expr, zone, from, to) => {
    const t = cron(expr, zone);
    const walked = fireTimesBetween(t, at(from), at(to), 100_000).length;
    const b = fireCountBounds(t, at(from), at(to));
    expect(b.atLeast).toBeLessThanOrEqual(walked);
    expect(b.atMost).toBeGreaterThanOrEqual(walked);
  });

  it('gives no lower bound when months or days of the month restrict a cron expression', () => {
    expect(fireCountBounds(cron('* * * 1-11 *'), at('2030-01-01T00:00:00Z'), at('2030-02-01T00:00:00Z')).atLeast).toBe(0);
    expect(fireCountBounds(cron('* * L * *'), at('2030-01-01T00:00:00Z'), at('2030-02-01T00:00:00Z')).atLeast).toBe(0);
  });
});

describe('backfillCount', () => {
  const cap = MAX_BACKFILL_FIRES;

  it('refuses every second over five months from the bounds alone', () => {
    const c = backfillCount(cron('* * * * * *'), at('2030-01-01T00:00:00Z'), at('2030-06-01T00:00:00Z'), cap);
    expect(c.kind).toBe('over');
  });

  it('refuses every second over millennia, in a zone too, without computing a time', () => {
    // Walking these ranges would compute over 10^11 times: only arithmetic returns at all.
    expect(backfillCount(cron('* * * * * *', 'Europe/Paris'), at('2000-01-01T00:00:00Z'), at('9000-01-01T00:00:00Z'), cap)).toMatchObject({ kind: 'over' });
    expect(backfillCount(cron('*/10 * 9-17 * * 1-5', 'America/New_York'), at('2000-01-01T00:00:00Z'), at('9000-01-01T00:00:00Z'), cap)).toMatchObject({
      kind: 'over',
    });
    expect(backfillCount(every(1), at('2027-01-01T00:00:00Z'), at('9000-01-01T00:00:00Z'), cap)).toMatchObject({ kind: 'over' });
  });

  it('knows an interval exactly, and walks a cron expression with the cap as its stop', () => {
    expect(backfillCount(every(1), anchor, at('2027-01-01T02:46:39Z'), cap)).toEqual({ kind: 'exact', total: 10_000 });
    expect(backfillCount(every(1), anchor, at('2027-01-01T02:46:40Z'), cap)).toEqual({ kind: 'over', atLeast: 10_001 });
    expect(backfillCount(cron('*/10 * * * *'), at('2030-01-01T00:00:00Z'), at('2030-01-02T00:00:00Z'), cap)).toEqual({ kind: 'walk', limit: cap });
  });
});

describe('a cron expression with a year field', () => {
  it('bounds nothing from below by its days, and is walked, when only some years match', () => {
    const t = cron('0 0 0 * * * 2030');
    const [from, to] = [at('2000-01-01T00:00:00Z'), at('2099-12-31T23:59:59Z')];
    const b = fireCountBounds(t, from, to);
    expect(b.atLeast).toBe(0);
    expect(b.atMost).toBeGreaterThanOrEqual(365);
    expect(backfillCount(t, from, to, MAX_BACKFILL_FIRES)).toEqual({ kind: 'walk', limit: MAX_BACKFILL_FIRES });
    expect(fireTimesBetween(t, from, to, MAX_BACKFILL_FIRES)).toHaveLength(365);
  });
});

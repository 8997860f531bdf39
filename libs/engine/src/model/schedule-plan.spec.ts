import { describe, expect, it } from '@jest/globals';
import { jitterMs } from './schedule.js';
import { firstFire, MAX_FIRES_PER_PASS, planClockFires } from './schedule-plan.js';
import type { CheckedTiming } from './schedule-times.js';

const anchor = new Date('2030-01-01T00:00:00Z');
const everySecond: CheckedTiming = { intervalSeconds: 1, anchor };
const at = (s: number) => new Date(anchor.getTime() + s * 1000);

describe('planClockFires', () => {
  it('fires what is due and nothing ahead of now', () => {
    const plan = planClockFires(everySecond, 's', at(1), at(3.5), 60, 0);
    expect(plan.due).toEqual([at(1), at(2), at(3)]);
    expect(plan).toMatchObject({ missed: 0, next: at(4), nextDue: at(4) });
  });

  it('counts times older than the catch-up window as missed, never firing them', () => {
    const plan = planClockFires(everySecond, 's', at(1), at(600), 10, 0);
    expect(plan.due[0]).toEqual(at(590));
    expect(plan.due).toHaveLength(11);
    expect(plan.missed).toBe(589);
  });

  it('fires at most a bounded number of times per pass, leaving the rest due', () => {
    const plan = planClockFires(everySecond, 's', at(1), at(1_000), 3_600, 0);
    expect(plan.due).toHaveLength(MAX_FIRES_PER_PASS);
    expect(plan.next).toEqual(at(MAX_FIRES_PER_PASS + 1));
  });

  it('waits for a time’s jitter before firing it', () => {
    const hourly: CheckedTiming = { cron: '0 * * * *', anchor };
    const delay = jitterMs('s', at(3600), 600);
    expect(planClockFires(hourly, 's', at(3600), new Date(at(3600).getTime() + delay - 1), 60, 600).due).toEqual([]);
    expect(planClockFires(hourly, 's', at(3600), new Date(at(3600).getTime() + delay), 60, 600).due).toEqual([at(3600)]);
    expect(firstFire(hourly, 's', anchor, 600)).toEqual({ fireAt: at(3600), dueAt: new Date(at(3600).getTime() + delay) });
  });

  it('never narrows the window below the scheduler’s grace: catchUpSeconds 0 fires what a poll reaches late', () => {
    // Reached 0.4 s late: fired whatever the window, 0 included.
    expect(planClockFires(everySecond, 's', at(1), at(1.4), 0, 0)).toMatchObject({ due: [at(1)], missed: 0 });
    // Ten minutes down: only the grace (10 s by default, or as given) fires.
    expect(planClockFires(everySecond, 's', at(1), at(600), 0, 0)).toMatchObject({ missed: 589, next: at(601) });
    expect(planClockFires(everySecond, 's', at(1), at(600), 5, 0, 20_000)).toMatchObject({ missed: 579 });
    // A window wider than the grace is the window.
    expect(planClockFires(everySecond, 's', at(1), at(600), 30, 0, 20_000)).toMatchObject({ missed: 569 });
  });

  it('ends with the schedule', () => {
    const plan = planClockFires({ ...everySecond, endAt: at(3) }, 's', at(1), at(10), 60, 0);
    expect(plan).toMatchObject({ due: [at(1), at(2)], next: null, nextDue: null });
  });
});

describe('planClockFires over the 2026-11-01 fall-back in America/New_York (01:00-01:59 happens twice)', () => {
  /** The instants a plan fires for `expr` between 04:00Z and 08:00Z (00:00 EDT to 03:00 EST), as a scheduler down all night would. */
  const firesOf = (expr: string) => {
    const t: CheckedTiming = { cron: expr, timeZone: 'America/New_York', anchor: new Date('2026-10-01T00:00:00Z') };
    const from = new Date('2026-11-01T04:00:00Z');
    const plan = planClockFires(t, 's', firstFire(t, 's', from, 0).fireAt, new Date('2026-11-01T08:00:00Z'), 86_400, 0);
    return plan.due.map((d) => d.toISOString().slice(11, 16));
  };

  it('fires each local time of a fixed-hour cron once, at its first occurrence (EDT)', () => {
    expect(firesOf('30 1 * * *')).toEqual(['05:30']);
    expect(firesOf('0 1-3 * * *')).toEqual(['05:00', '07:00', '08:00']);
  });

  it('fires the repeated hour of an hourly cron once: 01:00 EDT, then 02:00 EST', () => {
    expect(firesOf('0 * * * *')).toEqual(['05:00', '07:00', '08:00']);
  });

  it('fires 01:00 and 01:30 of a half-hourly cron once each, leaving the repeated hour out', () => {
    expect(firesOf('*/30 * * * *')).toEqual(['04:30', '05:00', '05:30', '07:00', '07:30', '08:00']);
  });

  it('fires every minute of the repeated hour once under a minute-by-minute cron of hour 1', () => {
    const fires = firesOf('* 1 * * *');
    expect(fires).toHaveLength(60);
    expect(fires[0]).toBe('05:00');
    expect(fires.at(-1)).toBe('05:59');
  });
});

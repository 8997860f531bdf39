import { describe, expect, it } from '@jest/globals';
import { EMPTY_DRAFT, fireText, formatInZone, intervalText, skippedTotal, timeZones, timingText, toScheduleInput, type ScheduleDraft } from './format.js';

const draft = (over: Partial<ScheduleDraft>): ScheduleDraft => ({ ...EMPTY_DRAFT, workflowId: 'nightly', ...over });

describe('schedule words', () => {
  it('say the timing: cron and zone, or the interval with its units', () => {
    expect(timingText({ cron: '0 9 * * *', intervalSeconds: null, timeZone: 'Asia/Kolkata' })).toBe('cron 0 9 * * * (Asia/Kolkata)');
    expect(timingText({ cron: null, intervalSeconds: 90, timeZone: 'UTC' })).toBe('every 90 s (1 min 30 s)');
    expect(intervalText(45)).toBe('every 45 s');
    expect(intervalText(3600)).toBe('every 3600 s (1 h)');
    expect(intervalText(90061)).toBe('every 90061 s (1 d 1 h 1 min 1 s)');
  });
  it('count the skips of every reason', () => {
    expect(skippedTotal({ overlap: 1, missed: 2, bufferFull: 0, startFailed: 3, alreadyFired: 4 })).toBe(10);
  });
  it('show an instant in a given zone, and the text itself for what is not a date or a zone', () => {
    expect(formatInZone('2030-01-01T03:30:00.000Z', 'Asia/Kolkata')).toBe('2030-01-01 09:00:00 GMT+5:30');
    expect(formatInZone('2030-01-01T03:30:00.000Z', 'UTC')).toBe('2030-01-01 03:30:00 UTC');
    expect(formatInZone('2030-07-01T00:00:00Z', 'America/New_York')).toBe('2030-06-30 20:00:00 EDT');
    expect(formatInZone('soon', 'UTC')).toBe('soon');
    expect(formatInZone('2030-01-01T00:00:00Z', 'Mars/Olympus_Mons')).toBe('2030-01-01T00:00:00Z');
  });
  it('offer UTC first among the zones', () => {
    const zones = timeZones();
    expect(zones[0]).toBe('UTC');
    expect(zones.filter((z) => z === 'UTC')).toHaveLength(1);
  });
  it('say what a trigger did', () => {
    const base = { nominalTime: '2030-01-01T00:00:00.000Z', reason: null, run: null, cancelledRunIds: [] };
    expect(fireText({ ...base, outcome: 'STARTED', cancelledRunIds: ['r1'] })).toBe(
      'Triggered: started a run for the nominal time 2030-01-01T00:00:00.000Z. It cancelled 1 running run first.',
    );
    expect(fireText({ ...base, outcome: 'SKIPPED', reason: 'overlap' })).toBe('Skipped: overlap.');
    expect(fireText({ ...base, outcome: 'BUFFERED' })).toMatch(/^Buffered: /);
  });
});

describe('toScheduleInput', () => {
  it('makes a create input of an interval schedule, leaving the empty optional fields out', () => {
    expect(toScheduleInput(draft({ intervalSeconds: ' 300 ', input: '{"a": 1}' }))).toEqual({
      ok: true,
      input: {
        workflowId: 'nightly',
        intervalSeconds: 300,
        catchUpSeconds: 60,
        jitterSeconds: 0,
        timeZone: 'UTC',
        overlapPolicy: 'SKIP',
        input: { a: 1 },
        config: {},
      },
    });
  });
  it('sends a cron as typed (the API judges it) and the dates as ISO instants', () => {
    const r = toScheduleInput(
      draft({ timing: 'cron', cron: ' 61 * * * * ', version: '2', startAt: '2030-01-02T03:04', note: ' hi ', overlapPolicy: 'BUFFER_ALL' }),
    );
    expect(r).toMatchObject({
      ok: true,
      input: { cron: '61 * * * *', version: 2, startAt: new Date(2030, 0, 2, 3, 4).toISOString(), note: 'hi', overlapPolicy: 'BUFFER_ALL' },
    });
    expect(r.ok && 'intervalSeconds' in r.input).toBe(false);
  });
  it('clears on update what is empty, and the other kind of timing', () => {
    const r = toScheduleInput(draft({ timing: 'cron', cron: '@daily', version: '', catchUpSeconds: '', note: '' }), true);
    expect(r).toMatchObject({
      ok: true,
      input: { cron: '@daily', intervalSeconds: null, version: null, catchUpSeconds: null, note: null, startAt: null, endAt: null },
    });
    expect(toScheduleInput(draft({ intervalSeconds: '60' }), true)).toMatchObject({ ok: true, input: { intervalSeconds: 60, cron: null } });
  });
  it('names the field the form can tell is wrong', () => {
    expect(toScheduleInput(draft({ workflowId: ' ' }))).toEqual({ ok: false, error: 'Choose a workflow.' });
    expect(toScheduleInput(draft({ version: '1.5' }))).toEqual({ ok: false, error: 'Version must be a whole number from 1, not "1.5".' });
    expect(toScheduleInput(draft({ timing: 'cron', cron: '' }))).toMatchObject({ ok: false, error: expect.stringMatching(/^Enter a cron expression/) });
    expect(toScheduleInput(draft({ intervalSeconds: 'often' }))).toEqual({ ok: false, error: 'Interval seconds must be a whole number, not "often".' });
    expect(toScheduleInput(draft({ jitterSeconds: '2.5' }))).toEqual({ ok: false, error: 'Jitter seconds must be a whole number, not "2.5".' });
    expect(toScheduleInput(draft({ input: '{"a":' }))).toMatchObject({ ok: false, error: expect.stringMatching(/^Input is not valid JSON: /) });
    expect(toScheduleInput(draft({ config: '[1]' }))).toEqual({ ok: false, error: 'Config must be a JSON object ({…}), not an array.' });
    expect(toScheduleInput(draft({ endAt: '2030-02-30T00:00' }))).toEqual({ ok: false, error: 'End is not a date and time: "2030-02-30T00:00".' });
  });
  it('leaves numbers the API refuses (below its minimum) to the API', () => {
    expect(toScheduleInput(draft({ intervalSeconds: '0' }))).toMatchObject({ ok: true, input: { intervalSeconds: 0 } });
  });
});

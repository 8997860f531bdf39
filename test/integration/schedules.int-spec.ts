import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunCoordinatorOptions } from '@weft/engine/coordinator';
import { RunRepository, ScheduleBackfillRepository, ScheduleRepository, WorkflowRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { def, fork, publishWorkflow, waitFor } from '../support/builders.js';
import { act, installFault, openReplica, type Replica } from '../support/faults.js';
import type { WeftConfig } from '@weft/platform';
import { Scheduler } from '@weft/scheduler';
import { insertBackfill, insertSchedule, runsOfSchedule, scheduleRoom, scheduleRow } from '../support/schedules.js';

/**
 * Schedules fired by the coordinator's schedule room over the real database, on a hand-moved
 * clock (each test its own; the claim is across tenants, so a test reads its own schedule's runs,
 * never how many schedules a poll handled): each nominal time starts one run (replicas racing included), overlap policies, the
 * catch-up window after an outage (and its grace), backfills (changes racing the scheduler are in
 * schedule-updates.int-spec.ts),
 * pause across a restart, and time zones.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** {@link scheduleRoom} on this file's database. */
const setup = (start?: string, opts: RunCoordinatorOptions = {}) => scheduleRoom(db.ds, start, opts);

const iso = (ms: number) => new Date(ms).toISOString();

describe('exactly once', () => {
  let replicas: Replica[] = [];
  afterAll(async () => {
    for (const r of replicas) await r.close();
  });

  it('fires each nominal time of an every-second schedule once while two schedulers race for a minute', async () => {
    const { tenantId, clock, instant } = await setup();
    // Two scheduler processes: each its own pool, coordinator and Scheduler (all four pollers).
    replicas = [await openReplica(db.url, { now: clock.now }), await openReplica(db.url, { now: clock.now })];
    await Promise.all(replicas.map((r) => r.warm()));
    const probe = { hasJob: async () => true };
    const schedulers = replicas.map((r) => Scheduler.create(r.coordinator, { schedulerIntervalMs: 1_000 } as WeftConfig, probe));
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 1, overlapPolicy: 'allow_all' }, clock.now());
    const start = clock.now().getTime();
    // Uneven steps, so a step sometimes brings no fire and sometimes two.
    const steps = [700, 300, 1300, 900, 1100, 400, 1600];
    for (let i = 0; clock.now().getTime() - start < 60_000; i++) {
      clock.advance(Math.min(steps[i % steps.length]!, 60_000 - (clock.now().getTime() - start)));
      // Each scheduler polls twice per step, all four polls at once.
      await Promise.all(schedulers.flatMap((x) => [x.pollOnce(), x.schedules.pollOnce()]));
    }
    const runs = await runsOfSchedule(db.ds, tenantId, s.id);
    const expected = Array.from({ length: 60 }, (_, k) => iso(start + (k + 1) * 1000));
    expect(runs.map((r) => r.nominal)).toEqual(expected);
    expect(new Set(runs.map((r) => r.nominal)).size).toBe(60);
    const row = await scheduleRow(db.ds, tenantId, s.id);
    expect(row.firedCount).toBe(60);
    expect(row.nextFireAt?.toISOString()).toBe(iso(start + 61_000));
    expect(row.skipped).toEqual({ overlap: 0, missed: 0, bufferFull: 0, startFailed: 0, alreadyFired: 0 });
  });

  it('gives the run its schedule and nominal time, in its input (read by templates) and on its row', async () => {
    const { tenantId, clock, poll } = await setup();
    const report = (
      await publishWorkflow(
        db.ds,
        tenantId,
        def([fork('a')], [], { for: '{{ input.schedule.nominalTime }}', by: '{{ input.schedule.id }}', region: '{{ input.region }}' }),
      )
    ).workflowId;
    const s = await insertSchedule(db.ds, tenantId, report, { intervalSeconds: 60, input: { region: 'eu' } }, clock.now());
    clock.advance(60_000);
    await poll();
    const [run] = await runsOfSchedule(db.ds, tenantId, s.id);
    expect(run!.input).toEqual({ region: 'eu', schedule: { id: s.id, nominalTime: '2030-01-01T00:01:00.000Z' } });
    const row = await new RunRepository(db.ds).findRun(tenantId, run!.id);
    expect(row).toMatchObject({
      status: 'SUCCEEDED',
      scheduleId: s.id,
      nominalTime: new Date('2030-01-01T00:01:00Z'),
      idempotencyKey: `schedule:${s.id}:2030-01-01T00:01:00.000Z`,
    });
    expect(row!.output).toEqual({ for: '2030-01-01T00:01:00.000Z', by: s.id, region: 'eu' });
  });

  it('after a crash between starting the run and advancing the schedule, fires that nominal time again, once', async () => {
    const { tenantId, clock, instant, poll } = await setup();
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 60 }, clock.now());
    // The schedule's advance (the UPDATE after the run's start, in the same transaction) fails once.
    const crash = await installFault(db.owner, {
      table: 'schedules',
      events: 'UPDATE',
      when: `NEW.id = '${s.id}' AND NEW.fired_count > OLD.fired_count`,
      action: act.raise('XX000', 'scheduler died'),
      times: 1,
    });
    try {
      clock.advance(60_000);
      await poll();
      expect(await crash.hits()).toBe(1);
      // The run rolled back with the advance; the schedule still owes 00:01.
      expect(await runsOfSchedule(db.ds, tenantId, s.id)).toEqual([]);
      expect((await scheduleRow(db.ds, tenantId, s.id)).nextFireAt?.toISOString()).toBe('2030-01-01T00:01:00.000Z');
      // Claimed again once the dead scheduler's claim lease is over.
      clock.advance(10_000);
      await poll();
      expect((await runsOfSchedule(db.ds, tenantId, s.id)).map((r) => r.nominal)).toEqual(['2030-01-01T00:01:00.000Z']);
      expect((await scheduleRow(db.ds, tenantId, s.id)).firedCount).toBe(1);
    } finally {
      await crash.remove();
    }
  });

  it('starts no second run for a nominal time whose run exists (the idempotency key)', async () => {
    const { tenantId, clock, instant, poll } = await setup();
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 60 }, clock.now());
    clock.advance(60_000);
    await poll();
    // As after a crash that lost the schedule's advance: the same nominal time is due again.
    await new ScheduleRepository(db.ds).saveFireState(tenantId, s.id, {
      nextFireAt: new Date('2030-01-01T00:01:00Z'),
      nextDueAt: new Date('2030-01-01T00:01:00Z'),
      bufferedTimes: [],
      fired: 0,
      skipped: { overlap: 0, missed: 0, bufferFull: 0, startFailed: 0, alreadyFired: 0 },
      lastNominalTime: null,
      lastFiredAt: null,
      lastRunId: null,
      now: clock.now(),
    });
    await poll();
    expect((await runsOfSchedule(db.ds, tenantId, s.id)).map((r) => r.nominal)).toEqual(['2030-01-01T00:01:00.000Z']);
    expect((await scheduleRow(db.ds, tenantId, s.id)).skipped.alreadyFired).toBe(1);
  });
});

describe('a run that cannot start', () => {
  it('is skipped as start_failed with the reason kept, and the schedule moves on', async () => {
    const { tenantId, clock, instant, poll } = await setup();
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 60, version: 1 }, clock.now());
    await new WorkflowRepository(db.ds).setDeprecated(tenantId, instant, 1, true);
    clock.advance(60_000);
    await poll();
    let row = await scheduleRow(db.ds, tenantId, s.id);
    expect(row).toMatchObject({ firedCount: 0, skipped: expect.objectContaining({ startFailed: 1 }) });
    expect(row.lastError).toMatch(/^the run for 2030-01-01T00:01:00.000Z could not start: .*deprecated/);
    expect(row.nextFireAt?.toISOString()).toBe('2030-01-01T00:02:00.000Z');
    // Restored, the next fire starts its run and clears the error.
    await new WorkflowRepository(db.ds).setDeprecated(tenantId, instant, 1, false);
    clock.advance(60_000);
    await poll();
    row = await scheduleRow(db.ds, tenantId, s.id);
    expect(row).toMatchObject({ firedCount: 1, lastError: null, lastNominalTime: new Date('2030-01-01T00:02:00Z') });
  });
});

describe('downtime', () => {
  it('after a stop longer than the catch-up window fires only the times within it and counts the rest as missed', async () => {
    // The claim is across tenants, so this coordinator also fires the schedules earlier tests left: keep this one's notes.
    const notes: { fired: { source: string; lagMs: number }[]; skipped: { reason: string; count: number }[] } = { fired: [], skipped: [] };
    let mine = '';
    const observer = {
      runStarted: () => undefined,
      runFinished: () => undefined,
      leaseRecovered: () => undefined,
      timerFired: () => undefined,
      scheduleFired: (n: { scheduleId: string; source: string; lagMs: number }) =>
        void (n.scheduleId === mine && notes.fired.push({ source: n.source, lagMs: n.lagMs })),
      scheduleSkipped: (n: { scheduleId: string; reason: string; count: number }) =>
        void (n.scheduleId === mine && notes.skipped.push({ reason: n.reason, count: n.count })),
    };
    const { tenantId, clock, instant, poll } = await setup('2030-01-01T00:00:00.000Z', { observer });
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 10, catchUpSeconds: 30, overlapPolicy: 'allow_all' }, clock.now());
    mine = s.id;
    const start = clock.now().getTime();
    clock.advance(10 * 60_000); // ten minutes down: 60 nominal times
    await poll();
    const runs = await runsOfSchedule(db.ds, tenantId, s.id);
    // Due at 9:30, 9:40, 9:50 and 10:00 are within 30 s of 10:00; the 56 before are missed.
    expect(runs.map((r) => r.nominal)).toEqual([570, 580, 590, 600].map((sec) => iso(start + sec * 1000)));
    const row = await scheduleRow(db.ds, tenantId, s.id);
    expect(row.skipped.missed).toBe(56);
    expect(row.firedCount).toBe(4);
    expect(row.nextFireAt?.toISOString()).toBe(iso(start + 610_000));
    // What the metrics are told: four clock fires, 30, 20, 10 and 0 s behind their nominal times, and 56 missed.
    expect(notes.fired).toEqual([30_000, 20_000, 10_000, 0].map((lagMs) => ({ source: 'clock', lagMs })));
    expect(notes.skipped).toEqual([{ reason: 'missed', count: 56 }]);
  });

  it('fires every time of a schedule without catch-up (catchUpSeconds 0) that the scheduler reaches late in its normal course', async () => {
    const { tenantId, clock, instant, poll } = await setup();
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 1, catchUpSeconds: 0, overlapPolicy: 'allow_all' }, clock.now());
    const start = clock.now().getTime();
    // Each poll comes 1.3 s after the last: every time is reached 0.3 s to 1.3 s late, never on the dot.
    for (let i = 0; i < 8; i++) {
      clock.advance(1_300);
      await poll();
    }
    const runs = await runsOfSchedule(db.ds, tenantId, s.id);
    expect(runs.map((r) => r.nominal)).toEqual(Array.from({ length: 10 }, (_, k) => iso(start + (k + 1) * 1000)));
    const row = await scheduleRow(db.ds, tenantId, s.id);
    expect(row.skipped.missed).toBe(0);
    expect(row.nextFireAt?.toISOString()).toBe(iso(start + 11_000));
  });

  it('counts as missed the times of a schedule without catch-up that came due longer than the scheduler’s grace ago', async () => {
    const { tenantId, clock, instant, poll } = await setup('2030-01-01T00:00:00.000Z', { scheduleGraceMs: 10_000 });
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 1, catchUpSeconds: 0, overlapPolicy: 'allow_all' }, clock.now());
    const start = clock.now().getTime();
    clock.advance(60_000); // a minute down: 60 nominal times
    await poll();
    const runs = await runsOfSchedule(db.ds, tenantId, s.id);
    // Due at 0:50 … 1:00 are within the 10 s grace of 1:00; the 49 before are missed.
    expect(runs.map((r) => r.nominal)).toEqual(Array.from({ length: 11 }, (_, k) => iso(start + (50 + k) * 1000)));
    expect((await scheduleRow(db.ds, tenantId, s.id)).skipped.missed).toBe(49);
  });

  it('holds a pause across a scheduler restart, and resumes from now on unpause', async () => {
    const { tenantId, clock, instant, poll } = await setup();
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 60 }, clock.now());
    await new ScheduleRepository(db.ds).setPaused(tenantId, s.id, { paused: true, note: 'maintenance', by: 'ops' });
    clock.advance(5 * 60_000);
    await poll();
    expect(await runsOfSchedule(db.ds, tenantId, s.id)).toEqual([]);
    // A new scheduler process (another coordinator, another pool) sees the same pause.
    const restarted = await openReplica(db.url, { now: clock.now });
    try {
      clock.advance(5 * 60_000);
      await restarted.coordinator.schedules.fireDue(200);
      expect(await runsOfSchedule(db.ds, tenantId, s.id)).toEqual([]);
      const row = await scheduleRow(db.ds, tenantId, s.id);
      expect(row).toMatchObject({ paused: true, pauseNote: 'maintenance', pausedBy: 'ops' });
    } finally {
      await restarted.close();
    }
  });
});

describe('overlap policies, while the previous run is still RUNNING', () => {
  /** A per-minute schedule of the held workflow under `policy`, and a helper firing the next minute. */
  async function minutely(policy: string) {
    const t = await setup();
    const s = await insertSchedule(db.ds, t.tenantId, t.held, { intervalSeconds: 60, overlapPolicy: policy }, t.clock.now());
    const tick = async () => {
      t.clock.advance(60_000);
      await t.poll();
      return runsOfSchedule(db.ds, t.tenantId, s.id);
    };
    return { ...t, s, tick, row: () => scheduleRow(db.ds, t.tenantId, s.id) };
  }
  const M = (n: number) => `2030-01-01T00:0${n}:00.000Z`;

  it('skip: skips and counts the fire, then fires again once the run ended', async () => {
    const t = await minutely('skip');
    const [first] = await t.tick();
    expect(await t.tick()).toHaveLength(1);
    expect((await t.row()).skipped.overlap).toBe(1);
    await t.release(first!.id);
    expect((await t.tick()).map((r) => r.nominal)).toEqual([M(1), M(3)]);
  });

  it('skip: a run QUEUED for a slot of its concurrency key counts as running', async () => {
    const t = await setup();
    const limited = (await publishWorkflow(db.ds, t.tenantId, { ...def([waitFor('w', 'go')]), concurrency: { limit: 1 } })).workflowId;
    const holder = (await t.coordinator.runs.startRun(t.tenantId, { workflowId: limited })).runId;
    const s = await insertSchedule(db.ds, t.tenantId, limited, { intervalSeconds: 60, overlapPolicy: 'skip' }, t.clock.now());
    const tick = async () => {
      t.clock.advance(60_000);
      await t.poll();
      return runsOfSchedule(db.ds, t.tenantId, s.id);
    };
    expect((await tick()).map((r) => r.status)).toEqual(['QUEUED']);
    expect((await tick()).map((r) => r.status)).toEqual(['QUEUED']);
    expect((await scheduleRow(db.ds, t.tenantId, s.id)).skipped.overlap).toBe(1);
    await t.release(holder);
    expect((await runsOfSchedule(db.ds, t.tenantId, s.id)).map((r) => r.status)).toEqual(['RUNNING']);
  });

  it('buffer_one: keeps one fire, skips the next, and starts the kept one when the run ends', async () => {
    const t = await minutely('buffer_one');
    const [first] = await t.tick();
    await t.tick(); // kept
    await t.tick(); // skipped: one is kept already
    expect((await t.row()).bufferedTimes.map((d) => d.toISOString())).toEqual([M(2)]);
    expect((await t.row()).skipped.bufferFull).toBe(1);
    await t.release(first!.id);
    await t.poll();
    expect((await runsOfSchedule(db.ds, t.tenantId, t.s.id)).map((r) => r.nominal)).toEqual([M(1), M(2)]);
    expect((await t.row()).bufferedTimes).toEqual([]);
  });

  it('buffer_all: keeps every fire and starts them in order, one after each run', async () => {
    const t = await minutely('buffer_all');
    const [first] = await t.tick();
    await t.tick();
    await t.tick();
    expect((await t.row()).bufferedTimes.map((d) => d.toISOString())).toEqual([M(2), M(3)]);
    await t.release(first!.id);
    await t.poll();
    let runs = await runsOfSchedule(db.ds, t.tenantId, t.s.id);
    expect(runs.map((r) => r.nominal)).toEqual([M(1), M(2)]);
    await t.release(runs[1]!.id);
    await t.poll();
    runs = await runsOfSchedule(db.ds, t.tenantId, t.s.id);
    expect(runs.map((r) => [r.nominal, r.status])).toEqual([
      [M(1), 'SUCCEEDED'],
      [M(2), 'SUCCEEDED'],
      [M(3), 'RUNNING'],
    ]);
  });

  it('cancel_other: cancels the active run, then starts the new one', async () => {
    const t = await minutely('cancel_other');
    await t.tick();
    const runs = await t.tick();
    expect(runs.map((r) => [r.nominal, r.status])).toEqual([
      [M(1), 'CANCELLED'],
      [M(2), 'RUNNING'],
    ]);
  });

  it('allow_all: starts the new run beside the active one', async () => {
    const t = await minutely('allow_all');
    await t.tick();
    const runs = await t.tick();
    expect(runs.map((r) => [r.nominal, r.status])).toEqual([
      [M(1), 'RUNNING'],
      [M(2), 'RUNNING'],
    ]);
  });

  it('trigger: fires now under the policy, without moving the clock of the schedule', async () => {
    const t = await minutely('skip');
    t.clock.advance(1_500);
    const first = await t.coordinator.schedules.trigger(t.tenantId, t.s.id);
    expect(first).toMatchObject({ outcome: 'started', source: 'trigger', nominalTime: new Date('2030-01-01T00:00:01.500Z') });
    const second = await t.coordinator.schedules.trigger(t.tenantId, t.s.id);
    expect(second).toMatchObject({ outcome: 'skipped', reason: 'overlap' });
    expect((await t.row()).nextFireAt?.toISOString()).toBe(M(1));
  });
});

describe('backfill', () => {
  it('fires each of 100 nominal times once, as a tracked batch', async () => {
    const { tenantId, clock, instant, poll } = await setup('2030-06-01T00:00:00.000Z');
    const s = await insertSchedule(db.ds, tenantId, instant, { cron: '*/5 * * * *' }, clock.now());
    const b = await insertBackfill(db.ds, s, new Date('2030-05-01T00:00:00Z'), new Date('2030-05-01T08:15:00Z'), clock.now());
    expect(b.total).toBe(100);
    await poll();
    const runs = await runsOfSchedule(db.ds, tenantId, s.id);
    expect(runs).toHaveLength(100);
    expect(new Set(runs.map((r) => r.nominal)).size).toBe(100);
    expect(runs[0]!.nominal).toBe('2030-05-01T00:00:00.000Z');
    expect(runs[99]!.nominal).toBe('2030-05-01T08:15:00.000Z');
    const done = (await new ScheduleBackfillRepository(db.ds).find(tenantId, b.id))!;
    expect(done).toMatchObject({ total: 100, started: 100, skipped: 0, nextNominal: null });
    expect(done.finishedAt).not.toBeNull();
  });

  it('waits for the active run under a buffering policy, so the range starts in order', async () => {
    const t = await setup('2030-06-01T00:00:00.000Z');
    const s = await insertSchedule(db.ds, t.tenantId, t.held, { cron: '0 * * * *', overlapPolicy: 'buffer_all' }, t.clock.now());
    const b = await insertBackfill(db.ds, s, new Date('2030-05-01T00:00:00Z'), new Date('2030-05-01T02:00:00Z'), t.clock.now());
    await t.poll();
    let runs = await runsOfSchedule(db.ds, t.tenantId, s.id);
    expect(runs.map((r) => r.nominal)).toEqual(['2030-05-01T00:00:00.000Z']);
    for (let i = 0; i < 2; i++) {
      await t.release(runs[runs.length - 1]!.id);
      await t.poll();
      runs = await runsOfSchedule(db.ds, t.tenantId, s.id);
    }
    expect(runs.map((r) => r.nominal)).toEqual(['2030-05-01T00:00:00.000Z', '2030-05-01T01:00:00.000Z', '2030-05-01T02:00:00.000Z']);
    expect(await new ScheduleBackfillRepository(db.ds).find(t.tenantId, b.id)).toMatchObject({ started: 3, skipped: 0, nextNominal: null });
  });
});

describe('time zones', () => {
  /**
   * Moves the clock an hour at a time from `from` to `to`, polling after each step; returns the
   * nominal times fired. The catch-up window is two hours, so a time the hour step passed is late,
   * not missed.
   */
  async function hourly(cron: string, timeZone: string, from: string, to: string) {
    const t = await setup(from);
    const s = await insertSchedule(db.ds, t.tenantId, t.instant, { cron, timeZone, catchUpSeconds: 7_200 }, t.clock.now());
    while (t.clock.now().getTime() < new Date(to).getTime()) {
      t.clock.advance(3_600_000);
      await t.poll();
    }
    return (await runsOfSchedule(db.ds, t.tenantId, s.id)).map((r) => r.nominal);
  }

  it('fires a daily 02:30 America/New_York schedule once on the 2027 spring-forward day (03:00 EDT)', async () => {
    expect(await hourly('30 2 * * *', 'America/New_York', '2027-03-13T12:00:00Z', '2027-03-15T12:00:00Z')).toEqual([
      '2027-03-14T07:00:00.000Z',
      '2027-03-15T06:30:00.000Z',
    ]);
  });

  it('fires a daily 02:30 America/New_York schedule once, not twice, on the 2027 fall-back day', async () => {
    expect(await hourly('30 2 * * *', 'America/New_York', '2027-11-06T12:00:00Z', '2027-11-08T12:00:00Z')).toEqual([
      '2027-11-07T07:30:00.000Z',
      '2027-11-08T07:30:00.000Z',
    ]);
  });

  it('fires an Asia/Kolkata schedule at its local time', async () => {
    expect(await hourly('0 9 * * *', 'Asia/Kolkata', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z')).toEqual(['2030-01-01T03:30:00.000Z']);
  });
});

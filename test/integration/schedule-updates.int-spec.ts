import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunCoordinator } from '@weft/engine/coordinator';
import { RunRepository, ScheduleBackfillRepository, ScheduleRepository, VersionLookupRepository } from '@weft/persistence';
import type { WeftConfig } from '@weft/platform';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { act, eventually, holdLock, installFault } from '../support/faults.js';
import { insertSchedule, runsOfSchedule, scheduleRoom, scheduleRow } from '../support/schedules.js';
import { SchedulesService } from '../../apps/api/src/schedules/schedules.service.js';

/**
 * Changes to a schedule while the scheduler works on it, over the real database on a hand-moved
 * clock: an update waits for a fire under way and keeps the next fire time it stored; an unpause
 * waits for an update of the timing under way and takes the next fire time from the new timing.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const setup = (start?: string) => scheduleRoom(db.ds, start);

/** The API's schedules service over this file's database and `coordinator`. */
function schedulesService(coordinator: RunCoordinator): SchedulesService {
  return new SchedulesService(
    new ScheduleRepository(db.ds),
    new ScheduleBackfillRepository(db.ds),
    new VersionLookupRepository(db.ds),
    new RunRepository(db.ds),
    coordinator.schedules,
    { minScheduleIntervalSeconds: 10 } as WeftConfig,
  );
}

describe('an update while a fire is under way', () => {
  it('waits for the fire and keeps the next fire time it stored: the fired time neither fires again nor is skipped', async () => {
    const { tenantId, clock, coordinator, instant, poll } = await setup();
    const s = await insertSchedule(db.ds, tenantId, instant, { intervalSeconds: 60 }, clock.now());
    const service = schedulesService(coordinator);
    // The fire of 00:01 stops in its advance of the schedule (row locked, not committed) until the test lets it go.
    const held = await holdLock(db.owner, 7_301);
    let open = false;
    const letGo = async () => {
      if (!open) await held.release();
      open = true;
    };
    const stall = await installFault(db.owner, {
      table: 'schedules',
      events: 'UPDATE',
      when: `NEW.id = '${s.id}' AND NEW.fired_count > OLD.fired_count`,
      action: act.waitForLock(7_301),
      times: 1,
    });
    try {
      clock.advance(60_000);
      const firing = poll();
      await eventually('the fire stopped in its advance', async () => (await stall.hits()) === 1);
      const updating = service.update({ tenantId, keyId: 'k', role: 'admin' }, { id: s.id, note: 'only the note' });
      // The update waits for the fire's row lock (a wait on its transaction, not on the test's advisory lock).
      await eventually('the update waits for the fire', async () => {
        const [r] = (await db.owner.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`,
        )) as { n: number }[];
        return r!.n > 0;
      });
      await letGo();
      await firing;
      expect((await updating).note).toBe('only the note');
    } finally {
      await letGo();
      await stall.remove();
    }
    expect((await scheduleRow(db.ds, tenantId, s.id)).nextFireAt?.toISOString()).toBe('2030-01-01T00:02:00.000Z');
    clock.advance(60_000);
    await poll();
    expect((await runsOfSchedule(db.ds, tenantId, s.id)).map((r) => r.nominal)).toEqual(['2030-01-01T00:01:00.000Z', '2030-01-01T00:02:00.000Z']);
    expect((await scheduleRow(db.ds, tenantId, s.id)).skipped.alreadyFired).toBe(0);
  });
});

describe('an unpause racing an update', () => {
  it('waits for an update of the timing under way and takes the next fire time from the new timing', async () => {
    const { tenantId, clock, coordinator, instant } = await setup('2026-01-01T00:00:00.000Z');
    const service = schedulesService(coordinator);
    const admin = { tenantId, keyId: 'k', role: 'admin' } as const;
    // Every 1 January, then (the update under way) every 1 July: the next fire tells which timing it came from.
    const s = await insertSchedule(db.ds, tenantId, instant, { cron: '0 0 1 1 *' }, clock.now());
    await service.setPaused(admin, s.id, true, 'maintenance');
    const updater = db.owner.createQueryRunner();
    await updater.connect();
    try {
      await updater.startTransaction();
      await updater.query(`UPDATE schedules SET cron = '0 0 1 7 *' WHERE id = $1`, [s.id]);
      const unpausing = service.setPaused(admin, s.id, false, null);
      await eventually('the unpause waits for the update', async () => {
        const [r] = (await db.owner.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`,
        )) as { n: number }[];
        return r!.n > 0;
      });
      await updater.commitTransaction();
      const row = await unpausing;
      expect(row.paused).toBe(false);
      expect(row.nextFireAt?.toISOString()).toMatch(/^\d{4}-07-01T00:00:00\.000Z$/);
    } finally {
      if (updater.isTransactionActive) await updater.rollbackTransaction();
      await updater.release();
    }
  });
});

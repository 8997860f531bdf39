import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { v7 as uuidv7 } from 'uuid';
import { firstFire } from '@weft/engine';
import { claimDueSchedules, ScheduleBackfillRepository, ScheduleRepository, type ScheduleFields } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, fork, publishWorkflow } from '../support/builders.js';
import { insertSchedule, scheduleFields } from '../support/schedules.js';

/**
 * What one tenant cannot take from the others through schedules, on the real database: the
 * scheduler's claim takes due schedules round-robin by tenant, and the caps on a tenant's
 * schedules and unfinished backfills hold under parallel requests. This file's database is its
 * own, and its clock is in 2020, so the claims see only these schedules.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function tenantWithWorkflow() {
  const { tenantId } = await createTenant(db.ds);
  const workflowId = (await publishWorkflow(db.ds, tenantId, def([fork('a')]))).workflowId;
  return { tenantId, workflowId };
}

const fields = (workflowId: string): ScheduleFields => scheduleFields(workflowId, { intervalSeconds: 60 });

describe('the scheduler claim', () => {
  it("takes another tenant's due schedule in the first small batch, however many one tenant has due before it", async () => {
    const a = await tenantWithWorkflow();
    const b = await tenantWithWorkflow();
    const created = new Date('2020-01-01T00:00:00Z');
    for (let i = 0; i < 200; i++) await insertSchedule(db.ds, a.tenantId, a.workflowId, { intervalSeconds: 60 }, created);
    // B's is due last of all: at 00:01:30, after A's 200 at 00:01:00.
    const mine = await insertSchedule(db.ds, b.tenantId, b.workflowId, { intervalSeconds: 60 }, new Date('2020-01-01T00:00:30Z'));
    const claimed = await claimDueSchedules(db.ds, new Date('2020-01-01T00:02:00Z'), 5, 10_000);
    expect(claimed).toHaveLength(5);
    // Each tenant's first turn before anyone's second, by due time within a turn: A's earliest, then B's.
    expect(claimed.map((c) => [c.tenantId, c.turn])).toEqual([
      [a.tenantId, 1],
      [b.tenantId, 1],
      [a.tenantId, 2],
      [a.tenantId, 3],
      [a.tenantId, 4],
    ]);
    expect(claimed[1]!.scheduleId).toBe(mine.id);
    // The rest are A's, claimed by the next batches; the claimed ones are skipped until their lease ends.
    const rest = await claimDueSchedules(db.ds, new Date('2020-01-01T00:02:00Z'), 500, 10_000);
    expect(rest).toHaveLength(196);
    expect(new Set(rest.map((c) => c.tenantId))).toEqual(new Set([a.tenantId]));
  });
});

describe('the cap on schedules per tenant', () => {
  it('lets exactly the cap through when creates race', async () => {
    const t = await tenantWithWorkflow();
    const repo = new ScheduleRepository(db.ds);
    const now = new Date('2020-06-01T00:00:00Z');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => {
        const id = uuidv7();
        const f = fields(t.workflowId);
        return repo.insertWithin(t.tenantId, 3, id, f, firstFire({ ...f, anchor: now }, id, now, 0), now);
      }),
    );
    expect(results.filter((r) => 'row' in r)).toHaveLength(3);
    expect(results.filter((r) => 'full' in r).map((r) => (r as { full: number }).full)).toEqual([3, 3, 3, 3, 3]);
    expect(await repo.list(t.tenantId, { first: 100 })).toHaveLength(3);
  });
});

describe('the cap on unfinished backfills per tenant', () => {
  it('lets exactly the cap through when backfills race, and counts only unfinished ones', async () => {
    const t = await tenantWithWorkflow();
    const now = new Date('2020-06-01T00:00:00Z');
    const [s1, s2] = [
      await insertSchedule(db.ds, t.tenantId, t.workflowId, { intervalSeconds: 60 }, now),
      await insertSchedule(db.ds, t.tenantId, t.workflowId, { intervalSeconds: 60 }, now),
    ];
    const repo = new ScheduleBackfillRepository(db.ds);
    const backfill = (scheduleId: string) =>
      repo.insertWithin(t.tenantId, 2, { id: uuidv7(), scheduleId, fromTime: now, toTime: now, total: 1, first: now, now });
    const results = await Promise.all([s1, s2, s1, s2, s1, s2].map((s) => backfill(s!.id)));
    const made = results.flatMap((r) => ('row' in r ? [r.row] : []));
    expect(made).toHaveLength(2);
    expect(results.filter((r) => 'full' in r)).toHaveLength(4);
    // One finishes: there is room for one more, and only one.
    await repo.advance(t.tenantId, made[0]!.id, { started: 1, skipped: 0, nextNominal: null, now });
    expect('row' in (await backfill(s1!.id))).toBe(true);
    expect(await backfill(s2!.id)).toEqual({ full: 2 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HistoryRepository, TaskWriteRepository, runWrites, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant } from '../support/builders.js';

/**
 * An event's batched writes (runWrites) carry the tenant they were built for: sent on a
 * transaction bound to another tenant they are refused before anything reaches the database,
 * instead of leaving row-level security as the only wall.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('the batched writes of an event', () => {
  it("refuse another tenant's parts on a transaction, and send nothing", async () => {
    const a = await createTenant(db.ds, 'a');
    const b = await createTenant(db.ds, 'b');
    const runId = '01900000-0000-7000-8000-000000000001';
    await expect(
      withTenant(db.ds, a.tenantId, async (m) => {
        const parts = new HistoryRepository(m).parts(b.tenantId, runId, {
          seq: 1,
          type: 'RunStarted',
          payload: {},
          nodeId: null,
          attempt: null,
          at: new Date(),
          actions: [],
          patch: {},
        });
        await runWrites(m, b.tenantId, runId, parts);
      }),
    ).rejects.toThrow(`EntityManager is bound to tenant ${a.tenantId}, not ${b.tenantId}`);
    const [row] = await db.ds.query(`SELECT count(*)::int AS n FROM run_events`);
    expect(row.n).toBe(0);
  });

  it('send the parts of the tenant the transaction is bound to', async () => {
    const a = await createTenant(db.ds, 'c');
    // No such task: the statement runs, and its part's expected row count is what fails.
    await expect(
      withTenant(db.ds, a.tenantId, async (m) => {
        const part = new TaskWriteRepository(m).completePart(
          a.tenantId,
          '01900000-0000-7000-8000-000000000003',
          '01900000-0000-7000-8000-000000000002',
          0,
          { ok: true },
          new Date(),
        );
        await runWrites(m, a.tenantId, '01900000-0000-7000-8000-000000000003', [part]);
      }),
    ).rejects.toThrow('expected exactly one task 01900000-0000-7000-8000-000000000002 attempt 0 to complete, matched 0');
  });
});

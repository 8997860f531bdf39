import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { TenantEntity, sql, sqlInTenant, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant } from '../support/builders.js';

/**
 * A manager kept past its `withTenant` transaction must not send anything when it is used
 * again: its connection is back in the pool, perhaps serving another tenant's transaction. A
 * transaction that ran no statement still has its opening (`BEGIN` and the tenant setting)
 * pending; a TypeORM call on the kept manager must not send it on whatever transaction the
 * connection now serves, nor on an idle pooled connection. One connection in the pool, so every
 * transaction here shares it.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 1 });
});
afterAll(async () => {
  await db?.drop();
});

/** A manager of `tenantId` whose transaction ended without running a statement. */
async function keptManager(tenantId: string): Promise<EntityManager> {
  let kept!: EntityManager;
  await withTenant(db.ds, tenantId, async (m) => {
    kept = m;
  });
  return kept;
}

/** What a TypeORM read on `m` ends with: its rows, or the name of its error. */
const typeormRead = (m: EntityManager) =>
  m
    .getRepository(TenantEntity)
    .find()
    .then(
      (rows) => rows.map((r) => r.id),
      (e: Error) => e.name,
    );

const runtimeStates = async () =>
  ((await db.owner.query(`SELECT state FROM pg_stat_activity WHERE datname = current_database() AND usename = 'weft_app'`)) as { state: string }[]).map(
    (r) => r.state,
  );

describe('a TypeORM call on a manager kept past a transaction that ran no statement', () => {
  it("is refused, and leaves another tenant's transaction on its connection bound to that tenant", async () => {
    const a = await createTenant(db.ds, 'kept-a');
    const b = await createTenant(db.ds, 'kept-b');
    const kept = await keptManager(a.tenantId);

    const seen = await withTenant(db.ds, b.tenantId, async (m) => {
      await sql(m, 'SELECT 1');
      const call = await typeormRead(kept);
      const setting = (await sql<{ t: string }>(m, `SELECT current_setting('app.tenant_id') AS t`)).rows[0]!.t;
      const visible = (await sql<{ id: string }>(m, 'SELECT id FROM tenants')).rows.map((r) => r.id);
      return { call, setting, visible };
    });

    expect(seen).toEqual({ call: 'QueryRunnerAlreadyReleasedError', setting: b.tenantId, visible: [b.tenantId] });
  });

  it('leaves no pooled connection inside a transaction, so a one-statement write that follows commits', async () => {
    const a = await createTenant(db.ds, 'kept-c');
    const rename = (name: string) => sqlInTenant(db.ds, a.tenantId, `UPDATE tenants SET name = $2 WHERE id = $1`, [a.tenantId, name]);
    await rename('prepared'); // the connection prepares the statement: the next one is a one-message EXECUTE
    const kept = await keptManager(a.tenantId);

    expect(await typeormRead(kept)).toBe('QueryRunnerAlreadyReleasedError');
    const states = await runtimeStates();

    // A one-statement write (as a worker's claim is) on the pooled connection answers that it
    // changed its row; the next transaction on that connection then rolls back.
    expect((await rename('renamed')).rowCount).toBe(1);
    await withTenant(db.ds, a.tenantId, async (m) => {
      await sql(m, 'SELECT 1');
      throw new Error('refused');
    }).catch(() => undefined);
    const [row] = (await db.owner.query(`SELECT name FROM tenants WHERE id = $1`, [a.tenantId])) as { name: string }[];

    expect({ states, name: row!.name }).toEqual({ states: ['idle'], name: 'renamed' });
  });
});

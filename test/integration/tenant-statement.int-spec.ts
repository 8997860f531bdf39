import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sqlLiteral, withTenantStatement } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant } from '../support/builders.js';

/**
 * withTenantStatement: a hot one-statement transaction in one round trip. It must keep
 * withTenant's guarantees — row-level security holds it to its tenant, the tenant setting dies
 * with its implicit transaction (never leaking to the pooled connection's next user), and a
 * failing statement changes nothing.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 1 }); // one connection: the next use is the same session
});
afterAll(async () => {
  await db?.drop();
});

describe('one statement for a tenant in one round trip', () => {
  it('sees only its tenant, and leaves no tenant set on the pooled connection', async () => {
    const a = await createTenant(db.ds, 'a');
    await createTenant(db.ds, 'b');
    const r = await withTenantStatement<{ t: string; n: number }>(
      db.ds,
      a.tenantId,
      `SELECT current_setting('app.tenant_id', true) AS t, (SELECT count(*)::int FROM tenants) AS n`,
    );
    expect(r.rows).toEqual([{ t: a.tenantId, n: 1 }]);
    const [after] = await db.ds.query(`SELECT COALESCE(current_setting('app.tenant_id', true), '') AS t, (SELECT count(*)::int FROM tenants) AS n`);
    expect(after).toEqual({ t: '', n: 0 });
  });

  it('rolls a failing statement back whole', async () => {
    const a = await createTenant(db.ds, 'c');
    await expect(
      withTenantStatement(db.ds, a.tenantId, `WITH u AS (UPDATE tenants SET name = 'renamed' WHERE id = ${sqlLiteral(a.tenantId)} RETURNING 1) SELECT 1 / 0 FROM u`),
    ).rejects.toThrow();
    const r = await withTenantStatement<{ name: string }>(db.ds, a.tenantId, `SELECT name FROM tenants WHERE id = ${sqlLiteral(a.tenantId)}`);
    expect(r.rows).toEqual([{ name: 'c' }]);
  });

  it('writes values as literals that cannot break out of their quotes, and refuses a tenant id that is not a UUID', async () => {
    const a = await createTenant(db.ds, 'd');
    const evil = `x'); DROP TABLE tenants; --`;
    const r = await withTenantStatement<{ v: string }>(db.ds, a.tenantId, `SELECT ${sqlLiteral(evil)} AS v`);
    expect(r.rows).toEqual([{ v: evil }]);
    await expect(withTenantStatement(db.ds, `${a.tenantId}'; --`, 'SELECT 1')).rejects.toThrow(TypeError);
    expect(() => sqlLiteral(Number.NaN)).toThrow(TypeError);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sqlInTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant } from '../support/builders.js';

/**
 * sqlInTenant: a hot one-statement transaction, in one round trip once the connection prepared
 * the statement. It must keep withTenant's guarantees — row-level security holds it to its
 * tenant, the tenant setting dies with its implicit transaction (never leaking to the pooled
 * connection's next user), and a failing statement changes nothing — on its first use (a
 * withTenant transaction, which prepares it) and after (`EXECUTE` with literals).
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 1 }); // one connection: the next use is the same session
});
afterAll(async () => {
  await db?.drop();
});

const USES = ['first use', 'prepared'];

describe('one statement for a tenant in one round trip', () => {
  it('sees only its tenant, and leaves no tenant set on the pooled connection', async () => {
    const a = await createTenant(db.ds, 'a');
    await createTenant(db.ds, 'b');
    for (const use of USES) {
      const r = await sqlInTenant<{ t: string; n: number }>(
        db.ds,
        a.tenantId,
        `SELECT current_setting('app.tenant_id', true) AS t, (SELECT count(*)::int FROM tenants WHERE id <> $1) AS others, (SELECT count(*)::int FROM tenants) AS n`,
        ['00000000-0000-0000-0000-000000000000'],
      );
      expect({ use, rows: r.rows }).toEqual({ use, rows: [{ t: a.tenantId, others: 1, n: 1 }] });
      const [after] = await db.ds.query(`SELECT COALESCE(current_setting('app.tenant_id', true), '') AS t, (SELECT count(*)::int FROM tenants) AS n`);
      expect({ use, after }).toEqual({ use, after: { t: '', n: 0 } });
    }
  });

  it('rolls a failing statement back whole', async () => {
    const a = await createTenant(db.ds, 'c');
    for (const use of USES) {
      const err = await sqlInTenant(db.ds, a.tenantId, `WITH u AS (UPDATE tenants SET name = $2 WHERE id = $1 RETURNING 1) SELECT 1 / 0 FROM u`, [
        a.tenantId,
        'renamed',
      ]).catch((e: unknown) => e);
      expect({ use, message: (err as Error).message }).toEqual({ use, message: 'division by zero' });
      const r = await sqlInTenant<{ name: string }>(db.ds, a.tenantId, `SELECT name FROM tenants WHERE id = $1`, [a.tenantId]);
      expect(r.rows).toEqual([{ name: 'c' }]);
    }
  });

  it('sends values that cannot break out of their quotes, and refuses a tenant id that is not a UUID', async () => {
    const a = await createTenant(db.ds, 'd');
    for (const evil of [`x'); DROP TABLE tenants; --`, `\\'); DROP TABLE tenants; --`, `$$ ') ; COMMIT; --`, `E'\\\\'`]) {
      for (const use of USES) {
        const r = await sqlInTenant<{ v: string }>(db.ds, a.tenantId, `SELECT $1::text AS v`, [evil]);
        expect({ use, rows: r.rows }).toEqual({ use, rows: [{ v: evil }] });
      }
    }
    const [n] = await db.owner.query(`SELECT count(*)::int AS n FROM tenants`);
    expect(n.n).toBeGreaterThan(0);
    await expect(sqlInTenant(db.ds, `${a.tenantId}'; --`, 'SELECT 1')).rejects.toThrow(TypeError);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { EntityManager } from 'typeorm';
import { sql, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { createTenant, def, edge, http } from '../support/builders.js';

/**
 * What the hot path's own transaction handling (withTenant opening BEGIN and the tenant setting
 * in one message, named prepared statements) must never do to the pool: hand out a connection
 * still inside a transaction, keep a statement a migration made unusable, or let a manager run
 * after its transaction ended.
 */

describe('query cancels landing anywhere in withTenant', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 4 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('never leave a pooled connection inside a transaction', async () => {
    const { tenantId } = await createTenant(db.ds);
    const admin = new pg.Client({ connectionString: db.ownerUrl });
    await admin.connect();
    let stop = false;
    let cancelled = 0;
    const canceller = (async () => {
      while (!stop) {
        const r = await admin.query(
          `SELECT count(*) FILTER (WHERE c)::int AS n FROM (SELECT pg_cancel_backend(pid) AS c FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'weft-test' AND state = 'active') x`,
        );
        cancelled += (r.rows[0] as { n: number }).n;
      }
    })();
    const aborted: string[] = [];
    const until = Date.now() + 3_000;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (Date.now() < until) {
          await withTenant(db.ds, tenantId, (m) => sql(m, 'SELECT 1')).catch((e: Error) => {
            if (/current transaction is aborted/.test(e.message)) aborted.push(e.message);
          });
        }
      }),
    );
    stop = true;
    await canceller;
    const stuck = await admin.query(
      `SELECT state FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'weft-test' AND state LIKE 'idle in transaction%'`,
    );
    await admin.end();

    expect(cancelled).toBeGreaterThan(0);
    expect(stuck.rows).toEqual([]);
    expect(aborted).toEqual([]);
    expect((await withTenant(db.ds, tenantId, (m) => sql<{ one: number }>(m, 'SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
  }, 30_000);
});

describe('named prepared statements', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 2 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('keep working after a migration changes the type of a column they return', async () => {
    const h = await coordinatorHarness(db.ds);
    const ids = Array.from({ length: 8 }, (_, i) => `n${i}`);
    const runId = await h.start(
      def(
        ids.map((id) => http(id)),
        ids.slice(1).map((id, i) => edge(ids[i]!, id)),
      ),
    );
    for (const id of ids.slice(0, 4)) await h.complete(id); // every connection has prepared the hot statements

    // As a migration must: the view over the column is dropped around the change and made again.
    const [{ def: history }] = await db.owner.query(`SELECT pg_get_viewdef('run_history'::regclass) AS def`);
    await db.owner.transaction(async (m) => {
      await m.query(`DROP VIEW run_history`);
      await m.query(`ALTER TABLE tasks ALTER COLUMN attempt TYPE bigint`);
      await m.query(`CREATE VIEW run_history WITH (security_invoker = true) AS ${history}`);
      await m.query(`GRANT SELECT ON run_history TO weft_app`);
    });
    for (const id of ids.slice(4)) await h.complete(id);

    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });

  it('are refused to a manager used after its transaction ended, even on a connection now serving another tenant', async () => {
    const a = await createTenant(db.ds, 'tenant-a');
    const b = await createTenant(db.ds, 'tenant-b');
    let leaked!: EntityManager;
    await withTenant(db.ds, a.tenantId, async (m) => {
      leaked = m;
      await sql(m, 'SELECT 1');
    });

    const seen = await withTenant(db.ds, b.tenantId, () =>
      sql<{ t: string }>(leaked, `SELECT current_setting('app.tenant_id') AS t`).then(
        (r) => r.rows[0]!.t,
        (e: Error) => e.name,
      ),
    );

    expect(seen).toBe('QueryRunnerAlreadyReleasedError');
  });
});

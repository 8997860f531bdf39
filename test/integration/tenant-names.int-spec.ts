import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MIGRATIONS, TenantNameTakenError, TenantRepository } from '@weft/persistence';
import { migrationDatabase } from '../support/migration-database.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * Tenant names are unique ignoring case: the migration that says so
 * (`1766304000000-unique-tenant-names.ts`) on a database holding a name three times, the index
 * it leaves, and the repository's refusal naming the tenant that holds the name.
 */

const MIGRATION = 'UniqueTenantNames1766304000000';
const at = MIGRATIONS.findIndex((m) => m.name === MIGRATION);
const ids = [
  '00000000-0000-4000-8000-000000000001',
  '00000000-0000-4000-8000-000000000002',
  '00000000-0000-4000-8000-000000000003',
  '00000000-0000-4000-8000-000000000004',
];

describe('the migration to unique tenant names', () => {
  const database = migrationDatabase('tenant_names');
  let owner: DataSource | undefined;
  beforeAll(async () => {
    expect(at).toBeGreaterThan(0);
    await database.create();
  });
  afterAll(async () => {
    if (owner?.isInitialized) await owner.destroy();
    await database.drop();
  });

  it('keeps the oldest tenant of a name, renames the later ones after their id, then refuses a name in another case', async () => {
    owner = database.migrator(at);
    await owner.initialize();
    await owner.runMigrations({ transaction: 'each' });
    await owner.query(
      `INSERT INTO tenants (id, name, created_at) VALUES
         ($1, 'acme', '2030-01-01T00:00:00Z'), ($2, 'ACME', '2030-01-02T00:00:00Z'), ($3, 'Acme', '2030-01-03T00:00:00Z'), ($4, 'bolt', '2030-01-01T00:00:00Z')`,
      ids,
    );
    await owner.destroy();

    owner = database.migrator(at + 1);
    await owner.initialize();
    await owner.runMigrations({ transaction: 'each' });
    expect(await owner.query(`SELECT id, name FROM tenants ORDER BY id`)).toEqual([
      { id: ids[0], name: 'acme' },
      { id: ids[1], name: `ACME (${ids[1]})` },
      { id: ids[2], name: `Acme (${ids[2]})` },
      { id: ids[3], name: 'bolt' },
    ]);
    await expect(owner.query(`INSERT INTO tenants (id, name) VALUES (gen_random_uuid(), 'BOLT')`)).rejects.toMatchObject({
      code: '23505',
      constraint: 'tenants_name_unique',
    });
    // Row-level security is forced on the table again.
    expect(await owner.query(`SELECT relforcerowsecurity AS forced FROM pg_class WHERE relname = 'tenants'`)).toEqual([{ forced: true }]);

    await owner.undoLastMigration({ transaction: 'each' });
    await owner.query(`INSERT INTO tenants (id, name) VALUES (gen_random_uuid(), 'BOLT')`);
    expect(await owner.query(`SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'weft_tenants'`)).toEqual([{ n: 0 }]);
  });
});

describe('tenant names in the repository', () => {
  let db: TestDatabase;
  let tenants: TenantRepository;
  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 2 });
    tenants = new TenantRepository(db.ds);
  });
  afterAll(() => db.drop());

  it('refuses a name another tenant holds, in any case, naming that tenant, and creates nothing', async () => {
    const globex = await tenants.createTenant('Globex');
    const before = await tenants.listTenants();
    const refused = await tenants.createTenant('GLOBEX').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TenantNameTakenError);
    expect(refused).toMatchObject({ code: 'TENANT_NAME_TAKEN', tenantName: 'GLOBEX', existing: { id: globex.tenantId, name: 'Globex' } });
    expect((refused as Error).message).toBe(`tenant name "GLOBEX" is taken by tenant ${globex.tenantId} (named "Globex"; names are compared ignoring case)`);
    expect(await tenants.listTenants()).toEqual(before);
    await expect(tenants.createTenant('Globex')).rejects.toThrow(`tenant name "Globex" is taken by tenant ${globex.tenantId}`);
  });

  it('refuses a name that reads the same once Unicode-normalized, and stores names in NFKC', async () => {
    // "Café" precomposed, then with a combining accent; "ACME" in fullwidth letters.
    const cafe = await tenants.createTenant('Caf\u00e9');
    await expect(tenants.createTenant('Cafe\u0301')).rejects.toMatchObject({ code: 'TENANT_NAME_TAKEN', existing: { id: cafe.tenantId, name: 'Caf\u00e9' } });
    const acme = await tenants.createTenant('\uff21\uff23\uff2d\uff25 Corp');
    expect(acme.name).toBe('ACME Corp');
    await expect(tenants.createTenant('acme corp')).rejects.toMatchObject({ code: 'TENANT_NAME_TAKEN', existing: { id: acme.tenantId, name: 'ACME Corp' } });
    expect(await tenants.findTenantByName('CAFE\u0301')).toEqual({ id: cafe.tenantId, name: 'Caf\u00e9' });
  });

  it('refuses one of two concurrent creates of a name', async () => {
    const both = await Promise.allSettled([tenants.createTenant('race'), tenants.createTenant('Race')]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const won = both.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ tenantId: string }>;
    expect((both.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ existing: { id: won.value.tenantId } });
  });

  it('lists every tenant to the runtime role with no tenant set, with its weight and live keys, never a key', async () => {
    const initech = await tenants.createTenant('initech');
    const extra = await tenants.createApiKey(initech.tenantId, { name: 'ci', role: 'viewer' });
    await tenants.createApiKey(initech.tenantId, { name: 'old', role: 'viewer' }).then((k) => tenants.revokeApiKey(initech.tenantId, k.keyId));
    await tenants.setDispatchWeight(initech.tenantId, 7);
    const listed = await tenants.listTenants();
    expect(listed.map((t) => t.name)).toEqual(['Globex', 'Caf\u00e9', 'ACME Corp', expect.stringMatching(/^race$/i), 'initech']);
    expect(listed.at(-1)).toEqual({ id: initech.tenantId, name: 'initech', createdAt: expect.any(Date), dispatchWeight: 7, liveKeys: 2 });
    expect(JSON.stringify(listed)).not.toContain(extra.keyPrefix);
    expect(await tenants.findTenantByName('INITECH')).toEqual({ id: initech.tenantId, name: 'initech' });
    expect(await tenants.findTenantByName('nobody')).toBeNull();
    // The tables themselves still show the runtime role no tenant without one set.
    expect(await db.ds.query(`SELECT id FROM tenants`)).toEqual([]);
  });
});

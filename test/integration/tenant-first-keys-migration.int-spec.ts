import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MIGRATIONS, claimOutbox, createDataSource, runMigrations } from '@weft/persistence';
import { migrationDatabase } from '../support/migration-database.js';
import { runtimeUrl } from '../support/test-database.js';
import { readCatalogKeys, tenantKeyBreaches } from '../support/tenant-key-rule.js';

/**
 * The migration that makes every key tenant first (`1765267200000-tenant-first-keys.ts`) on a
 * database that already holds rows: migrated to the migration before it, filled by the owner,
 * then migrated up. The rows stay as they were, the relay claims the outbox rows written before
 * the upgrade, the sequence goes on, and `down` restores the previous keys with the rows intact.
 */

const MIGRATION = 'TenantFirstKeys1765267200000';
const T1 = '00000000-0000-4000-8000-000000000001';
const T2 = '00000000-0000-4000-8000-000000000002';
/** Each tenant's key hash. */
const HASH: Record<string, string> = { [T1]: 'a'.repeat(64), [T2]: 'b'.repeat(64) };

const database = migrationDatabase('upgrade');
const { name, ownerUrl } = database;
/** A DataSource of the owner that knows the migrations up to `count` (the ones before MIGRATION and, with +1, it). */
const migrator = database.migrator;
let owner: DataSource;

const at = MIGRATIONS.findIndex((m) => m.name === MIGRATION);

beforeAll(async () => {
  await database.create();
  const before = migrator(at);
  await before.initialize();
  try {
    await before.runMigrations({ transaction: 'each' });
  } finally {
    await before.destroy();
  }
  owner = createDataSource(ownerUrl, { poolSize: 2 });
  await owner.initialize();
  // Two tenants, each with a key, a run and three dispatched tasks whose outbox rows were
  // committed a minute ago: the first enqueued, the other two still waiting for the relay.
  for (const [i, tenant] of [T1, T2].entries()) {
    const n = i + 1;
    const run = `00000000-0000-4000-9000-00000000000${n}`;
    const task = (g: number) => `00000000-0000-4000-a00${n}-00000000000${g}`;
    await owner.query(`INSERT INTO tenants (id, name) VALUES ($1, $2)`, [tenant, `tenant ${n}`]);
    await owner.query(`INSERT INTO api_keys (tenant_id, id, name, role, key_hash, key_prefix) VALUES ($1, $2, 'admin', 'admin', $3, 'weft_abcdefgh')`, [
      tenant,
      `00000000-0000-4000-b000-00000000000${n}`,
      HASH[tenant],
    ]);
    await owner.query(`INSERT INTO workflows (tenant_id, id, latest_version) VALUES ($1, 'wf', 1)`, [tenant]);
    await owner.query(`INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum) VALUES ($1, 'wf', 1, '{}', '{}', 'c')`, [
      tenant,
    ]);
    await owner.query(`INSERT INTO runs (tenant_id, id, workflow_id, version, status) VALUES ($1, $2, 'wf', 1, 'RUNNING')`, [tenant, run]);
    for (const g of [1, 2, 3]) {
      await owner.query(
        `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, status, queue, attempt) VALUES ($1, $2, $3, $4, 'HTTP', 'QUEUED', 'http', 0)`,
        [tenant, task(g), run, `n${g}`],
      );
      await owner.query(
        `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, created_at, enqueued_at)
         VALUES ($1, $2, $3, 0, 'http', now(), now() - interval '1 minute', CASE WHEN $4::boolean THEN now() END)`,
        [tenant, run, task(g), g === 1],
      );
    }
  }
});

afterAll(async () => {
  if (owner?.isInitialized) await owner.destroy();
  await database.drop();
});

const outboxRows = () =>
  owner.query(`SELECT id::int, tenant_id, task_id, attempt, queue, enqueued_at IS NOT NULL AS enqueued FROM outbox ORDER BY id`) as Promise<unknown[]>;
const keyRows = () => owner.query(`SELECT tenant_id, id, role, key_hash FROM api_keys ORDER BY tenant_id`) as Promise<unknown[]>;
/** The row match of `weft_claim_outbox`'s UPDATE, as its stored definition reads. */
const claimMatch = async () => {
  const [{ def }] = (await owner.query(`SELECT pg_get_functiondef('weft_claim_outbox(timestamptz, timestamptz, int, timestamptz)'::regprocedure) AS def`)) as {
    def: string;
  }[];
  return /FROM due WHERE (.*)$/m.exec(def)?.[1]?.trim();
};
const outboxKey = async () => (await readCatalogKeys(owner)).keys.find((k) => k.name === 'outbox_pkey')?.columns;

describe(`migrating a database with rows through ${MIGRATION}`, () => {
  it('keeps every row, keys the outbox by tenant first, and the relay claims the rows written before', async () => {
    const rows = [
      { id: 1, tenant_id: T1, task_id: '00000000-0000-4000-a001-000000000001', attempt: 0, queue: 'http', enqueued: true },
      { id: 2, tenant_id: T1, task_id: '00000000-0000-4000-a001-000000000002', attempt: 0, queue: 'http', enqueued: false },
      { id: 3, tenant_id: T1, task_id: '00000000-0000-4000-a001-000000000003', attempt: 0, queue: 'http', enqueued: false },
      { id: 4, tenant_id: T2, task_id: '00000000-0000-4000-a002-000000000001', attempt: 0, queue: 'http', enqueued: true },
      { id: 5, tenant_id: T2, task_id: '00000000-0000-4000-a002-000000000002', attempt: 0, queue: 'http', enqueued: false },
      { id: 6, tenant_id: T2, task_id: '00000000-0000-4000-a002-000000000003', attempt: 0, queue: 'http', enqueued: false },
    ];
    const keys = await keyRows();
    expect(await outboxRows()).toEqual(rows);
    expect(await outboxKey()).toEqual(['id']);
    expect(await claimMatch()).toBe('o.id = due.id');

    const up = migrator(at + 1);
    await up.initialize();
    try {
      expect((await up.runMigrations({ transaction: 'each' })).map((m) => m.name)).toEqual([MIGRATION]);
    } finally {
      await up.destroy();
    }

    expect(await outboxRows()).toEqual(rows);
    expect(await keyRows()).toEqual(keys);
    expect(await outboxKey()).toEqual(['tenant_id', 'id']);
    expect(await claimMatch()).toBe('o.tenant_id = due.tenant_id AND o.id = due.id');
    expect(tenantKeyBreaches(await readCatalogKeys(owner))).toEqual([]);

    // The runtime role's relay claim, which now carries the tenant into its UPDATE.
    const runtime = createDataSource(runtimeUrl(name), { poolSize: 1 });
    await runtime.initialize();
    try {
      const claimed = await claimOutbox(runtime, { now: null, graceMs: 10_000, leaseMs: 60_000, limit: 10 });
      expect(claimed.map((c) => [c.outboxId, c.tenantId, c.taskId]).sort()).toEqual([
        ['2', T1, '00000000-0000-4000-a001-000000000002'],
        ['3', T1, '00000000-0000-4000-a001-000000000003'],
        ['5', T2, '00000000-0000-4000-a002-000000000002'],
        ['6', T2, '00000000-0000-4000-a002-000000000003'],
      ]);
      expect(await claimOutbox(runtime, { now: null, graceMs: 10_000, leaseMs: 60_000, limit: 10 })).toEqual([]);
    } finally {
      await runtime.destroy();
    }
    expect(((await owner.query(`SELECT id::int FROM outbox WHERE claimed_at IS NOT NULL ORDER BY id`)) as { id: number }[]).map((r) => r.id)).toEqual([
      2, 3, 5, 6,
    ]);

    // New rows: the id sequence goes on; a key hash is unique within its tenant only.
    const [next] = (await owner.query(
      `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before)
       VALUES ($1, '00000000-0000-4000-9000-000000000001', '00000000-0000-4000-a001-000000000009', 0, 'http', now()) RETURNING id::int`,
      [T1],
    )) as { id: number }[];
    expect(next).toEqual({ id: 7 });
    const addKey = (tenant: string, id: string) =>
      owner.query(`INSERT INTO api_keys (tenant_id, id, name, role, key_hash, key_prefix) VALUES ($1, $2, 'again', 'viewer', $3, 'weft_abcdefgh')`, [
        tenant,
        id,
        HASH[T1],
      ]);
    await expect(addKey(T1, '00000000-0000-4000-b000-000000000009')).rejects.toMatchObject({ code: '23505', constraint: 'api_keys_key_hash' });
    await addKey(T2, '00000000-0000-4000-b000-000000000009');
    await owner.query(`DELETE FROM outbox WHERE id = 7`);
    await owner.query(`DELETE FROM api_keys WHERE id = '00000000-0000-4000-b000-000000000009'`);
  });

  it('down restores the previous keys and claim with every row intact, and up applies again', async () => {
    const rows = await outboxRows();
    const keys = await keyRows();
    const ds = migrator(at + 1);
    await ds.initialize();
    try {
      await ds.undoLastMigration({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
    expect(await outboxKey()).toEqual(['id']);
    expect(await claimMatch()).toBe('o.id = due.id');
    expect((await readCatalogKeys(owner)).keys.find((k) => k.name === 'api_keys_key_hash')?.columns).toEqual(['key_hash']);
    expect(await outboxRows()).toEqual(rows);
    expect(await keyRows()).toEqual(keys);

    expect(await runMigrations(ownerUrl)).toContain(MIGRATION);
    expect(await outboxKey()).toEqual(['tenant_id', 'id']);
    expect(await claimMatch()).toBe('o.tenant_id = due.tenant_id AND o.id = due.id');
    expect(await outboxRows()).toEqual(rows);
  });
});

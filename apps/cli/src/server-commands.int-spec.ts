import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TenantRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.js';
import { serverCommands } from './server-commands.js';
import { runCommands } from '../../../test/support/cli.js';

/**
 * `weft admin create-key` run in this process, as the `weft` binary would run it, against a
 * test database (DATABASE_URL as the runtime role, DATABASE_OWNER_URL for the migration check).
 */
describe('weft admin create-key', () => {
  let db: TestDatabase;
  let tenantId: string;
  const saved = { DATABASE_URL: process.env.DATABASE_URL, DATABASE_OWNER_URL: process.env.DATABASE_OWNER_URL };

  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 2 });
    process.env.DATABASE_URL = db.url;
    process.env.DATABASE_OWNER_URL = db.ownerUrl;
    tenantId = (await new TenantRepository(db.ds).createTenant('cli')).tenantId;
  });
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await db.drop();
  });
  /** Runs `weft <args>`; resolves what it printed on stdout, rejects with its error. */
  function weft(...args: string[]): Promise<string> {
    return runCommands(serverCommands, {}, ...args);
  }

  it('prints a new key of the role once, as JSON on the last line, and the key authenticates', async () => {
    const out = await weft('admin', 'create-key', '--tenant', tenantId, '--role', 'operator', '--name', '  deploy bot  ');
    const printed = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(printed).toEqual({ tenantId, keyId: expect.any(String), name: 'deploy bot', role: 'operator', apiKey: expect.stringMatching(/^weft_/) });
    const tenants = new TenantRepository(db.ds);
    expect(await tenants.findApiKey(printed.apiKey)).toEqual({ tenantId, keyId: printed.keyId, role: 'operator' });
    const listed = (await tenants.listApiKeys(tenantId)).find((k) => k.id === printed.keyId);
    expect(listed).toMatchObject({ name: 'deploy bot', role: 'operator', revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(printed.apiKey);
  });

  it('names the key after its role by default and accepts the role in any case', async () => {
    const printed = JSON.parse((await weft('admin', 'create-key', '--tenant', tenantId, '--role', 'VIEWER')).trim());
    expect(printed).toMatchObject({ name: 'viewer', role: 'viewer' });
  });

  it('refuses an unknown tenant, a tenant id that is not a UUID, a bad role and a bad name', async () => {
    await expect(weft('admin', 'create-key', '--tenant', randomUUID(), '--role', 'admin')).rejects.toThrow(/unknown tenant/);
    await expect(weft('admin', 'create-key', '--tenant', 'acme', '--role', 'admin')).rejects.toThrow(/unknown tenant "acme": a tenant id is a UUID/);
    await expect(weft('admin', 'create-key', '--tenant', tenantId, '--role', 'root')).rejects.toThrow(/must be one of admin, operator, viewer/);
    await expect(weft('admin', 'create-key', '--tenant', tenantId, '--role', 'admin', '--name', 'a\u0007b')).rejects.toThrow(
      /control or invisible formatting characters/,
    );
    await expect(weft('admin', 'create-key', '--tenant', tenantId, '--role', 'admin', '--name', '\u202eevil')).rejects.toThrow(
      /invisible formatting characters/,
    );
    await expect(weft('admin', 'create-key', '--tenant', tenantId, '--role', 'admin', '--name', 'x'.repeat(101))).rejects.toThrow(/at most 100/);
    await expect(weft('admin', 'create-key', '--role', 'admin')).rejects.toThrow(/--tenant/);
    expect((await new TenantRepository(db.ds).listApiKeys(tenantId)).map((k) => k.name)).toEqual(['admin', 'deploy bot', 'viewer']);
  });

  it('refuses a key over WEFT_MAX_KEYS_PER_TENANT live keys, naming the cap and its setting', async () => {
    const saved = process.env.WEFT_MAX_KEYS_PER_TENANT;
    process.env.WEFT_MAX_KEYS_PER_TENANT = '3';
    try {
      const live = (await new TenantRepository(db.ds).listApiKeys(tenantId)).filter((k) => !k.revokedAt).length;
      expect(live).toBe(3);
      await expect(weft('admin', 'create-key', '--tenant', tenantId, '--role', 'viewer')).rejects.toThrow(
        `tenant ${tenantId} holds 3 live API keys, its most (WEFT_MAX_KEYS_PER_TENANT)`,
      );
      expect(await new TenantRepository(db.ds).listApiKeys(tenantId)).toHaveLength(3);
    } finally {
      if (saved === undefined) delete process.env.WEFT_MAX_KEYS_PER_TENANT;
      else process.env.WEFT_MAX_KEYS_PER_TENANT = saved;
    }
  });

  it('refuses a database that does not exist instead of creating an empty one (a mistyped name)', async () => {
    const typo = `${db.name}_typo`;
    const url = (u: string) => u.replace(`/${db.name}`, `/${typo}`);
    process.env.DATABASE_URL = url(db.url);
    process.env.DATABASE_OWNER_URL = url(db.ownerUrl);
    try {
      await expect(weft('admin', 'create-tenant', 'acme')).rejects.toThrow(`database "${typo}" does not exist`);
      const exists = await db.owner.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [typo]);
      expect(exists).toEqual([]);
    } finally {
      process.env.DATABASE_URL = db.url;
      process.env.DATABASE_OWNER_URL = db.ownerUrl;
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import { TenantRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.js';
import { cli } from '../../../test/support/weft-cli.js';

/**
 * `weft admin tenants`, `create-tenant`, `create-key` and `tenant-weight` in this process, as the
 * binary runs them (`runCli`: real exit codes and error lines), against a test database: each
 * output format, and a tenant name that is taken.
 */
describe('weft admin on tenants', () => {
  let db: TestDatabase;
  /** `weft admin <args>` on the test database. */
  const admin = (...args: string[]) => cli({ DATABASE_URL: db.url, DATABASE_OWNER_URL: db.ownerUrl }, 'admin', ...args);

  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 2 });
  });
  afterAll(() => db.drop());

  it('creates a tenant: one line of JSON by default, the last; the whole key with -o json or yaml', async () => {
    const r = await admin('create-tenant', 'acme');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.endsWith('\n')).toBe(true);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const line = JSON.parse(r.stdout);
    expect(line).toEqual({ tenantId: expect.any(String), apiKey: expect.stringMatching(/^weft_/) });
    expect(await new TenantRepository(db.ds).findApiKey(line.apiKey)).toMatchObject({ tenantId: line.tenantId, role: 'admin' });

    const json = await admin('create-tenant', 'bolt', '-o', 'json');
    expect(json.code).toBe(0);
    expect(json.stdout).toMatch(/^\{\n {2}"tenantId": /);
    const created = JSON.parse(json.stdout);
    expect(created).toEqual({ tenantId: expect.any(String), name: 'bolt', keyId: expect.any(String), role: 'admin', apiKey: expect.stringMatching(/^weft_/) });
    const yaml = YAML.parse((await admin('create-tenant', 'cargo', '-o', 'yaml')).stdout);
    expect(yaml).toEqual({ tenantId: expect.any(String), name: 'cargo', keyId: expect.any(String), role: 'admin', apiKey: expect.stringMatching(/^weft_/) });
  });

  it('refuses a name taken in any case, naming the tenant that has it, exit code 4, and creates nothing', async () => {
    const before = JSON.parse((await admin('tenants', '-o', 'json')).stdout);
    const acme = before.find((t: { name: string }) => t.name === 'acme');
    for (const [name, output] of [
      ['acme', []],
      [' ACME ', ['-o', 'json']],
    ] as const) {
      const r = await admin('create-tenant', name, ...output);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`error: tenant name "${name.trim()}" is taken by tenant ${acme.id}`);
      expect(r.stderr).toContain(`weft admin create-key --tenant ${acme.id} --role admin`);
    }
    expect(JSON.parse((await admin('tenants', '-o', 'json')).stdout)).toEqual(before);
  });

  it('refuses an empty, blank, invisible or over-long name, measured as it is stored (NFKC), with exit code 2', async () => {
    const before = (await admin('tenants', '-o', 'json')).stdout;
    // U+FDFA is one character that NFKC writes as 18: twelve of them store 216 characters.
    // A zero-width joiner outside an emoji sequence makes "acme" and "acme\u200d" two names that read the same.
    for (const name of ['', '   ', '\u200b', 'x'.repeat(10_000), '\ufdfa'.repeat(12), 'acme\u200d', 'ac\u200dme', '\u200dacme']) {
      const r = await admin('create-tenant', name);
      expect({ name: name.slice(0, 20), code: r.code, stdout: r.stdout }).toEqual({ name: name.slice(0, 20), code: 2, stdout: '' });
      expect(r.stderr).toMatch(/tenant name (must not be empty|must not contain|is \d+ characters; at most 200)/);
    }
    expect((await admin('tenants', '-o', 'json')).stdout).toBe(before);
  });

  it('lists the tenants oldest first in every format: id, name, created, weight, live keys', async () => {
    const json = JSON.parse((await admin('tenants', '-o', 'json')).stdout);
    expect(json.map((t: { name: string }) => t.name)).toEqual(['acme', 'bolt', 'cargo']);
    expect(json[0]).toEqual({
      id: expect.any(String),
      name: 'acme',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      dispatchWeight: 1,
      liveKeys: 1,
    });
    expect(YAML.parse((await admin('tenants', '-o', 'yaml')).stdout)).toEqual(json);

    const key = JSON.parse((await admin('create-key', '--tenant', json[1].id, '--role', 'viewer')).stdout);
    expect(key).toMatchObject({ tenantId: json[1].id, role: 'viewer', name: 'viewer' });
    const weight = await admin('tenant-weight', json[1].id, '5', '-o', 'json');
    expect(JSON.parse(weight.stdout)).toEqual({ tenantId: json[1].id, dispatchWeight: 5, previousDispatchWeight: 1 });
    expect(YAML.parse((await admin('tenant-weight', json[1].id, '-o', 'yaml')).stdout)).toEqual({ tenantId: json[1].id, dispatchWeight: 5 });

    const lines = (await admin('tenants')).stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CREATED\s+WEIGHT\s+KEYS$/);
    expect(lines[2]).toMatch(new RegExp(`^${json[1].id}\\s+bolt\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+5\\s+2$`));
    expect(lines).toHaveLength(4);
  });

  it('prints a new key of create-key as YAML with -o yaml', async () => {
    const [t] = JSON.parse((await admin('tenants', '-o', 'json')).stdout);
    const key = YAML.parse((await admin('create-key', '--tenant', t.id, '--role', 'operator', '--name', 'deploy', '-o', 'yaml')).stdout);
    expect(key).toEqual({ tenantId: t.id, keyId: expect.any(String), name: 'deploy', role: 'operator', apiKey: expect.stringMatching(/^weft_/) });
  });

  it('takes a zero-width joiner within an emoji sequence, where it is part of one character', async () => {
    const emoji = await admin('create-tenant', 'team \u{1f469}\u200d\u{1f4bb}', '-o', 'json');
    expect({ code: emoji.code, stderr: emoji.stderr, name: JSON.parse(emoji.stdout || '{}').name }).toEqual({
      code: 0,
      stderr: '',
      name: 'team \u{1f469}\u200d\u{1f4bb}',
    });
  });

  it('names the first key as --key-name says (default: admin)', async () => {
    const named = JSON.parse((await admin('create-tenant', 'dune', '--key-name', 'demo', '-o', 'json')).stdout);
    expect(named).toMatchObject({ name: 'dune', role: 'admin' });
    expect(await new TenantRepository(db.ds).listApiKeys(named.tenantId)).toEqual([expect.objectContaining({ id: named.keyId, name: 'demo', role: 'admin' })]);
    const plain = JSON.parse((await admin('create-tenant', 'elm', '-o', 'json')).stdout);
    expect(await new TenantRepository(db.ds).listApiKeys(plain.tenantId)).toEqual([expect.objectContaining({ id: plain.keyId, name: 'admin' })]);
  });
});

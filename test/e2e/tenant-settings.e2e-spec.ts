import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftClient } from '@weft/client';
import { jsNode, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';
import { runWeft } from '../support/cli.js';

/** The tenant's settings over GraphQL and through `weft settings`: run retention, for admins only. */
describe('tenant settings', () => {
  let e2e: E2E;
  let admin: WeftClient;
  let adminKey: string;

  const read = async (c: WeftClient) => (await c.request(`{ tenantSettings { retentionDays } }`)).tenantSettings;
  const update = async (c: WeftClient, input: Record<string, unknown>) =>
    (await c.request(`mutation($i: UpdateTenantSettingsInput!) { updateTenantSettings(input: $i) { retentionDays } }`, { i: input })).updateTenantSettings;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_RETENTION_INTERVAL_MS: 100 });
    ({ client: admin, apiKey: adminKey } = await e2e.tenant('settings'));
  });
  afterAll(async () => {
    await e2e?.close();
  });

  it('keeps runs forever by default, sets a retention, keeps it when the field is absent, and clears it with null', async () => {
    expect(await read(admin)).toEqual({ retentionDays: null });
    expect(await update(admin, { retentionDays: 30 })).toEqual({ retentionDays: 30 });
    expect(await update(admin, {})).toEqual({ retentionDays: 30 });
    expect(await read(admin)).toEqual({ retentionDays: 30 });
    expect(await update(admin, { retentionDays: 1 })).toEqual({ retentionDays: 1 });
    expect(await update(admin, { retentionDays: 3650 })).toEqual({ retentionDays: 3650 });
    expect(await update(admin, { retentionDays: null })).toEqual({ retentionDays: null });
  });

  it('refuses a retention out of 1–3,650 days as BAD_USER_INPUT on retentionDays, and stores nothing', async () => {
    await update(admin, { retentionDays: 90 });
    for (const days of [0, -1, 3651, 100_000]) {
      const err = await rejection(update(admin, { retentionDays: days }));
      expect(err.code).toBe('BAD_USER_INPUT');
      expect(err.errors[0]!.extensions!.problems).toEqual([
        { path: 'retentionDays', message: `retentionDays must be an integer from 1 to 3650 (days), or null to keep runs forever; got ${days}` },
      ]);
    }
    expect(await read(admin)).toEqual({ retentionDays: 90 });
  });

  it('refuses operators and viewers, reading and changing alike, as for API keys', async () => {
    for (const role of ['operator', 'viewer']) {
      const { secret } = (await admin.request(`mutation($r: ApiKeyRole!) { createApiKey(input: {name: "s", role: $r}) { secret } }`, { r: role })).createApiKey;
      const c = new WeftClient(e2e.url, secret);
      const readErr = await rejection(read(c));
      expect([readErr.code, readErr.errors[0]!.message]).toEqual([
        'FORBIDDEN',
        `The ${role} role may not read tenant settings: tenantSettings needs the admin role`,
      ]);
      const writeErr = await rejection(update(c, { retentionDays: 1 }));
      expect([writeErr.code, writeErr.errors[0]!.message]).toEqual([
        'FORBIDDEN',
        `The ${role} role may not change tenant settings: updateTenantSettings needs the admin role`,
      ]);
      await c.close();
    }
    expect(await read(admin)).toEqual({ retentionDays: 90 });
  });

  it('has the scheduler delete a run that ended longer ago than the retention, and keep a recent one', async () => {
    const { client } = await e2e.tenant('retention');
    await publish(client, 'short', { nodes: [jsNode('a', 'return {};')], edges: [] });
    const [old, recent] = [await start(client, 'short'), await start(client, 'short')];
    for (const id of [old, recent]) expect((await waitRun(client, id)).status).toBe('SUCCEEDED');
    await e2e.owner.query(`UPDATE runs SET finished_at = now() - interval '3 days' WHERE id = $1`, [old]);
    await update(client, { retentionDays: 2 });
    const exists = async (id: string) => ((await e2e.owner.query(`SELECT 1 FROM runs WHERE id = $1`, [id])) as unknown[]).length === 1;
    for (const deadline = Date.now() + 30_000; await exists(old);) {
      if (Date.now() > deadline) throw new Error(`run ${old} still stored after 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await rejection(client.request(`query($id: ID!) { run(id: $id) { id } }`, { id: old }))).code).toBe('NOT_FOUND');
    expect(await exists(recent)).toBe(true);
  });

  describe('the CLI', () => {
    const weft = (...args: string[]) => runWeft(e2e.url, adminKey, ...args);

    it('sets, shows and clears the retention', async () => {
      expect(await weft('settings', 'retention', '30')).toBe('retention  30 days\n');
      expect(await weft('settings')).toBe('retention  30 days\n');
      expect(JSON.parse(await weft('settings', 'get', '-o', 'json'))).toEqual({ retentionDays: 30 });
      expect(await weft('settings', 'retention', '--keep', '-o', 'yaml')).toBe('retentionDays: null\n');
      expect(await read(admin)).toEqual({ retentionDays: null });
      expect(JSON.parse(await weft('settings', 'retention', '7', '-o', 'json'))).toEqual({ retentionDays: 7 });
      expect(await weft('settings', 'retention', 'none')).toBe('retention  keep runs forever\n');
      expect(await read(admin)).toEqual({ retentionDays: null });
    });

    it('refuses what is not a number of days, and passes on the API’s range check', async () => {
      await expect(weft('settings', 'retention', 'soon')).rejects.toThrow(/must be a whole number of days \(1 to 3650\), or none/);
      await expect(weft('settings', 'retention')).rejects.toThrow(/give DAYS \(1 to 3650\), or --keep/);
      await expect(weft('settings', 'retention', '5', '--keep')).rejects.toThrow(/either DAYS or --keep/);
      await expect(weft('settings', 'retention', '4000')).rejects.toThrow(/retentionDays must be an integer from 1 to 3650/);
      expect(await read(admin)).toEqual({ retentionDays: null });
    });
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { WeftClient } from '@weft/client';
import { TenantRepository } from '@weft/persistence';
import { CoreModule } from '@weft/platform';
import { RunUpdatesService, SocketServer, startApi, type RunningApi } from '@weft/api';
import { publish, rejection, start, testConfig } from '../support/e2e-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * What one tenant could do to another's live updates: mint many API keys (each with its own
 * per-key connection cap) and hold every graphql-ws connection of the API process, so the other
 * tenant's console is refused; and open many subscriptions so that each update is handled once
 * per subscription. Caps here: 30 connections in all, 4 per key, 5 per tenant, 4 live keys per
 * tenant. Runs change through the API alone (start, cancel), so no worker runs.
 */

const MAX_CONNECTIONS = 30;
const MAX_PER_KEY = 4;
const MAX_PER_TENANT = 5;
const MAX_KEYS = 4;
const TENANT_REASON = `TOO_MANY_TENANT_CONNECTIONS: this tenant holds its most graphql-ws connections (${MAX_PER_TENANT}, WEFT_WS_MAX_CONNECTIONS_PER_TENANT)`;
const CREATE_KEY = `mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id secret } }`;
const PARK = { nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 600 } }], edges: [] };

type Close = { code: number; reason: string };
type Opened = { ws: WebSocket; outcome: 'ack' | Close; closed: Promise<Close> };

describe('one tenant cannot take another tenant’s live connections', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let server: SocketServer;
  let updates: RunUpdatesService;
  let wsUrl: string;
  const sockets: WebSocket[] = [];
  const clients: WeftClient[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = testConfig(db, {
      WEFT_WS_MAX_CONNECTIONS: MAX_CONNECTIONS,
      WEFT_WS_MAX_CONNECTIONS_PER_KEY: MAX_PER_KEY,
      WEFT_WS_MAX_CONNECTIONS_PER_TENANT: MAX_PER_TENANT,
      WEFT_MAX_KEYS_PER_TENANT: MAX_KEYS,
    });
    api = await startApi({ port: 0, host: '127.0.0.1', moduleImports: [CoreModule.forRoot(config)], logger: false });
    server = api.app.get(SocketServer);
    updates = api.app.get(RunUpdatesService);
    wsUrl = api.url.replace(/^http/, 'ws');
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    const open = sockets.splice(0).filter((ws) => ws.readyState !== WebSocket.CLOSED);
    await Promise.all(open.map((ws) => new Promise<void>((resolve) => (ws.once('close', () => resolve()), ws.close()))));
    await until(() => server.connections === 0, 'every connection to be released');
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  /** A tenant with its admin key and `extra` more keys (created over the API): every key, admin first. */
  async function tenant(name: string, extra = 0): Promise<{ admin: WeftClient; keys: string[] }> {
    const t = await new TenantRepository(db.ds).createTenant(name);
    const admin = client(t.apiKey);
    const keys = [t.apiKey];
    for (let i = 0; i < extra; i++) keys.push((await admin.request(CREATE_KEY, { i: { name: `viewer ${i}`, role: 'viewer' } })).createApiKey.secret);
    return { admin, keys };
  }

  function client(key: string): WeftClient {
    const c = new WeftClient(api.url, key);
    clients.push(c);
    return c;
  }

  /** Opens a graphql-ws socket and sends connection_init with `key`; resolves on connection_ack or the close. */
  function open(key: string): Promise<Opened> {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
    sockets.push(ws);
    const closed = new Promise<Close>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('error', () => undefined);
    return new Promise((resolve) => {
      closed.then((c) => resolve({ ws, outcome: c, closed }));
      ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })));
      ws.on('message', (data) => {
        if (JSON.parse(data.toString()).type === 'connection_ack') resolve({ ws, outcome: 'ack', closed });
      });
    });
  }

  /** Waits for `cond`, checked every 20 ms, at most 10 s. */
  async function until(cond: () => boolean, what: string): Promise<void> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      if (cond()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    if (!cond()) throw new Error(`timed out waiting for ${what}; ${server.connections} connections counted`);
  }

  /** Subscribes with `c` and resolves with the first payload `pick` accepts (rejects on error or after 20 s). */
  function first<T>(
    c: WeftClient,
    query: string,
    variables: Record<string, unknown>,
    pick: (data: any) => T | undefined,
  ): { got: Promise<T>; ready: Promise<void> } {
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    const got = new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching payload for ${query}`)), 20_000);
      const sub = c.subscribe(query, variables, (data) => {
        ready();
        const v = pick(data);
        if (v === undefined) return true;
        clearTimeout(timer);
        resolve(v);
        return false;
      });
      sub.done.catch((err) => (clearTimeout(timer), reject(err)));
    });
    return { got, ready: isReady };
  }

  describe('graphql-ws connections per tenant', () => {
    it('refuses a tenant over its cap whatever key it uses, while another tenant connects and gets its updates', async () => {
      const a = await tenant('hog', MAX_KEYS - 1);
      // Four keys of four connections each could hold 16 connections: the tenant gets 5.
      const outcomes: Opened['outcome'][] = [];
      for (const key of a.keys) for (let i = 0; i < MAX_PER_KEY; i++) outcomes.push((await open(key)).outcome);
      expect(outcomes.filter((o) => o === 'ack')).toHaveLength(MAX_PER_TENANT);
      expect(outcomes.slice(MAX_PER_TENANT)).toEqual(outcomes.slice(MAX_PER_TENANT).map(() => ({ code: 4029, reason: TENANT_REASON })));
      await until(() => server.connections === MAX_PER_TENANT, 'the refused connections to be released');

      const b = await tenant('victim');
      await publish(b.admin, 'park', PARK);
      const runId = await start(b.admin, 'park');
      const watcher = client(b.keys[0]!);
      const cancelled = first(watcher, `subscription($id: ID!) { runUpdated(runId: $id) { status } }`, { id: runId }, (d) =>
        d.runUpdated.status === 'CANCELLED' ? d.runUpdated.status : undefined,
      );
      await cancelled.ready;
      await b.admin.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } });
      expect(await cancelled.got).toBe('CANCELLED');
    });

    it('frees a place when one of the tenant’s connections closes', async () => {
      const a = await tenant('cycler', 1);
      const held: Opened[] = [];
      for (let i = 0; i < MAX_PER_TENANT; i++) held.push(await open(a.keys[i % 2]!));
      expect(held.map((h) => h.outcome)).toEqual(held.map(() => 'ack'));
      expect((await open(a.keys[1]!)).outcome).toEqual({ code: 4029, reason: TENANT_REASON });
      for (let i = 0; i < 3; i++) {
        const leaving = held.shift()!;
        leaving.ws.close();
        await leaving.closed;
        await until(() => server.connections === MAX_PER_TENANT - 1, `cycle ${i} to be released`);
        const again = await open(a.keys[1]!);
        expect([i, again.outcome]).toEqual([i, 'ack']);
        held.push(again);
        expect((await open(a.keys[0]!)).outcome).toEqual({ code: 4029, reason: TENANT_REASON });
      }
    });
  });

  describe('API keys per tenant', () => {
    it(`refuses a key over ${MAX_KEYS} live keys with CONFLICT naming the cap and its setting; revoking one makes room`, async () => {
      const t = await tenant('many-keys', MAX_KEYS - 1);
      const over = await rejection(t.admin.request(CREATE_KEY, { i: { name: 'one too many', role: 'viewer' } }));
      expect(over.code).toBe('CONFLICT');
      expect(over.message).toContain(`${MAX_KEYS} live API keys`);
      expect(over.message).toContain('WEFT_MAX_KEYS_PER_TENANT');
      const keys = (await t.admin.request(`{ apiKeys { id role revokedAt } }`)).apiKeys as { id: string; role: string }[];
      expect(keys).toHaveLength(MAX_KEYS);
      await t.admin.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: keys.find((k) => k.role === 'viewer')!.id });
      expect((await t.admin.request(CREATE_KEY, { i: { name: 'room again', role: 'viewer' } })).createApiKey.secret).toMatch(/^weft_/);
      // Other tenants are not counted together.
      const other = await tenant('few-keys');
      expect((await other.admin.request(CREATE_KEY, { i: { name: 'fine', role: 'viewer' } })).createApiKey.secret).toMatch(/^weft_/);
    });

    it('lets only one of several concurrent creates take the last place', async () => {
      const t = await tenant('racers', MAX_KEYS - 2);
      const tries = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => t.admin.request(CREATE_KEY, { i: { name: `racer ${i}`, role: 'viewer' } })));
      expect(tries.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = tries.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as { code?: string }).code);
      expect(refused).toEqual(refused.map(() => 'CONFLICT'));
      expect(((await t.admin.request(`{ apiKeys { id } }`)).apiKeys as unknown[]).length).toBe(MAX_KEYS);
    });
  });

  describe('one change stream per tenant, shared by its subscriptions', () => {
    it('delivers a run’s change to every subscription and keeps it once, however many subscribe', async () => {
      const t = await tenant('watchers', 1);
      await publish(t.admin, 'park', PARK);
      const runId = await start(t.admin, 'park');
      const SUBS = 40; // over two connections: at most 50 operations run on one
      const watchers = [client(t.keys[0]!), client(t.keys[1]!)];
      const changed = Array.from({ length: SUBS }, (_, i) =>
        first(watchers[i % 2]!, `subscription { runChanged { runId status } }`, {}, (d) =>
          d.runChanged.runId === runId && d.runChanged.status === 'CANCELLED' ? true : undefined,
        ),
      );
      const updated = Array.from({ length: SUBS }, (_, i) =>
        first(watchers[i % 2]!, `subscription($id: ID!) { runUpdated(runId: $id) { status } }`, { id: runId }, (d) =>
          d.runUpdated.status === 'CANCELLED' ? true : undefined,
        ),
      );
      await Promise.all(updated.map((u) => u.ready)); // each got the run's state: the connections are up
      // runChanged sends nothing until a change: wait until every subscription is registered.
      await until(() => updates.stats.tenantSubscribers >= SUBS, 'the runChanged subscriptions to be registered');
      const before = { ...updates.stats };
      await t.admin.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } });
      await Promise.all([...changed, ...updated].map((s) => s.got));
      const after = updates.stats;
      const changes = after.changes - before.changes;
      expect(changes).toBeGreaterThan(0);
      // Each change was kept once for the tenant's 40 runChanged subscriptions, not once each.
      expect(after.changeRecords - before.changeRecords).toBeLessThanOrEqual(changes);
      // And the run read at most once per change for its 40 runUpdated subscriptions.
      expect(after.runLoads - before.runLoads).toBeLessThanOrEqual(changes);
    });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { WeftClient } from '@weft/client';
import { jsNode, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';
import { runWeft } from '../support/cli.js';

const KEY_FIELDS = 'id name role keyPrefix createdAt revokedAt';

/** Introspected type reference. */
interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}
interface InputValue {
  name: string;
  type: TypeRef;
  defaultValue: string | null;
}
interface RootField {
  name: string;
  args: InputValue[];
  type: TypeRef;
}

const TYPE_REF = 'kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';
const INTROSPECT = `{ __schema {
  queryType { fields { name args { name defaultValue type { ${TYPE_REF} } } type { ${TYPE_REF} } } }
  mutationType { fields { name args { name defaultValue type { ${TYPE_REF} } } type { ${TYPE_REF} } } }
  types { name kind enumValues { name } inputFields { name defaultValue type { ${TYPE_REF} } } fields { name } }
} }`;

/** `[String!]!` from a type reference. */
function typeName(t: TypeRef): string {
  if (t.kind === 'NON_NULL') return `${typeName(t.ofType!)}!`;
  if (t.kind === 'LIST') return `[${typeName(t.ofType!)}]`;
  return t.name!;
}

function namedType(t: TypeRef): TypeRef {
  return t.ofType ? namedType(t.ofType) : t;
}

describe('API keys and roles end to end', () => {
  let e2e: E2E;
  let admin: WeftClient;
  let adminKey: string;
  let schema: { queries: RootField[]; mutations: RootField[]; types: Map<string, any> };

  /** A raw POST: the HTTP status and the body, whatever it holds. */
  async function post(key: string | undefined, query: string, variables: Record<string, unknown> = {}) {
    const res = await fetch(e2e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { data?: any; errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[] },
    };
  }

  /** What a graphql-ws connection with `key` makes of one operation: `complete`, or the close code it got. */
  function overSocket(key: string, query: string, variables: Record<string, unknown> = {}): Promise<{ closed?: number; complete?: true; data?: unknown }> {
    const ws = createClient({
      url: e2e.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${key}` },
      retryAttempts: 0,
      lazy: true,
    });
    return new Promise((resolve) => {
      let data: unknown;
      ws.subscribe(
        { query, variables },
        {
          next: (msg) => (data = msg.data),
          error: (err) => {
            resolve({ closed: (err as { code?: number }).code });
            void ws.dispose();
          },
          complete: () => {
            resolve({ complete: true, data });
            void ws.dispose();
          },
        },
      );
    });
  }

  const createKey = async (c: WeftClient, name: string, role: string) =>
    (await c.request(`mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id name role keyPrefix createdAt secret } }`, { i: { name, role } }))
      .createApiKey;
  const listKeys = async (c: WeftClient) => (await c.request(`{ apiKeys { ${KEY_FIELDS} } }`)).apiKeys as any[];
  const revokeKey = async (c: WeftClient, id: string) =>
    (await c.request(`mutation($id: ID!) { revokeApiKey(id: $id) { ${KEY_FIELDS} } }`, { id })).revokeApiKey;

  /** A value of the input type that passes GraphQL's own validation (not necessarily ours). */
  function sample(t: TypeRef): unknown {
    if (t.kind === 'NON_NULL') return sample(t.ofType!);
    if (t.kind === 'LIST') return [sample(t.ofType!)];
    switch (t.kind) {
      case 'ENUM':
        return schema.types.get(t.name!).enumValues[0].name;
      case 'INPUT_OBJECT': {
        const fields = schema.types.get(t.name!).inputFields as InputValue[];
        return Object.fromEntries(fields.filter((f) => f.type.kind === 'NON_NULL').map((f) => [f.name, sample(f.type)]));
      }
      default:
        return { String: 'x', ID: randomUUID(), Int: 1, Float: 1, Boolean: true, JSON: {}, DateTime: new Date().toISOString() }[t.name!] ?? 'x';
    }
  }

  /** Calls a root field with sample values for its required arguments, selecting only __typename. */
  function call(key: string, kind: 'query' | 'mutation', f: RootField) {
    const args = f.args.filter((a) => a.type.kind === 'NON_NULL' && a.defaultValue === null);
    const vars = args.map((a) => `$${a.name}: ${typeName(a.type)}`).join(', ');
    const passed = args.map((a) => `${a.name}: $${a.name}`).join(', ');
    const leaf = ['SCALAR', 'ENUM'].includes(namedType(f.type).kind);
    const query = `${kind}${vars ? `(${vars})` : ''} { ${f.name}${passed ? `(${passed})` : ''}${leaf ? '' : ' { __typename }'} }`;
    return post(key, query, Object.fromEntries(args.map((a) => [a.name, sample(a.type)])));
  }

  const key = async (role: string, name = `${role}-key`) => {
    const k = await createKey(admin, name, role);
    return { ...k, client: new WeftClient(e2e.url, k.secret) };
  };

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client: admin, apiKey: adminKey } = await e2e.tenant('keys'));
    const s = (await admin.request(INTROSPECT)).__schema;
    schema = { queries: s.queryType.fields, mutations: s.mutationType.fields, types: new Map(s.types.map((t: { name: string }) => [t.name, t])) };
    await publish(admin, 'hello', { nodes: [jsNode('hi', 'return {hi: true};')], edges: [] });
  });
  afterAll(() => e2e.close());

  it('creates keys whose secret is shown once: never listed, never a field of ApiKey', async () => {
    const operator = await createKey(admin, '  ops team  ', 'operator');
    expect(operator).toEqual({
      id: expect.any(String),
      name: 'ops team',
      role: 'operator',
      keyPrefix: operator.secret.slice(0, 13),
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^weft_[A-Za-z0-9_-]{43}$/),
    });
    const viewer = await createKey(admin, 'dashboard', 'viewer');
    const listed = await listKeys(admin);
    expect(listed.map((k) => [k.name, k.role, k.revokedAt])).toEqual([
      ['admin', 'admin', null],
      ['ops team', 'operator', null],
      ['dashboard', 'viewer', null],
    ]);
    expect(listed.find((k) => k.id === operator.id)).toMatchObject({ keyPrefix: operator.keyPrefix, createdAt: operator.createdAt });
    const raw = JSON.stringify(await post(adminKey, `{ apiKeys { ${KEY_FIELDS} } }`));
    for (const secret of [adminKey, operator.secret, viewer.secret]) expect(raw).not.toContain(secret);
    const fields = schema.types
      .get('ApiKey')
      .fields.map((f: { name: string }) => f.name)
      .sort();
    expect(fields).toEqual(['createdAt', 'id', 'keyPrefix', 'name', 'revokedAt', 'role']);
  });

  it('lets a new key act with its role at once', async () => {
    const operator = await key('operator');
    const viewer = await key('viewer');
    try {
      const runId = await start(operator.client, 'hello');
      expect((await waitRun(viewer.client, runId)).status).toBe('SUCCEEDED');
      expect((await overSocket(viewer.secret, `{ workflows { id } }`)).complete).toBe(true);
    } finally {
      await operator.client.close();
      await viewer.client.close();
    }
  });

  it('refuses a revoked key as UNAUTHENTICATED over HTTP and at graphql-ws connection', async () => {
    const doomed = await key('operator', 'doomed');
    expect((await post(doomed.secret, `{ workflows { id } }`)).status).toBe(200);
    const revoked = await revokeKey(admin, doomed.id);
    expect(revoked).toMatchObject({ id: doomed.id, name: 'doomed', revokedAt: expect.any(String) });

    const http = await post(doomed.secret, `{ workflows { id } }`);
    expect(http.status).toBe(401);
    expect(http.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(http.body.data ?? null).toBeNull();
    expect((await rejection(doomed.client.request(`mutation { startRun(input: {workflowId: "hello"}) { id } }`))).code).toBe('UNAUTHENTICATED');

    expect(await overSocket(doomed.secret, `{ workflows { id } }`)).toEqual({ closed: 4401 });
    expect(await overSocket(doomed.secret, `subscription($id: ID!) { runUpdated(runId: $id) { id } }`, { id: randomUUID() })).toEqual({ closed: 4401 });

    // Revoking it again answers the key unchanged; it stays listed as revoked.
    expect(await revokeKey(admin, doomed.id)).toEqual(revoked);
    expect((await listKeys(admin)).find((k) => k.id === doomed.id)?.revokedAt).toBe(revoked.revokedAt);
    await doomed.client.close();
  });

  it('closes an open graphql-ws connection whose key is revoked, ending its subscription', async () => {
    await publish(admin, 'parked', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 600 } }], edges: [] });
    const runId = await start(admin, 'parked');
    const watcher = await key('viewer', 'watcher');
    const ws = createClient({
      url: e2e.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${watcher.secret}` },
      retryAttempts: 0,
      lazy: true,
    });
    const updates: unknown[] = [];
    let firstUpdate!: () => void;
    const subscribed = new Promise<void>((r) => (firstUpdate = r));
    const ended = new Promise<{ closed?: number; complete?: true }>((resolve) => {
      ws.subscribe(
        { query: `subscription($id: ID!) { runUpdated(runId: $id) { id status } }`, variables: { id: runId } },
        {
          next: (m) => {
            updates.push(m.data);
            firstUpdate();
          },
          error: (err) => resolve({ closed: (err as { code?: number }).code }),
          complete: () => resolve({ complete: true }),
        },
      );
    });
    await subscribed;
    expect(updates).toHaveLength(1);
    await revokeKey(admin, watcher.id);
    // The API re-checks an open socket's key every WEFT_WS_KEY_RECHECK_MS (200 ms in this suite).
    expect(await ended).toEqual({ closed: 4401 });
    await ws.dispose();
    await watcher.client.close();
  });

  it('acts on nothing more once a key is revoked, even within the request that revoked it', async () => {
    const second = await key('admin', 'second admin');
    // One request, fields run in order: the key revokes itself, then tries to mint a new admin key.
    const r = await post(
      second.secret,
      `mutation($id: ID!) { gone: revokeApiKey(id: $id) { id revokedAt } minted: createApiKey(input: {name: "after", role: admin}) { secret } }`,
      { id: second.id },
    );
    // createApiKey is non-null, so its error nulls the whole data; the revocation itself committed.
    expect(r.body.errors?.map((e) => [e.path?.[0], e.extensions?.code])).toEqual([['minted', 'UNAUTHENTICATED']]);
    expect(r.body.data?.minted ?? null).toBeNull();
    const keys = await listKeys(admin);
    expect(keys.find((k) => k.id === second.id)?.revokedAt).toEqual(expect.any(String));
    expect(keys.map((k) => k.name)).not.toContain('after');
    await second.client.close();
  });

  it('answers NOT_FOUND when revoking an unknown, malformed or foreign key id', async () => {
    const { client: other, apiKey: otherKey } = await e2e.tenant('other');
    const otherKeyId = (await listKeys(other))[0].id;
    for (const id of [randomUUID(), 'not-a-uuid', '', otherKeyId]) {
      expect((await rejection(revokeKey(admin, id))).code).toBe('NOT_FOUND');
    }
    expect((await post(otherKey, `{ workflows { id } }`)).status).toBe(200);
    expect((await listKeys(admin)).map((k) => k.id)).not.toContain(otherKeyId);
  });

  it('validates names and roles', async () => {
    for (const [name, problem] of [
      ['', 'name must not be empty'],
      ['   ', 'name must not be empty'],
      ['x'.repeat(101), 'name is 101 characters; at most 100'],
      ['tab\there', 'name must not contain control or invisible formatting characters'],
      ['bell\u0007', 'name must not contain control or invisible formatting characters'],
      ['\u200b', 'name must not contain control or invisible formatting characters'],
      ['\u202eevil', 'name must not contain control or invisible formatting characters'],
      ['soft\u00adhyphen', 'name must not contain control or invisible formatting characters'],
      ['\u0301', 'name must contain a visible character'],
    ]) {
      const err = await rejection(createKey(admin, name!, 'viewer'));
      expect(err.code).toBe('BAD_USER_INPUT');
      expect(err.errors[0]!.extensions!.problems).toEqual([{ path: 'name', message: problem }]);
    }
    expect((await createKey(admin, '👩‍💻'.repeat(14), 'viewer')).name).toBe('👩‍💻'.repeat(14));
    const badRole = await post(adminKey, `mutation { createApiKey(input: {name: "x", role: ROOT}) { id } }`);
    expect(badRole.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const badRoleVar = await post(adminKey, `mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id } }`, { i: { name: 'x', role: 'ADMIN' } });
    expect(badRoleVar.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('forbids a viewer every mutation of the schema, apiKeys, tenantSettings and webhooks; lets it read the rest', async () => {
    const viewer = await key('viewer', 'forbidden viewer');
    const before = await listKeys(admin);
    // The introspected list is the one checked; these are only the ones known today.
    expect(schema.mutations.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'publishWorkflow',
        'setDefaultVersion',
        'deprecateVersion',
        'startRun',
        'sendSignal',
        'cancelRun',
        'retryRun',
        'createApiKey',
        'revokeApiKey',
        'updateTenantSettings',
      ]),
    );
    for (const f of schema.mutations) {
      const r = await call(viewer.secret, 'mutation', f);
      expect({ field: f.name, code: r.body.errors?.[0]?.extensions?.code }).toEqual({ field: f.name, code: 'FORBIDDEN' });
      expect(r.body.errors![0]!.message).toMatch(new RegExp(`^The viewer role may not .+: ${f.name} needs the (operator or admin|admin) role$`));
    }
    for (const f of schema.queries) {
      const r = await call(viewer.secret, 'query', f);
      const code = r.body.errors?.[0]?.extensions?.code;
      if (['apiKeys', 'tenantSettings', 'webhooks', 'webhookDeliveries'].includes(f.name))
        expect({ field: f.name, code }).toEqual({ field: f.name, code: 'FORBIDDEN' });
      else expect({ field: f.name, code }).not.toEqual({ field: f.name, code: 'FORBIDDEN' });
    }
    expect(await listKeys(admin)).toEqual(before);
    await viewer.client.close();
  });

  it('forbids an operator publishing, version, key, tenant settings and webhook management; lets it run the rest', async () => {
    const operator = await key('operator', 'forbidden operator');
    const adminOnly = [
      'publishWorkflow',
      'setDefaultVersion',
      'deprecateVersion',
      'createApiKey',
      'revokeApiKey',
      'apiKeys',
      'tenantSettings',
      'updateTenantSettings',
      'createWebhook',
      'deleteWebhook',
      'webhooks',
      'webhookDeliveries',
    ];
    const fields = [...schema.mutations.map((f) => ['mutation', f] as const), ...schema.queries.map((f) => ['query', f] as const)];
    for (const name of adminOnly) expect(fields.map(([, f]) => f.name)).toContain(name);
    for (const [kind, f] of fields) {
      const r = await call(operator.secret, kind, f);
      const code = r.body.errors?.[0]?.extensions?.code;
      if (adminOnly.includes(f.name)) {
        expect({ field: f.name, code }).toEqual({ field: f.name, code: 'FORBIDDEN' });
        expect(r.body.errors![0]!.message).toMatch(new RegExp(`^The operator role may not .+: ${f.name} needs the admin role$`));
      } else {
        expect({ field: f.name, code }).not.toEqual({ field: f.name, code: 'FORBIDDEN' });
      }
    }
    const message = (await rejection(createKey(operator.client, 'sneaky', 'admin'))).errors[0]!.message;
    expect(message).toBe('The operator role may not manage API keys: createApiKey needs the admin role');
    expect((await listKeys(admin)).map((k) => k.name)).not.toContain('sneaky');
    await operator.client.close();
  });

  it("refuses to revoke the tenant's last active admin key, so the tenant cannot lock itself out", async () => {
    const { client: first, apiKey: firstKey } = await e2e.tenant('lockout');
    const firstId = (await listKeys(first))[0].id;
    const last = await rejection(revokeKey(first, firstId));
    expect(last.code).toBe('CONFLICT');
    expect(last.message).toContain("is the tenant's last active admin key: create another admin key");

    // Operators and viewers do not count: with one admin, it still cannot go.
    await createKey(first, 'ops', 'operator');
    expect((await rejection(revokeKey(first, firstId))).code).toBe('CONFLICT');

    // With a second admin key the first one may go (even by itself), and then the second is the last.
    const second = await createKey(first, 'second admin', 'admin');
    const secondClient = new WeftClient(e2e.url, second.secret);
    try {
      expect((await revokeKey(first, firstId)).revokedAt).toEqual(expect.any(String));
      expect((await post(firstKey, `{ workflows { id } }`)).status).toBe(401);
      expect((await rejection(revokeKey(secondClient, second.id))).code).toBe('CONFLICT');
      expect((await listKeys(secondClient)).filter((k) => k.role === 'admin' && k.revokedAt === null).map((k) => k.id)).toEqual([second.id]);
    } finally {
      await secondClient.close();
    }
  });

  it('two admins revoking each other at once leave one of them active', async () => {
    const { client: a } = await e2e.tenant('race');
    const aId = (await listKeys(a))[0].id;
    const bKey = await createKey(a, 'b', 'admin');
    const b = new WeftClient(e2e.url, bKey.secret);
    try {
      const results = await Promise.allSettled([revokeKey(b, aId), revokeKey(a, bKey.id)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      // The loser was refused as the last admin, or had lost its key before it was checked.
      const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(['CONFLICT', 'UNAUTHENTICATED']).toContain(loser.reason.code);
      const statuses = await Promise.all([a, b].map((c) => post(c.apiKey, `{ workflows { id } }`).then((r) => r.status)));
      expect(statuses.sort()).toEqual([200, 401]);
    } finally {
      await b.close();
    }
  });

  describe('the CLI', () => {
    function weft(apiKey: string, ...args: string[]): Promise<string> {
      return runWeft(e2e.url, apiKey, ...args);
    }

    it('creates, lists and revokes keys', async () => {
      const { apiKey } = await e2e.tenant('cli keys');
      const created = JSON.parse(await weft(apiKey, 'keys', 'create', 'nightly job', '--role', 'operator'));
      expect(created).toMatchObject({ name: 'nightly job', role: 'operator', secret: expect.stringMatching(/^weft_/) });
      expect((await post(created.secret, `{ workflows { id } }`)).status).toBe(200);

      const listed = (await weft(apiKey, 'keys', 'list')).trimEnd().split('\n');
      expect(listed[0]).toMatch(/^ID\s+NAME\s+ROLE\s+PREFIX\s+CREATED\s+STATUS$/);
      expect(listed[2]).toMatch(new RegExp(`^${created.id}\\s+nightly job\\s+operator\\s+${created.keyPrefix}…\\s+\\S+\\s+active$`));
      expect(listed.join('\n')).not.toContain(created.secret);

      expect(await weft(apiKey, 'keys', 'revoke', created.id)).toMatch(new RegExp(`^key ${created.id} \\(nightly job\\) revoked at \\S+\\n$`));
      expect((await post(created.secret, `{ workflows { id } }`)).status).toBe(401);
      expect((await weft(apiKey, 'keys', 'list')).trimEnd().split('\n')[2]).toMatch(/revoked \S+$/);
      await expect(weft(apiKey, 'keys', 'create', 'x', '--role', 'root')).rejects.toThrow(/must be one of admin, operator, viewer/);
      await expect(weft(created.secret, 'keys', 'list')).rejects.toThrow(/UNAUTHENTICATED/);
    });
  });
});

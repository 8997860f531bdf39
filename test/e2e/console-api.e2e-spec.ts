import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftClient } from '@weft/client';
import { jsNode, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * What the web console reads beyond the rest of the API: `whoami` (the key's role decides the
 * actions shown), `Run.graph` and `WorkflowVersion.graph` (the DAG as data to draw), the
 * runs filter by version, the tenant-wide `runChanged` subscription (a live runs list), and
 * the pages themselves: the console at `/` and the offline IDE at GET /graphql for browsers.
 */
describe('the API of the web console', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let tenantId: string;
  let origin: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey, tenantId } = await e2e.tenant('console'));
    origin = new URL(e2e.url).origin;
    await publish(client, 'route', {
      nodes: [
        jsNode('fetch', 'return { n: input.n };', { n: '{{input.n}}' }),
        { node_id: 'pick', type: 'SWITCH' },
        jsNode('big', 'return "big";'),
        jsNode('small', 'return "small";'),
      ],
      edges: [
        { from: 'fetch', to: 'pick' },
        { from: 'pick', to: 'big', condition: '{{tasks.fetch.output.n > 5}}' },
        { from: 'pick', to: 'small', condition: '{{tasks.fetch.output.n <= 5}}' },
      ],
    });
  });
  afterAll(() => e2e.close());

  it('tells a key who it is, with its role, until it is revoked', async () => {
    expect((await client.request(`{ whoami { tenantId keyName keyPrefix role } }`)).whoami).toEqual({
      tenantId,
      keyName: 'admin',
      keyPrefix: apiKey.slice(0, 13),
      role: 'admin',
    });
    const { createApiKey } = await client.request(`mutation { createApiKey(input: { name: "wall screen", role: viewer }) { id secret } }`);
    const viewer = new WeftClient(e2e.url, createApiKey.secret);
    try {
      expect((await viewer.request(`{ whoami { keyId keyName role } }`)).whoami).toEqual({ keyId: createApiKey.id, keyName: 'wall screen', role: 'viewer' });
      await client.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: createApiKey.id });
      const refused = await rejection(viewer.request(`{ whoami { role } }`));
      expect(refused.errors[0]!.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await viewer.close();
    }
  });

  it("draws a run's graph with statuses and taken and skipped edges, and a version's without", async () => {
    const runId = await start(client, 'route', { n: 2 });
    expect((await waitRun(client, runId)).status).toBe('SUCCEEDED');
    const { run } = await client.request(
      `query($id: ID!) { run(id: $id) { graph { nodes { id type status forEach iterations { status count } } edges { from to label state } } } }`,
      { id: runId },
    );
    expect(run.graph.nodes.map((n: any) => [n.id, n.type, n.status])).toEqual([
      ['fetch', 'CODE', 'COMPLETED'],
      ['pick', 'SWITCH', 'COMPLETED'],
      ['big', 'CODE', 'SKIPPED'],
      ['small', 'CODE', 'COMPLETED'],
    ]);
    expect(run.graph.edges.map((e: any) => `${e.from}->${e.to} ${e.state}`)).toEqual(['fetch->pick TAKEN', 'pick->big SKIPPED', 'pick->small TAKEN']);
    expect(run.graph.edges[1].label).toBe('{{tasks.fetch.output.n > 5}}');

    const { workflowVersion } = await client.request(`{ workflowVersion(workflowId: "route") { graph { nodes { id status } edges { state } } } }`);
    expect(workflowVersion.graph.nodes.every((n: any) => n.status === null)).toBe(true);
    expect(workflowVersion.graph.edges.map((e: any) => e.state)).toEqual(['OPEN', 'OPEN', 'OPEN']);
  });

  it('filters runs by version', async () => {
    await publish(client, 'versions', { nodes: [jsNode('a', 'return 1;')], edges: [] });
    const v2 = await publish(client, 'versions', { nodes: [jsNode('a', 'return 2;')], edges: [] });
    const first = await start(client, 'versions', {}, { version: 1 });
    const second = await start(client, 'versions', {}, { version: v2 });
    const ids = async (filter: Record<string, unknown>) =>
      (await client.request(`query($f: RunFilter) { runs(filter: $f, first: 50) { edges { node { id version } } } }`, { f: filter })).runs.edges.map(
        (e: any) => e.node.id,
      );
    expect(await ids({ workflowId: 'versions', version: 1 })).toEqual([first]);
    expect(await ids({ workflowId: 'versions', version: v2 })).toEqual([second]);
    const bad = await rejection(ids({ version: 0 }));
    expect(bad.errors[0]!.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.message).toMatch(/version/);
  });

  it("streams every change to the tenant's runs, and none of another tenant's", async () => {
    const other = await e2e.tenant('console-other');
    await publish(other.client, 'route', { nodes: [jsNode('only', 'return 1;')], edges: [] });
    const seen: { runId: string; status: string; seq: number }[] = [];
    const waiters = new Map<string, () => void>();
    const sub = client.subscribe(`subscription { runChanged { runId status seq } }`, {}, (data: any) => {
      seen.push(data.runChanged);
      if (data.runChanged.status === 'SUCCEEDED') waiters.get(data.runChanged.runId)?.();
    });
    /** Starts a run of the tenant and resolves once runChanged reported it SUCCEEDED. */
    const startSeen = async (input: unknown): Promise<string> => {
      let seenDone!: () => void;
      const reported = new Promise<void>((resolve) => (seenDone = resolve));
      const runId = await start(client, 'route', input);
      waiters.set(runId, seenDone);
      if (seen.some((c) => c.runId === runId && c.status === 'SUCCEEDED')) seenDone();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no SUCCEEDED change for ${runId}: ${JSON.stringify(seen)}`)), 30_000)),
      );
      await Promise.race([reported, sub.done, late]).finally(() => clearTimeout(timer));
      return runId;
    };
    try {
      // Retried until the subscription is in place (a change before it is not replayed).
      let mine = '';
      for (let i = 0; i < 5 && !mine; i++) mine = await startSeen({ n: 9 }).catch(() => '');
      expect(mine).not.toBe('');
      const ofMine = seen.filter((c) => c.runId === mine);
      expect(ofMine.at(-1)!.status).toBe('SUCCEEDED');
      expect(ofMine.map((c) => c.seq)).toEqual([...ofMine.map((c) => c.seq)].sort((a, b) => a - b));
      // Another tenant's run, while subscribed; then one more of ours, whose report comes after any of it.
      const foreign = await start(other.client, 'route', {});
      expect((await waitRun(other.client, foreign)).status).toBe('SUCCEEDED');
      await startSeen({ n: 1 });
      expect(seen.some((c) => c.runId === foreign)).toBe(false);
    } finally {
      sub.dispose();
    }
  });

  it('serves the console at / and its routes, and the offline IDE to browsers at GET /graphql', async () => {
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'.*connect-src 'self'.*frame-ancestors 'none'/);
    const html = await page.text();
    expect(html).toContain('<div id="root"></div>');
    // Every script and stylesheet the page names is served from this origin.
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.startsWith('/')).toBe(true);
      expect((await fetch(`${origin}${asset}`)).status).toBe(200);
    }
    const deep = await fetch(`${origin}/runs/0190a4c2-0000-7000-8000-000000000000`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(html);
    // Workflow ids may hold dots; only /assets holds files.
    expect(await (await fetch(`${origin}/workflows/billing.v2`)).text()).toBe(html);
    // Every page of the console's navigation opens by its address too.
    for (const route of ['/runs', '/workflows', '/schedules', '/queues', '/flow', '/keys', '/settings', '/webhooks', '/runs/batches']) {
      const opened = await fetch(`${origin}${route}`);
      expect({ route, status: opened.status }).toEqual({ route, status: 200 });
      expect(await opened.text()).toBe(html);
    }
    expect((await fetch(`${origin}/assets/no-such-file.js`)).status).toBe(404);

    const ide = await fetch(`${origin}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(ide.status).toBe(200);
    expect(await ide.text()).toContain('<div id="ide"></div>');
    // A GET with a query, or without a browser's Accept, is still the API's (which needs a key).
    const withQuery = await fetch(`${origin}/graphql?query=%7B__typename%7D`, { headers: { accept: 'text/html' } });
    expect(await withQuery.text()).not.toContain('<div id="ide">');
    expect(
      (await fetch(`${origin}/graphql?query=%7B__typename%7D`, { headers: { authorization: `Bearer ${apiKey}`, 'apollo-require-preflight': 'true' } })).status,
    ).toBe(200);
    expect((await fetch(`${origin}/no-such-page`)).status).toBe(404);
  });
});

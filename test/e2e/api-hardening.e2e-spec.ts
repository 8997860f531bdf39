import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { type WeftClient, type GraphQLErrorShape } from '@weft/client';
import { publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * What a hostile caller tried against the API, on the real platform (PostgreSQL, Redis, worker):
 * queries too costly to answer, values PostgreSQL cannot store, malformed dates and inputs,
 * an idempotency key reused for another workflow, and the key forms HTTP and graphql-ws accept.
 */

interface Answer {
  status: number;
  data?: any;
  errors?: GraphQLErrorShape[];
}

const HEAVY = 'runs(first: 100) { edges { node { history { payload actions } tasks { input output } } } }';

describe('API hardening end to end', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let waitingRun: string;
  const sockets: Client[] = [];

  /** POSTs `body` as JSON (a string is sent as it is). */
  async function post(body: unknown, authorization: string | undefined = `Bearer ${apiKey}`): Promise<Answer> {
    const res = await fetch(e2e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: object;
    try {
      parsed = JSON.parse(text) as object;
    } catch {
      parsed = { text };
    }
    return { status: res.status, ...parsed };
  }
  const gql = (query: string, variables: Record<string, unknown> = {}) => post({ query, variables });
  const first = (a: Answer) => a.errors?.[0];
  const problemText = (a: Answer) => JSON.stringify(first(a)?.extensions?.problems ?? []);

  function socket(authorization: unknown = `Bearer ${apiKey}`): Client {
    const c = createClient({
      url: e2e.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization },
      retryAttempts: 0,
      lazy: true,
    });
    sockets.push(c);
    return c;
  }

  /** The first message of an operation over graphql-ws: data, errors, or the close event. */
  function once(
    c: Client,
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<{ data?: any; errors?: any[]; closed?: { code: number; reason: string } }> {
    return new Promise((resolve) => {
      const stop = c.subscribe(
        { query, variables },
        {
          next: (m) => {
            resolve(m as { data?: any; errors?: any[] });
            stop();
          },
          error: (e) => resolve(Array.isArray(e) ? { errors: e } : { closed: e as { code: number; reason: string } }),
          complete: () => undefined,
        },
      );
    });
  }

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('hardening'));
    await publish(client, 'park', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 600 } }], edges: [] });
    await publish(client, 'other', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 600 } }], edges: [] });
    waitingRun = await start(client, 'park', { n: 1 });
  });
  afterAll(async () => {
    await Promise.allSettled(sockets.map((s) => s.dispose()));
    await e2e.close();
  });

  describe('query cost limits', () => {
    it('refuses 200 aliases of a heavy connection, naming the limit, before running anything', async () => {
      const query = `{ ${Array.from({ length: 200 }, (_, i) => `a${i}: ${HEAVY}`).join(' ')} }`;
      const a = await gql(query);
      expect(a.status).toBe(400);
      expect(a.data).toBeUndefined();
      expect(first(a)?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(`${first(a)?.message} ${problemText(a)}`).toMatch(/root fields|aliases/);
      expect(`${first(a)?.message} ${problemText(a)}`).toMatch(/20/);
    });

    it('refuses a single operation over the complexity budget; page sizes from variables count', async () => {
      const three = `{ ${[1, 2, 3].map((i) => `a${i}: runs(first: 200) { edges { node { history { payload actions } tasks { input output } } } }`).join(' ')} }`;
      const a = await gql(three);
      expect(first(a)?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(`${first(a)?.message} ${problemText(a)}`).toMatch(/complexity/i);

      const byVariable = `query($n: Int) { a: runs(first: $n) { edges { node { history { payload actions } tasks { input output } } } }
        b: runs(first: $n) { edges { node { history { payload actions } tasks { input output } } } } }`;
      expect(first(await gql(byVariable, { n: 200 }))?.extensions?.code).toBe('BAD_USER_INPUT');
      const small = await gql(byVariable, { n: 5 });
      expect(small.errors).toBeUndefined();
      expect(small.data.a.edges.length).toBeGreaterThan(0);
    });

    it('refuses a query deeper than the depth limit, fragments included', async () => {
      // Data fields nest 5 deep at most; introspection may go to 16 (the standard query is 15).
      const chain = (n: number): string => (n === 0 ? 'name' : `ofType { ${chain(n - 1)} }`);
      const deep = `{ __type(name: "Run") { ...T } } fragment T on __Type { ${chain(16)} }`;
      const a = await gql(deep);
      expect(a.status).toBe(400);
      expect(first(a)?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(`${first(a)?.message} ${problemText(a)}`).toMatch(/depth 18 exceeds the limit of 16/);
      expect((await gql(`{ __type(name: "Run") { ...T } } fragment T on __Type { ${chain(14)} }`)).errors).toBeUndefined();
    });

    it('still answers the standard introspection query and ordinary reads', async () => {
      const { getIntrospectionQuery } = await import('graphql');
      const a = await gql(getIntrospectionQuery());
      expect(a.errors).toBeUndefined();
      expect(a.data.__schema.queryType.name).toBe('Query');
      const runs = await gql(`{ runs(first: 200) { edges { node { id status workflowId version createdAt finishedAt tasks { nodeId status } } } } }`);
      expect(runs.errors).toBeUndefined();
    });

    it('refuses request batches and documents over the token limit', async () => {
      const a = await post([{ query: '{ workflows { id } }' }, { query: '{ workflows { id } }' }]);
      expect(a.status).toBe(400);
      const long = await gql(`{ workflows { ${'id '.repeat(25_000)} } }`);
      expect(long.status).toBe(400);
      expect(first(long)?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
      expect(first(long)?.message).toMatch(/20000 tokens/);
    });

    it('applies the same limits to graphql-ws operations', async () => {
      const c = socket();
      const aliases = await once(c, `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: workflows { id }`).join(' ')} }`);
      expect(aliases.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      const heavy = await once(
        c,
        `{ ${[1, 2, 3].map((i) => `a${i}: runs(first: 200) { edges { node { history { payload } tasks { output } } } }`).join(' ')} }`,
      );
      expect(heavy.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      const syntax = await once(c, `{ workflows { id }`);
      expect(syntax.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
      const sub = await once(c, `subscription($id: ID!) { runUpdated(runId: $id) { id tasks { nodeId } } }`, { id: waitingRun });
      expect(sub.data?.runUpdated.id).toBe(waitingRun);
    });

    it('caps the subscriptions of one graphql-ws connection', async () => {
      const c = socket();
      const query = `subscription($id: ID!) { runUpdated(runId: $id) { id status } }`;
      const answers = await Promise.all(
        Array.from(
          { length: 55 },
          () =>
            new Promise<{ data?: any; errors?: any[] }>((resolve) => {
              c.subscribe(
                { query, variables: { id: waitingRun } },
                { next: (m) => resolve(m as { data?: any }), error: (e) => resolve({ errors: e as any[] }), complete: () => undefined },
              );
            }),
        ),
      );
      const refused = answers.filter((m) => m.errors);
      expect(answers.filter((m) => m.data?.runUpdated?.id === waitingRun)).toHaveLength(50);
      expect(refused).toHaveLength(5);
      expect(refused[0]!.errors![0].extensions.code).toBe('BAD_USER_INPUT');
      expect(refused[0]!.errors![0].message).toMatch(/50/);
      await c.dispose();
    });
  });

  describe('values PostgreSQL cannot store are refused at the edge', () => {
    const NUL = 'a\u0000b';
    const LONE = 'x\ud800y';

    async function expectRefused(query: string, variables: Record<string, unknown>, path: string, what: RegExp) {
      const a = await gql(query, variables);
      expect(first(a)?.extensions?.code).toBe('BAD_USER_INPUT');
      const problems = first(a)?.extensions?.problems ?? [];
      expect(problems).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringMatching(what) })]));
      expect(first(a)?.message).toContain(path);
    }

    it('in startRun input, config and idempotencyKey', async () => {
      const q = `mutation($i: StartRunInput!) { startRun(input: $i) { id } }`;
      await expectRefused(q, { i: { workflowId: 'park', input: { customer: { name: NUL } } } }, 'input.$.customer.name', /NUL/);
      await expectRefused(q, { i: { workflowId: 'park', input: { list: [1, LONE] } } }, 'input.$.list[1]', /surrogate/);
      await expectRefused(q, { i: { workflowId: 'park', config: { [NUL]: 1 } } }, 'config.$["a\\u0000b"]', /NUL character in key/);
      await expectRefused(q, { i: { workflowId: 'park', idempotencyKey: NUL } }, 'idempotencyKey', /NUL/);
      await expectRefused(q, { i: { workflowId: `park${NUL}` } }, 'workflowId', /NUL/);
      const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
      const nested = await post(`{"query": ${JSON.stringify(q)}, "variables": {"i": {"workflowId": "park", "input": {"deep": ${deep}}}}}`);
      expect(first(nested)?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(first(nested)?.message).toMatch(/^input\.\$\.deep\[0\].*: is nested deeper than 1000 levels$/);
    });

    it('in retryRun input/config and sendSignal name/payload', async () => {
      await expectRefused(
        `mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`,
        { i: { runId: waitingRun, fromNodeId: 'w', input: { a: LONE } } },
        'input.$.a',
        /surrogate/,
      );
      await expectRefused(
        `mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`,
        { i: { runId: waitingRun, fromNodeId: 'w', config: { a: NUL } } },
        'config.$.a',
        /NUL/,
      );
      await expectRefused(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId: waitingRun, name: NUL } }, 'name', /NUL/);
      await expectRefused(
        `mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`,
        { i: { runId: waitingRun, name: 'go', payload: [{ x: NUL }] } },
        'payload.$[0].x',
        /NUL/,
      );
    });

    it('in publishWorkflow (text, and the definition it parses to), runs(filter) and workflowVersion', async () => {
      const q = `mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`;
      const def = JSON.stringify({ nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 1 } }], edges: [] });
      await expectRefused(q, { i: { workflowId: 'nul', definition: `# ${NUL}\n${def}` } }, 'definition', /NUL/);
      await expectRefused(q, { i: { workflowId: 'nul', name: LONE, definition: def } }, 'name', /surrogate/);
      await expectRefused(q, { i: { workflowId: `nul${NUL}`, definition: def } }, 'workflowId', /NUL/);
      // escapes in the text that parse to a NUL (JSON "\u0000", YAML "\0") where the engine accepts any string
      const http = (url: string) => JSON.stringify({ nodes: [{ node_id: 'h', type: 'HTTP', spec: { url } }], edges: [] });
      await expectRefused(q, { i: { workflowId: 'nul', definition: http('http://example.com/\u0000') } }, 'definition.$.nodes[0].spec.url', /NUL/);
      await expectRefused(
        q,
        { i: { workflowId: 'nul', definition: 'nodes:\n  - {node_id: h, type: HTTP, spec: {url: "http://example.com/\\0"}}\nedges: []' } },
        'definition.$.nodes[0].spec.url',
        /NUL/,
      );
      await expectRefused(`query($f: RunFilter) { runs(filter: $f) { edges { cursor } } }`, { f: { workflowId: NUL } }, 'filter.workflowId', /NUL/);
      await expectRefused(`query($w: String!) { workflowVersion(workflowId: $w) { version } }`, { w: LONE }, 'workflowId', /surrogate/);
    });
  });

  it('refuses a createdAfter/createdBefore that is not an RFC 3339 date-time, naming the field', async () => {
    const q = `query($f: RunFilter) { runs(filter: $f) { edges { cursor } } }`;
    for (const bad of ['yesterday', '2026-13-45T00:00:00Z', '2026-02-30T00:00:00Z', 'March 7 2026']) {
      const a = await gql(q, { f: { createdAfter: bad } });
      expect(first(a)?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(`${first(a)?.message} ${problemText(a)}`).toContain('createdAfter');
    }
    const literal = await gql(`{ runs(filter: {createdBefore: "yesterday"}) { edges { cursor } } }`);
    expect(first(literal)?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(`${first(literal)?.message} ${problemText(literal)}`).toContain('createdBefore');
    const ok = await gql(q, { f: { createdAfter: '2020-02-29T00:00:00Z', createdBefore: '2999-01-01T00:00:00.123+02:00' } });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.runs.edges.length).toBeGreaterThan(0);
  });

  it('requires startRun and retryRun input and config to be JSON objects (null means absent)', async () => {
    for (const input of [5, 'str', [1, 2], true]) {
      const err = await rejection(start(client, 'park', input));
      expect(err.code).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(err.errors[0]!.extensions!.problems)).toContain('"path":"input"');
      const cfg = await rejection(start(client, 'park', {}, { config: input }));
      expect(cfg.code).toBe('BAD_USER_INPUT');
      const retry = await rejection(
        client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId: waitingRun, fromNodeId: 'w', input } }),
      );
      expect(retry.code).toBe('BAD_USER_INPUT');
    }
    const id = await start(client, 'park', null, { config: null });
    const run = await waitRun(client, id, (r) => r.status === 'RUNNING');
    expect(run.input).toEqual({});
  });

  it('answers CONFLICT when an idempotency key is reused for another workflow', async () => {
    const runId = await start(client, 'park', {}, { idempotencyKey: 'order-17' });
    expect(await start(client, 'park', {}, { idempotencyKey: 'order-17' })).toBe(runId);
    const err = await rejection(start(client, 'other', {}, { idempotencyKey: 'order-17' }));
    expect(err.code).toBe('CONFLICT');
    expect(err.errors[0]!.message).toBe(`idempotency key "order-17" was used by run ${runId} with a different workflow (it ran park, this start other)`);
  });

  describe('API keys: the same forms over HTTP and graphql-ws', () => {
    it('accepts "Bearer <key>" with any case of the scheme on both', async () => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const a = await post({ query: '{ workflows { id } }' }, `${scheme} ${apiKey}`);
        expect(a.errors).toBeUndefined();
        const ws = await once(socket(`${scheme} ${apiKey}`), '{ workflows { id } }');
        expect(ws.errors).toBeUndefined();
        expect(ws.data.workflows.length).toBeGreaterThan(0);
      }
    });

    it('refuses the bare key on both (HTTP 401, close code 4401)', async () => {
      const a = await post({ query: '{ workflows { id } }' }, apiKey);
      expect(a.status).toBe(401);
      expect(first(a)?.extensions?.code).toBe('UNAUTHENTICATED');
      const ws = await once(socket(apiKey), '{ workflows { id } }');
      expect(ws.closed?.code).toBe(4401);
    });
  });
});

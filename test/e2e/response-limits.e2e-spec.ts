import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { WeftClient } from '@weft/client';
import { publish, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';
import { stubServer } from '../support/faults.js';

/**
 * The bytes of stored JSON one GraphQL answer may hold (WEFT_MAX_RESPONSE_BYTES, 1 MiB here),
 * and the pages of a run's tasks and history, on the real platform: a for_each run whose
 * iterations each output about 60 kB, read through aliases, fragments and the runs list.
 */

const LIMIT = 1024 * 1024;
const ITEMS = 12;
const PAD = 'x'.repeat(60_000);

interface Answer {
  status: number;
  data?: any;
  errors?: { message: string; extensions?: { code?: string; problems?: { message: string }[] } }[];
}

describe('bounded GraphQL answers', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let other: WeftClient;
  let runId: string;
  let echo: Awaited<ReturnType<typeof stubServer>>;
  const sockets: Client[] = [];

  async function gql(query: string, variables: Record<string, unknown> = {}): Promise<Answer> {
    const res = await fetch(e2e.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, ...((await res.json()) as object) };
  }

  /** The first message of an operation over graphql-ws. */
  function once(query: string, variables: Record<string, unknown>): Promise<{ data?: any; errors?: any[] }> {
    const c = createClient({
      url: e2e.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${apiKey}` },
      retryAttempts: 0,
      lazy: true,
    });
    sockets.push(c);
    return new Promise((resolve) => {
      const stop = c.subscribe(
        { query, variables },
        {
          next: (m) => {
            resolve(m as { data?: any; errors?: any[] });
            stop();
          },
          error: (e) => resolve({ errors: Array.isArray(e) ? e : [e] }),
          complete: () => undefined,
        },
      );
    });
  }

  /** Stored values the API read so far (weft_api_stored_values_read_total). */
  async function valuesRead(): Promise<number> {
    const text = await (await fetch(`${e2e.metricsUrl}/metrics`)).text();
    return Number(/^weft_api_stored_values_read_total (\d+)$/m.exec(text)![1]);
  }

  function expectRefused(a: { errors?: Answer['errors']; data?: unknown }): void {
    expect(a.errors).toHaveLength(1);
    const e = a.errors![0]!;
    expect(e.extensions?.code).toBe('BAD_USER_INPUT');
    expect(e.message).toMatch(
      /^response too large: this operation would return at least \d+ bytes of stored JSON, over the limit of 1048576 bytes \(WEFT_MAX_RESPONSE_BYTES\)/,
    );
    expect(JSON.stringify(e.extensions?.problems)).toContain('WEFT_MAX_RESPONSE_BYTES');
    // None of what was read before the refusal is sent.
    expect(a.data ?? null).toBeNull();
  }

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_MAX_RESPONSE_BYTES: LIMIT, WEFT_METRICS_PORT: 0 });
    echo = await stubServer((_req, res, _n, raw) => res.writeHead(200, { 'content-type': 'application/json' }).end(raw || 'null'));
    ({ client, apiKey } = await e2e.tenant('big-outputs'));
    ({ client: other } = await e2e.tenant('bystander'));
    await publish(client, 'fan', {
      nodes: [
        {
          node_id: 'fetch',
          type: 'HTTP',
          for_each: '{{input.xs}}',
          spec: { url: '{{config.base_url}}/echo', method: 'POST', body: { x: '{{item}}', pad: '{{input.pad}}' } },
        },
      ],
      edges: [],
    });
    runId = await start(client, 'fan', { xs: [...Array(ITEMS).keys()], pad: PAD }, { config: { base_url: echo.base } });
    const run = await waitRun(client, runId, (r) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(r.status), 60_000, 'id status error');
    expect(run).toMatchObject({ status: 'SUCCEEDED', error: null });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(sockets.map((s) => s.dispose()));
    await echo?.close();
    await e2e?.close();
  });

  it('answers a query under the bound with its stored JSON', async () => {
    const a = await gql(`query($id: ID!) { run(id: $id) { status input tasks(first: 3) { iteration output } } }`, { id: runId });
    expect(a.errors).toBeUndefined();
    expect(a.data.run.input.pad).toBe(PAD);
    expect(a.data.run.tasks).toHaveLength(3);
    expect(JSON.stringify(a.data.run.tasks[1].output)).toContain(PAD);
  });

  it('refuses aliases whose stored JSON together passes the bound, naming it, and sends none of it', async () => {
    const aliases = [...Array(8).keys()].map((i) => `a${i}: run(id: $id) { output tasks { output } history { payload } }`).join(' ');
    const a = await gql(`query($id: ID!) { ${aliases} }`, { id: runId });
    expect(a.status).toBe(400);
    expectRefused(a);
  });

  it('reads none of the stored values of an operation it refuses', async () => {
    const before = await valuesRead();
    const aliases = [...Array(8).keys()].map((i) => `a${i}: run(id: $id) { output tasks { output } history { payload } }`).join(' ');
    expectRefused(await gql(`query($id: ID!) { ${aliases} }`, { id: runId }));
    expectRefused(await gql(`query($id: ID!) { a: run(id: $id) { tasks { output } } b: run(id: $id) { history { payload } } }`, { id: runId }));
    expectRefused(await gql(`{ runs(first: 10) { edges { node { input tasks { input output } children { output } } } } }`));
    expectRefused(await once(`query($id: ID!) { a: run(id: $id) { tasks { output } } b: run(id: $id) { tasks { output } } }`, { id: runId }));
    expect(await valuesRead()).toBe(before);

    // Fields a directive leaves out are not counted.
    const skipped = await gql(
      `query($id: ID!, $no: Boolean!) { a: run(id: $id) { tasks { id output @skip(if: true) ...O } } b: run(id: $id) { tasks { output @include(if: $no) } } }
      fragment O on Task { input @include(if: $no) }`,
      { id: runId, no: false },
    );
    expect(skipped.errors).toBeUndefined();
    expect(skipped.data.a.tasks).toHaveLength(ITEMS + 1);
    expect(await valuesRead()).toBe(before);

    // An answer under the bound reads its values.
    const small = await gql(`query($id: ID!) { run(id: $id) { tasks(first: 3) { output } } }`, { id: runId });
    expect(small.errors).toBeUndefined();
    expect(await valuesRead()).toBe(before + 3);
  });

  it('counts fragments and the runs list, and answers the same refusal over graphql-ws', async () => {
    const viaFragments = await gql(
      `query($id: ID!) { a: run(id: $id) { ...Big } b: run(id: $id) { ...Big } runs(first: 10) { edges { node { ...Big } } } }
       fragment Big on Run { output tasks { input output } }`,
      { id: runId },
    );
    expectRefused(viaFragments);
    const list = await gql(`{ runs(first: 10) { edges { node { tasks { output } history { payload actions } } } } }`);
    expectRefused(list);
    const ws = await once(`query($id: ID!) { a: run(id: $id) { tasks { output } } b: run(id: $id) { tasks { output } } }`, { id: runId });
    expectRefused(ws);
    const sub = await once(`subscription($id: ID!) { runUpdated(runId: $id) { output tasks { output } } }`, { id: runId });
    expectRefused(sub);
    const small = await once(`subscription($id: ID!) { runUpdated(runId: $id) { status tasks(first: 2) { output } } }`, { id: runId });
    expect(small.errors).toBeUndefined();
    expect(small.data.runUpdated.tasks).toHaveLength(2);
  });

  it("charges workflow versions' source and definition, and schedules' input and config", async () => {
    // Four versions of about 300 kB of source and of definition each: 2.4 MB in all.
    for (let v = 0; v < 4; v++) {
      await publish(client, 'wide', {
        nodes: [{ node_id: 'a', type: 'HTTP', spec: { url: 'http://127.0.0.1:1/', body: { v, pad: 'y'.repeat(300_000) } } }],
        edges: [],
      });
    }
    const one = await gql(`{ workflowVersion(workflowId: "wide", version: 2) { source definition } }`);
    expect(one.errors).toBeUndefined();
    expect(one.data.workflowVersion.definition.nodes[0].spec.body.v).toBe(1);
    expect((await gql(`{ workflow(workflowId: "wide") { versions { version } } }`)).data.workflow.versions).toHaveLength(4);
    expectRefused(await gql(`{ workflow(workflowId: "wide") { versions { source } } }`));
    expectRefused(await gql(`{ workflows { versions { definition } } }`));
    expectRefused(
      await gql(
        `{ a: workflowVersion(workflowId: "wide", version: 1) { source definition } b: workflowVersion(workflowId: "wide", version: 2) { source definition } }`,
      ),
    );

    for (let i = 0; i < 3; i++) {
      await client.request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, {
        i: { workflowId: 'wide', cron: '@yearly', paused: true, input: { pad: 'z'.repeat(200_000) }, config: { pad: 'z'.repeat(200_000) } },
      });
    }
    const ids = await gql(`{ schedules(workflowId: "wide") { edges { node { id input } } } }`);
    expect(ids.errors).toBeUndefined();
    expect(ids.data.schedules.edges).toHaveLength(3);
    expectRefused(await gql(`{ schedules(workflowId: "wide") { edges { node { input config } } } }`));
  });

  it("answers another tenant's whoami normally after a refusal", async () => {
    expectRefused(await gql(`query($id: ID!) { a: run(id: $id) { tasks { output } } b: run(id: $id) { history { payload } } }`, { id: runId }));
    const me = await other.request(`{ whoami { tenantId role } }`);
    expect(me.whoami.role).toBe('admin');
  });

  it('pages tasks and history with first/after: every item exactly once, in order', async () => {
    const whole = (await gql(`query($id: ID!) { run(id: $id) { tasks { id } history { seq } } }`, { id: runId })).data.run;
    expect(whole.tasks).toHaveLength(ITEMS + 1);

    const taskIds: string[] = [];
    for (let after: string | null = null, pages = 0; ; pages++) {
      const a = await gql(`query($id: ID!, $after: ID) { run(id: $id) { tasks(first: 5, after: $after) { id iteration } } }`, { id: runId, after });
      expect(a.errors).toBeUndefined();
      const page = a.data.run.tasks as { id: string }[];
      taskIds.push(...page.map((t) => t.id));
      if (page.length < 5) break;
      after = page[page.length - 1]!.id;
      expect(pages).toBeLessThan(10);
    }
    expect(taskIds).toEqual(whole.tasks.map((t: { id: string }) => t.id));
    expect(new Set(taskIds).size).toBe(ITEMS + 1);

    const seqs: number[] = [];
    for (let after: number | null = null, pages = 0; ; pages++) {
      const a = await gql(`query($id: ID!, $after: Int) { run(id: $id) { history(first: 4, after: $after) { seq } } }`, { id: runId, after });
      expect(a.errors).toBeUndefined();
      const page = a.data.run.history as { seq: number }[];
      seqs.push(...page.map((e) => e.seq));
      if (page.length < 4) break;
      after = page[page.length - 1]!.seq;
      expect(pages).toBeLessThan(100);
    }
    expect(seqs).toEqual(whole.history.map((e: { seq: number }) => e.seq));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('refuses a page size over the maximum and a cursor that is not a task of the run', async () => {
    const big = await gql(`query($id: ID!) { run(id: $id) { tasks(first: 1001) { id } } }`, { id: runId });
    expect(big.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(big.errors?.[0]?.message).toMatch(/first must be between 1 and 1000/);
    const bad = await gql(`query($id: ID!, $after: ID) { run(id: $id) { tasks(after: $after) { id } } }`, { id: runId, after: runId });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

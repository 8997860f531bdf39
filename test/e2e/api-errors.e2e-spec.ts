import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, type E2E } from '../support/e2e-platform.js';

describe('API errors end to end', () => {
  let e2e: E2E;
  let a: WeftClient;
  let b: WeftClient;
  let runOfA: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client: a } = await e2e.tenant('tenant-a'));
    ({ client: b } = await e2e.tenant('tenant-b'));
    await publish(a, 'hello', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 60 } }], edges: [] });
    runOfA = await start(a, 'hello');
  });
  afterAll(() => e2e.close());

  it('lists every problem of an invalid definition, each with its node', async () => {
    const yaml = `
nodes:
  - {node_id: a, type: HTTP, spec: {url: "http://x/{{input.}}"}}
  - {node_id: a, type: CODE, runtime: python, spec: {}}
  - {node_id: c, type: TELEPORT}
  - {node_id: d, type: WAIT, spec: {}}
  - {node_id: e, type: WAIT_FOR_EVENT, spec: {}, retry: {max_attempts: 0}}
edges:
  - {from: a, to: ghost}
  - {from: d, to: e}
  - {from: e, to: d}
`;
    const err = await rejection(publish(a, 'broken', yaml));
    expect(err.code).toBe('BAD_USER_INPUT');
    const problems = err.errors[0].extensions!.problems!;
    const text = problems.map((p) => `${p.nodeId ?? ''} ${p.path ?? ''} ${p.message}`).join('\n');
    expect(problems.length).toBeGreaterThanOrEqual(7);
    expect(text).toMatch(/duplicate/i);
    expect(text).toMatch(/TELEPORT/);
    expect(text).toMatch(/ghost/);
    expect(text).toMatch(/cycle/i);
    expect(text).toMatch(/code/);
    expect(text).toMatch(/duration_seconds|until/);
    expect(text).toMatch(/event/);
    expect(text).toMatch(/max_attempts/);
    expect(problems.some((p) => p.nodeId === 'a' && /syntax|parse|CEL/i.test(p.message))).toBe(true);
  });

  it('reports a YAML syntax error with its line', async () => {
    const err = await rejection(publish(a, 'bad-yaml', 'nodes: [ {node_id: a, type: HTTP\nedges: ]'));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(err.errors[0].extensions!.problems)).toMatch(/line/i);
  });

  it("answers NOT_FOUND for another tenant's run, never its data", async () => {
    const read = await rejection(b.request(`query($id: ID!) { run(id: $id) { id status } }`, { id: runOfA }));
    expect(read.code).toBe('NOT_FOUND');
    for (const [m, input] of [
      ['cancelRun(input: $i) { id }', { runId: runOfA }],
      ['retryRun(input: $i) { id }', { runId: runOfA, fromNodeId: 'w' }],
      ['sendSignal(input: $i) { delivered }', { runId: runOfA, name: 'x' }],
    ] as const) {
      const type = m.startsWith('cancel') ? 'CancelRunInput' : m.startsWith('retry') ? 'RetryRunInput' : 'SendSignalInput';
      const err = await rejection(b.request(`mutation($i: ${type}!) { ${m} }`, { i: input }));
      expect(err.code).toBe('NOT_FOUND');
    }
    const list = await b.request(`{ runs { edges { node { id } } } }`);
    expect(list.runs.edges).toEqual([]);
    expect((await rejection(start(b, 'hello'))).code).toBe('NOT_FOUND');
    // tenant A still sees its run
    expect((await a.request(`query($id: ID!) { run(id: $id) { id } }`, { id: runOfA })).run.id).toBe(runOfA);
  });

  it('answers NOT_FOUND for an unknown run id and an id that is not a UUID', async () => {
    expect((await rejection(a.request(`{ run(id: "0190a2b4-0000-7000-8000-000000000000") { id } }`))).code).toBe('NOT_FOUND');
    expect((await rejection(a.request(`{ run(id: "not-a-uuid") { id } }`))).code).toBe('NOT_FOUND');
  });

  it('refuses a missing or bad API key with UNAUTHENTICATED', async () => {
    expect((await rejection(new WeftClient(e2e.url).request(`{ workflows { id } }`))).code).toBe('UNAUTHENTICATED');
    expect((await rejection(new WeftClient(e2e.url, 'weft_bogus').request(`{ workflows { id } }`))).code).toBe('UNAUTHENTICATED');
  });

  it('answers a subscription sent over HTTP with BAD_USER_INPUT naming graphql-ws', async () => {
    const err = await rejection(a.request(`subscription($id: ID!) { runUpdated(runId: $id) { id } }`, { id: runOfA }));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.message).toMatch(/graphql-ws/);
  });

  it('streams updates to a subscription whatever the case of the run id', async () => {
    await publish(a, 'short', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 0.3 } }], edges: [] });
    const id = await start(a, 'short');
    const seen: string[] = [];
    const sub = a.subscribe(`subscription($id: ID!) { runUpdated(runId: $id) { status } }`, { id: id.toUpperCase() }, (d) => {
      seen.push(d.runUpdated.status);
      return d.runUpdated.status !== 'SUCCEEDED';
    });
    await sub.done;
    expect(seen.at(-1)).toBe('SUCCEEDED');
  });

  it('refuses a cursor that could not have been produced, as an invalid cursor', async () => {
    const forged = Buffer.from(`9999999999999999999:${runOfA}`).toString('base64url');
    const err = await rejection(a.request(`query($c: String) { runs(after: $c) { edges { node { id } } } }`, { c: forged }));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.message).toMatch(/cursor/i);
  });

  it('names the missing version, not the workflow, when the workflow exists', async () => {
    const err = await rejection(a.request(`{ workflowVersion(workflowId: "hello", version: 0) { version } }`));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(/Workflow hello has no version 0$/);
  });
});

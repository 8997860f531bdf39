/**
 * Publishing within bounds: a definition over the node cap is refused by its count before it is
 * validated, an unchanged definition is answered from its checksum without validating it again,
 * a large one is parsed and validated on the API's validation thread while the API keeps
 * answering other tenants, and a queue name no worker could serve is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { rejection, startE2E, type E2E } from '../support/e2e-platform.js';

const PUBLISH = `mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version checksum } }`;

/** A chain of `n` HTTP nodes, each with a template, as JSON text. */
function chain(n: number): string {
  const nodes = Array.from({ length: n }, (_, i) => ({
    node_id: `n${i}`,
    type: 'HTTP',
    spec: { url: 'https://example.com/x', method: 'POST', body: { v: `{{input.a + ${i}}}` } },
  }));
  const edges = Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` }));
  return JSON.stringify({ nodes, edges });
}

describe('definition bounds, end to end', () => {
  let e2e: E2E;
  let admin: WeftClient;
  let other: WeftClient;

  const publish = async (workflowId: string, definition: string) =>
    (await admin.request(PUBLISH, { i: { workflowId, definition } })).publishWorkflow as { version: number; checksum: string };

  /** `weft_definition_checks_total{how}` as the process's /metrics (on its ops listener) says now. */
  const checks = async (how: 'identical' | 'inline' | 'thread'): Promise<number> => {
    const res = await fetch(`${e2e.metricsUrl!}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const line = text.split('\n').find((l) => l.startsWith(`weft_definition_checks_total{how="${how}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_METRICS_PORT: 0 });
    ({ client: admin } = await e2e.tenant('bounds'));
    ({ client: other } = await e2e.tenant('bystander'));
  });
  afterAll(() => e2e.close());

  it('refuses a definition over the node cap by its count and the setting, validating nothing', async () => {
    const before = await checks('inline');
    const err = await rejection(publish('huge', JSON.stringify({ nodes: Array.from({ length: 2001 }, () => ({})), edges: [] })));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0]!.message).toBe('definition has 2001 nodes; at most 2000 are allowed (WEFT_MAX_DEFINITION_NODES)');
    expect(await checks('inline')).toBe(before);
    expect(await rejection(admin.request(`query { workflow(workflowId: "huge") { id } }`))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers a republished definition from its checksum, without validating it again', async () => {
    const text = chain(3);
    const v1 = await publish('same', text);
    const [identical, inline] = [await checks('identical'), await checks('inline')];
    // The same definition, reformatted: the stored version, and no validation ran.
    const again = await publish('same', JSON.stringify(JSON.parse(text), null, 2));
    expect(again).toEqual(v1);
    expect(await checks('identical')).toBe(identical + 1);
    expect(await checks('inline')).toBe(inline);
    // A changed definition is validated and becomes version 2.
    expect((await publish('same', chain(4))).version).toBe(2);
    expect(await checks('inline')).toBe(inline + 1);
  });

  it('validates a large definition on the validation thread while another tenant is served', async () => {
    const text = chain(1999);
    expect(text.length).toBeGreaterThan(64 * 1024);
    const thread = await checks('thread');
    let settled = false;
    const publishing = publish('large', text).finally(() => (settled = true));
    // Another tenant's request is answered while the publish is still parsing or validating.
    const who = (await other.request(`query { whoami { keyName } }`)).whoami;
    expect(who).toEqual({ keyName: expect.any(String) });
    expect(settled).toBe(false);
    expect((await publishing).version).toBe(1);
    expect(await checks('thread')).toBe(thread + 1);
  });

  it('refuses a queue name with white space, naming the node and its queue path', async () => {
    const def = { nodes: [{ node_id: 'render', type: 'HTTP', queue: ' GPU ', spec: { url: 'https://example.com/x' } }], edges: [] };
    const err = await rejection(publish('spaced', JSON.stringify(def)));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0]!.extensions!.problems).toEqual([
      {
        nodeId: 'render',
        path: 'nodes[0].queue',
        message: `queue " GPU " is not a queue name: 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
      },
    ]);
    // In any case, without spaces, it is the worker's lower-case queue name.
    expect((await publish('spaced', JSON.stringify({ ...def, nodes: [{ ...def.nodes[0], queue: 'GPU' }] }))).version).toBe(1);
  });
});

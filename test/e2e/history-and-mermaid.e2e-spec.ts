import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { runWeft } from '../support/cli.js';
import { jsNode, publish, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * A run's history and pictures over the API: `run.history` records every
 * applied event with its actions, time, attempt and error; `run.mermaid` draws the DAG with each
 * node's status, taken edges thick and skipped ones dotted; `workflowVersion.mermaid` draws the
 * definition; `weft run-status ID --mermaid` prints the run's picture.
 */
describe('a run tells its story: history and pictures', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('history'));
    // fetch fails once (503), is retried, then routes to `small`; `big` is skipped.
    await publish(client, 'story', {
      nodes: [
        { node_id: 'fetch', type: 'HTTP', retry: { max_attempts: 2 }, spec: { url: '{{config.shop}}/flaky/{{input.key}}?fail=1', method: 'GET' } },
        { node_id: 'route', type: 'SWITCH' },
        jsNode('big', 'return { size: "big" };'),
        jsNode('small', 'return { size: "small" };'),
      ],
      edges: [
        { from: 'fetch', to: 'route' },
        { from: 'route', to: 'big', condition: '{{tasks.fetch.output.calls > 5}}' },
        { from: 'route', to: 'small', condition: '{{tasks.fetch.output.calls <= 5}}' },
      ],
    });
  });
  afterAll(() => e2e.close());

  it('records each applied event with its attempt, error, time and actions, and draws the path the run took', async () => {
    const runId = await start(client, 'story', { key: `k-${Date.now()}` }, { config: { shop: e2e.shop.url } });
    expect((await waitRun(client, runId)).status).toBe('SUCCEEDED');

    const { run } = await client.request(`query($id: ID!) { run(id: $id) { history { seq type at nodeId attempt payload actions ignored } mermaid } }`, {
      id: runId,
    });
    const history = run.history;
    expect(history.map((e: any) => [e.seq, e.type, e.nodeId, e.attempt])).toEqual([
      [1, 'RunStarted', null, null],
      [2, 'NodeFailed', 'fetch', 0],
      [3, 'NodeCompleted', 'fetch', 1],
      [4, 'NodeCompleted', 'small', 0],
    ]);
    const at = history.map((e: any) => Date.parse(e.at));
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(history.every((e: any) => e.ignored === null)).toBe(true);
    expect(history[1].payload.error).toContain('503');
    const kinds = (i: number) => history[i].actions.map((a: any) => a.type);
    expect(kinds(0)).toEqual(['CreateTask', 'DispatchTask']);
    expect(kinds(1)).toEqual(['RetryTask']);
    expect(history[2].actions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'CompleteTask', nodeId: 'fetch', attempt: 1 }),
        expect.objectContaining({ type: 'CreateTask', nodeId: 'route', status: 'COMPLETED', branches: ['small'] }),
        expect.objectContaining({ type: 'CreateTask', nodeId: 'big', status: 'SKIPPED' }),
        expect.objectContaining({ type: 'DispatchTask', nodeId: 'small', attempt: 0 }),
      ]),
    );
    expect(kinds(3)).toEqual(['CompleteTask', 'FinishRun']);

    // Nodes by id n0 (fetch), n1 (route), n2 (big), n3 (small), in definition order.
    const mermaid: string = run.mermaid;
    expect(mermaid).toMatch(/^flowchart TD\n/);
    expect(mermaid).toContain('n0["fetch<br/>HTTP<br/>COMPLETED"]:::completed');
    expect(mermaid).toContain('n2["big<br/>CODE<br/>SKIPPED"]:::skipped');
    expect(mermaid).toContain('n0 ==> n1');
    expect(mermaid).toMatch(/n1 ==>\|"[^"]*calls <= 5[^"]*"\| n3/);
    expect(mermaid).toMatch(/n1 -\.->\|"[^"]*calls > 5[^"]*"\| n2/);
    expect(mermaid).toMatch(/linkStyle 1 stroke/);

    // The CLI prints the same picture.
    expect((await runWeft(e2e.url, apiKey, 'run-status', runId, '--mermaid')).trim()).toBe(mermaid);
  });

  it('draws a published version without statuses', async () => {
    const { workflowVersion } = await client.request(`{ workflowVersion(workflowId: "story") { version mermaid } }`);
    expect(workflowVersion.version).toBe(1);
    expect(workflowVersion.mermaid).toContain('n0["fetch<br/>HTTP"]');
    expect(workflowVersion.mermaid).not.toMatch(/:::|==>|classDef/);
  });
});

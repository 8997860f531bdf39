import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';
import { cli, type CliResult } from '../support/weft-cli.js';

/**
 * A node on a queue no live worker serves: a warning when its workflow is published, and a task
 * that has waited there over a minute says so in the API and in `weft run-status`. The wait is
 * aged in the database, never slept through.
 */

const PUBLISH = `mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version warnings { nodeId path message } } }`;

describe('queues no live worker serves', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('unserved'));
  }, 60_000);
  afterAll(() => e2e?.close());

  it('warns at publish about a node on a queue no live worker serves, and not about a served one', async () => {
    const definition = {
      nodes: [
        { node_id: 'render', type: 'HTTP', queue: 'gpu', spec: { url: `${e2e.shop.url}/orders/1` } },
        { node_id: 'notify', type: 'HTTP', spec: { url: `${e2e.shop.url}/orders/2` } },
      ],
      edges: [{ from: 'render', to: 'notify' }],
    };
    const r = await client.request(PUBLISH, { i: { workflowId: 'render', definition: JSON.stringify(definition) } });
    expect(r.publishWorkflow.warnings).toEqual([
      {
        nodeId: 'render',
        path: 'nodes[0].queue',
        message: 'node "render" runs on queue "gpu", which no live worker serves now; its tasks will wait until a worker serving "gpu" starts',
      },
    ]);
  });

  it('says a task waited over a minute on such a queue in the API and in run-status', async () => {
    const id = await start(client, 'render');
    const fields = 'id status tasks { id nodeId status queue waitReason waitDetail iteration }';
    const waiting = await waitRun(client, id, (r) => ['QUEUED', 'PENDING'].includes(task(r, 'render')?.status), 30_000, fields);
    // Not a minute yet: no word about workers.
    expect(task(waiting, 'render').waitReason).not.toBe('NO_LIVE_WORKER');

    await e2e.owner.query(`UPDATE tasks SET updated_at = now() - interval '3 minutes 10 seconds' WHERE id = $1`, [task(waiting, 'render').id]);
    const aged = await getRun(client, id, fields);
    expect(task(aged, 'render')).toMatchObject({ waitReason: 'NO_LIVE_WORKER', waitDetail: 'waiting 3m on queue "gpu": no live worker serves it' });

    const status = await weft('run-status', id);
    expect(status.code).toBe(0);
    expect(status.stdout.split('\n').find((l) => /^render\s/.test(l))).toContain('waiting 3m on queue "gpu": no live worker serves it');
  });
});

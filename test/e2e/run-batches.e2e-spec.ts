import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

const CREATE = `mutation($i: CreateRunBatchInput!) { createRunBatch(input: $i) { id action status total applied skipped failed } }`;
const BATCH = `query($id: ID!, $after: String) { runBatch(id: $id) { id status total applied skipped failed
  items(first: 2, after: $after) { edges { cursor node { runId outcome error } } pageInfo { hasNextPage endCursor } } } }`;

/**
 * Bulk actions over the API with the platform's own scheduler: the count at creation, progress to
 * COMPLETED, per-run outcomes in pages, and bad input named by its path.
 */
describe('bulk actions end to end', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_METRICS_PORT: 0 });
    ({ client } = await e2e.tenant('batches'));
    await publish(client, 'gated', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }], edges: [] });
  }, 120_000);
  afterAll(() => e2e.close());

  it('cancels the runs a filter matched, one outcome per run, and counts the metric', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await start(client, 'gated', {}, { labels: { wave: 'w1' } }));
    // One of them ends before the batch acts: it is skipped with why.
    await client.request(`mutation { cancelRun(input: {runId: "${ids[2]}"}) { id } }`);
    const created = (await client.request(CREATE, { i: { action: 'CANCEL', filter: { labels: { wave: 'w1' } }, reason: 'cleanup' } })).createRunBatch;
    expect(created).toMatchObject({ action: 'CANCEL', status: 'RUNNING', total: 3 });

    let batch;
    for (const deadline = Date.now() + 50_000; ;) {
      batch = (await client.request(BATCH, { id: created.id })).runBatch;
      if (batch.status !== 'RUNNING') break;
      if (Date.now() > deadline) throw new Error(`batch still running: ${JSON.stringify(batch)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(batch).toMatchObject({ status: 'COMPLETED', total: 3, applied: 2, skipped: 1, failed: 0 });
    expect(batch.items.edges.map((e: any) => e.node)).toEqual([
      { runId: ids[0], outcome: 'APPLIED', error: null },
      { runId: ids[1], outcome: 'APPLIED', error: null },
    ]);
    expect(batch.items.pageInfo.hasNextPage).toBe(true);
    const rest = (await client.request(BATCH, { id: created.id, after: batch.items.pageInfo.endCursor })).runBatch.items;
    expect(rest.edges.map((e: any) => e.node)).toEqual([{ runId: ids[2], outcome: 'SKIPPED', error: expect.stringMatching(/is CANCELLED/) }]);
    expect((await waitRun(client, ids[0]!)).status).toBe('CANCELLED');
    expect((await waitRun(client, ids[0]!)).error).toBe('cleanup');

    const listed = (await client.request(`{ runBatches(first: 5) { edges { node { id } } } }`)).runBatches.edges;
    expect(listed[0].node.id).toBe(created.id);
    const metrics = await (await fetch(`${e2e.metricsUrl!}/metrics`)).text();
    expect(metrics).toMatch(/^weft_batch_items_total\{action="CANCEL",outcome="APPLIED"\} 2$/m);
    expect(metrics).toMatch(/^weft_batch_items_total\{action="CANCEL",outcome="SKIPPED"\} 1$/m);
  });

  it('names what is wrong with a bad bulk action', async () => {
    const empty = await rejection(client.request(CREATE, { i: { action: 'PAUSE', filter: {} } }));
    expect(empty.code).toBe('BAD_USER_INPUT');
    expect(empty.message).toMatch(/BAD_USER_INPUT: filter: a bulk action needs a filter/);
    const retry = await rejection(client.request(CREATE, { i: { action: 'RETRY', filter: { status: 'FAILED' } } }));
    expect(retry.code).toBe('BAD_USER_INPUT');
    expect(retry.message).toMatch(/BAD_USER_INPUT: fromNodeId: a RETRY needs fromNodeId/);
    const unknown = await rejection(client.request(CREATE, { i: { action: 'DELETE', filter: { status: 'FAILED' } } }));
    expect(unknown.code).toBe('BAD_USER_INPUT');
    expect(unknown.message).toMatch(/DELETE/);
    const labels = await rejection(client.request(CREATE, { i: { action: 'PAUSE', filter: { labels: { 'bad key!': 'x' } } } }));
    expect(labels.code).toBe('BAD_USER_INPUT');
    expect(labels.message).toMatch(/filter\.labels/);
    const missing = await rejection(client.request(BATCH, { id: '00000000-0000-4000-8000-000000000000' }));
    expect(missing.code).toBe('NOT_FOUND');
  });
});

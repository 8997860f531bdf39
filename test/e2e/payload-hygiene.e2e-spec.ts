import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * Payload hygiene end to end: output_keep / output_drop trim what a
 * node's task stores, what its successors see and what the history records; a sensitive node's
 * input and output stay out of the history and are redacted in the API, while its successors
 * still receive them.
 */
describe('payload hygiene end to end', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('hygiene'));
    await publish(client, 'checkout', {
      nodes: [
        { ...jsNode('charge', 'return {receipt: "r-1", card: "4111-1111-1111-1111", raw: "x".repeat(1000), total: 250};'), output_drop: ['card', 'raw'] },
        { ...jsNode('token', 'return {token: "s3cr3t", expires: 60};'), sensitive: true },
        {
          ...jsNode('summary', 'return {receipt: input.receipt, card: input.card ?? null, tokenLength: input.token.length};', {
            receipt: '{{tasks.charge.output.receipt}}',
            card: '{{has(tasks.charge.output.card) ? tasks.charge.output.card : "gone"}}',
            token: '{{tasks.token.output.token}}',
          }),
          output_keep: ['receipt', 'tokenLength'],
        },
      ],
      edges: [
        { from: 'charge', to: 'token' },
        { from: 'token', to: 'summary' },
      ],
    });
  });
  afterAll(() => e2e.close());

  it('stores, passes on and records only what the node keeps; a sensitive node is redacted everywhere but in its successors', async () => {
    const runId = await start(client, 'checkout');
    const run = await waitRun(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    // Dropped fields are gone from the task and from what the successor saw.
    expect(task(run, 'charge').output).toEqual({ receipt: 'r-1', total: 250 });
    // The sensitive node's token reached its successor, which kept only two fields.
    expect(task(run, 'summary').output).toEqual({ receipt: 'r-1', tokenLength: 6 });
    expect(task(run, 'summary').input).toMatchObject({ card: 'gone', token: 's3cr3t' });
    // The API redacts the sensitive node; the history never held its output or the dropped fields.
    expect(task(run, 'token')).toMatchObject({ status: 'COMPLETED', input: null, output: null });
    const history = (await client.request(`query($id: ID!) { run(id: $id) { history { type nodeId payload } } }`, { id: runId })).run.history;
    const completed = Object.fromEntries(history.filter((e: any) => e.type === 'NodeCompleted').map((e: any) => [e.nodeId, e.payload.output]));
    expect(completed.charge).toEqual({ receipt: 'r-1', total: 250 });
    expect(completed.token).toBe('[redacted: sensitive node]');
    expect(completed.summary).toEqual({ receipt: 'r-1', tokenLength: 6 });
    expect(JSON.stringify(history)).not.toContain('s3cr3t');
    expect(JSON.stringify(history)).not.toContain('4111');
  });

  it('keeps a sensitive sink out of the default run output', async () => {
    await publish(client, 'secret-sink', {
      nodes: [{ node_id: 'split', type: 'FORK' }, jsNode('public', 'return {ok: true};'), { ...jsNode('vault', 'return {token: "s3cr3t"};'), sensitive: true }],
      edges: [
        { from: 'split', to: 'public' },
        { from: 'split', to: 'vault' },
      ],
    });
    const run = await waitRun(client, await start(client, 'secret-sink'));
    expect(run.status).toBe('SUCCEEDED');
    expect(run.output).toEqual({ public: { ok: true }, vault: '[redacted: sensitive node]' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

const CREATE = `mutation($i: CreateRunBatchInput!) { createRunBatch(input: $i) { id action status total applied skipped failed } }`;
const ITEMS = `query($id: ID!, $after: String, $first: Int) { runBatch(id: $id) { id items(first: $first, after: $after) { edges { cursor node { runId outcome } } } } }`;

/** Hostile input against pause, resume and bulk actions over the API. */
describe('run control attacks', () => {
  let e2e: E2E;
  let client: WeftClient;
  let other: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_METRICS_PORT: 0 });
    ({ client } = await e2e.tenant('attacker'));
    ({ client: other } = await e2e.tenant('victim'));
    for (const c of [client, other]) {
      await publish(c, 'gated', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }], edges: [] });
      await publish(c, 'keep', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }], edges: [] });
    }
  }, 120_000);
  afterAll(() => e2e.close());

  it('an empty workflowId is not a filter: a batch must not match every run of the tenant', async () => {
    const keep = await start(client, 'keep');
    await start(client, 'gated');
    const r = await client.request(CREATE, { i: { action: 'PAUSE', filter: { workflowId: '' }, reason: 'x' } }).then(
      (x) => ({ ok: x.createRunBatch }),
      (e) => ({ err: e }),
    );
    // Refused before anything is acted on: the other workflow's run is still running.
    expect((await waitRun(client, keep, () => true, 5_000, 'id status')).status).toBe('RUNNING');
    expect('err' in r).toBe(true);
  });

  it('an out-of-range items cursor is BAD_USER_INPUT, not an internal error', async () => {
    await start(client, 'gated', {}, { labels: { c: 'x' } });
    const b = (await client.request(CREATE, { i: { action: 'PAUSE', filter: { labels: { c: 'x' } } } })).createRunBatch;
    for (const after of ['1e10', '0x10', ' 1', '']) {
      expect((await rejection(client.request(ITEMS, { id: b.id, after }))).message).toMatch(/after: .* is not a cursor of this list/);
    }
    const err = await rejection(client.request(ITEMS, { id: b.id, after: '99999999999' }));
    expect(err.code).toBe('BAD_USER_INPUT');
    // The message should name the cursor, not say a value cannot be stored.
    expect(err.message).toMatch(/after/);
  });

  it('foreign ids: batches, runs', async () => {
    const theirRun = await start(other, 'gated');
    const theirBatch = (await other.request(CREATE, { i: { action: 'PAUSE', filter: { workflowId: 'keep' } } })).createRunBatch;
    const out: Record<string, unknown> = {};
    const grab = (p: Promise<any>) =>
      p.then(
        (x) => ({ ok: x }),
        (e) => ({ code: e.code, message: String(e.message).slice(0, 160) }),
      );
    out.get = await grab(client.request(`query($id: ID!) { runBatch(id: $id) { id total } }`, { id: theirBatch.id }));
    out.stop = await grab(client.request(`mutation($id: ID!) { stopRunBatch(id: $id) { id status } }`, { id: theirBatch.id }));
    out.listAfter = await grab(
      client.request(`query($a: String) { runBatches(first: 5, after: $a) { edges { node { id } } pageInfo { hasPreviousPage } } }`, { a: theirBatch.id }),
    );
    out.listBogus = await grab(
      client.request(`query($a: String) { runBatches(first: 5, after: $a) { edges { node { id } } pageInfo { hasPreviousPage } } }`, { a: 'nonsense' }),
    );
    out.pause = await grab(client.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { id status } }`, { i: { runId: theirRun } }));
    out.resume = await grab(client.request(`mutation($i: ResumeRunInput!) { resumeRun(input: $i) { id status } }`, { i: { runId: theirRun } }));
    out.batchOnTheirs = await grab(client.request(CREATE, { i: { action: 'CANCEL', filter: { scheduleId: theirRun } } }));
    for (const first of [-1, 0, 1001, 2147483647])
      out[`first${first}`] = await grab(client.request(`query($f: Int) { runBatches(first: $f) { edges { node { id } } } }`, { f: first }));
    out.nulReason = await grab(
      client.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { id status } }`, { i: { runId: await start(client, 'gated'), reason: 'a\u0000b' } }),
    );
    out.nulBatchReason = await grab(client.request(CREATE, { i: { action: 'PAUSE', filter: { workflowId: 'gated' }, reason: 'a\u0000b' } }));
    out.nulBatchKey = await grab(client.request(CREATE, { i: { action: 'PAUSE', filter: { workflowId: 'gated' }, idempotencyKey: 'a\u0000b' } }));
    out.nulFilter = await grab(client.request(CREATE, { i: { action: 'PAUSE', filter: { workflowId: 'a\u0000b' } } }));
    out.nulErrorContains = await grab(client.request(CREATE, { i: { action: 'PAUSE', filter: { errorContains: 'a\u0000b' } } }));
    out.hugeReason = await grab(
      client.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { id status } }`, {
        i: { runId: await start(client, 'gated'), reason: 'x'.repeat(100_000) },
      }),
    );
    out.surrogate = await grab(
      client.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { id status pauseReason } }`, {
        i: { runId: await start(client, 'gated'), reason: '\ud800' },
      }),
    );
    const theirs = await waitRun(other, theirRun, () => true, 5_000, 'id status');
    expect(theirs.status).toBe('RUNNING');
  });
});

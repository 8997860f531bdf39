import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, jsNode, publish, rejection, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

const signal = (client: WeftClient, runId: string, name: string, payload?: unknown) =>
  client
    .request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name, payload } })
    .then((r) => r.sendSignal.delivered as boolean);

describe('signals, timers, cancel, retry and idempotency end to end', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('control'));
    await publish(client, 'gated', {
      nodes: [
        { node_id: 'pause', type: 'WAIT', spec: { duration_seconds: 0.5 } },
        { node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go-{{input.id}}', timeout_seconds: 30 } },
        jsNode('after', 'return {got: input.got};', { got: '{{tasks.gate.output}}' }),
      ],
      edges: [
        { from: 'pause', to: 'gate' },
        { from: 'gate', to: 'after' },
      ],
    });
  });
  afterAll(() => e2e.close());

  it('buffers a signal sent before the node waits, then consumes it when the node parks', async () => {
    const runId = await start(client, 'gated', { id: 'early' });
    expect(await signal(client, runId, 'go-early', { n: 1 })).toBe(false);
    const run = await waitRun(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'gate').output).toEqual({ n: 1 });
    expect(task(run, 'after').output).toEqual({ got: { n: 1 } });
  });

  it('delivers a signal to a waiting node', async () => {
    const runId = await start(client, 'gated', { id: 'late' });
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');
    expect(await signal(client, runId, 'go-late', { n: 2 })).toBe(true);
    expect((await waitRun(client, runId)).status).toBe('SUCCEEDED');
  });

  it('fails a WAIT_FOR_EVENT node whose signal never comes, when its timeout fires', async () => {
    await publish(client, 'times-out', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 0.3 } }, jsNode('after', 'return {};')],
      edges: [{ from: 'gate', to: 'after' }],
    });
    const run = await waitRun(client, await start(client, 'times-out'));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'gate').status).toBe('FAILED');
    expect(task(run, 'gate').error).toContain('timed out waiting for event "never"');
    expect(task(run, 'after')).toBeUndefined();
  });

  it("lets a later node read a failed sibling's status and error, in another event", async () => {
    await publish(client, 'sibling-error', {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        jsNode('bad', 'throw new Error("card declined");'),
        { node_id: 'pause', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } },
        jsNode('report', 'return input;', { status: '{{tasks.bad.status}}', error: '{{tasks.bad.error}}' }),
      ],
      edges: [
        { from: 'f', to: 'bad' },
        { from: 'f', to: 'pause' },
        { from: 'pause', to: 'report' },
      ],
    });
    const runId = await start(client, 'sibling-error');
    // The sibling has failed, in an earlier event, before the signal lets report run.
    await waitRun(client, runId, (r) => task(r, 'bad')?.status === 'FAILED');
    await signal(client, runId, 'go');
    const run = await waitRun(client, runId);
    expect(run.status).toBe('FAILED');
    expect(task(run, 'report').status).toBe('COMPLETED');
    expect(task(run, 'report').output.status).toBe('FAILED');
    expect(task(run, 'report').output.error).toContain('card declined');
  });

  it('refuses a signal to a finished run with CONFLICT', async () => {
    const runId = await start(client, 'gated', { id: 'done' });
    await signal(client, runId, 'go-done');
    await waitRun(client, runId);
    expect((await rejection(signal(client, runId, 'go-done'))).code).toBe('CONFLICT');
  });

  it('cancels a waiting run: every active task stops and nothing downstream starts', async () => {
    const runId = await start(client, 'gated', { id: 'cancel' });
    await waitRun(client, runId, (r) => task(r, 'pause')?.status === 'WAITING');
    const r = await client.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id status error } }`, {
      i: { runId, reason: 'customer changed mind' },
    });
    expect(r.cancelRun.status).toBe('CANCELLED');
    await new Promise((res) => setTimeout(res, 800)); // past the WAIT's timer
    const run = await getRun(client, runId);
    expect(run.status).toBe('CANCELLED');
    expect(statuses(run)).toEqual({ pause: 'CANCELLED' });
    expect((await rejection(client.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } }))).code).toBe('CONFLICT');
  });

  it('retries a failed run from the failed node with new input', async () => {
    await publish(client, 'divide', {
      nodes: [
        jsNode('load', 'return {n: 10};'),
        jsNode('divide', 'if (input.by === 0) throw new Error("division by zero"); return {q: input.n / input.by};', {
          n: '{{tasks.load.output.n}}',
          by: '{{input.by}}',
        }),
        jsNode('report', 'return {text: "q=" + input.q};', { q: '{{tasks.divide.output.q}}' }),
      ],
      edges: [
        { from: 'load', to: 'divide' },
        { from: 'divide', to: 'report' },
      ],
    });
    const runId = await start(client, 'divide', { by: 0 });
    const failed = await waitRun(client, runId);
    expect(failed.status).toBe('FAILED');
    expect(task(failed, 'divide').error).toContain('division by zero');
    const loadTaskId = task(failed, 'load').id;

    const retried = await client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id status } }`, {
      i: { runId, fromNodeId: 'divide', input: { by: 2 } },
    });
    expect(retried.retryRun.status).toBe('RUNNING');
    const run = await waitRun(client, runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'report').output).toEqual({ text: 'q=5' });
    expect(task(run, 'load').id).toBe(loadTaskId); // upstream of the retried node is kept

    expect((await rejection(client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId, fromNodeId: 'nope' } }))).code).toBe(
      'BAD_USER_INPUT',
    );
  });

  it('refuses to retry a run while tasks are active', async () => {
    const runId = await start(client, 'gated', { id: 'busy' });
    await waitRun(client, runId, (r) => task(r, 'pause')?.status === 'WAITING');
    const err = await rejection(client.request(`mutation($i: RetryRunInput!) { retryRun(input: $i) { id } }`, { i: { runId, fromNodeId: 'pause' } }));
    expect(err.code).toBe('CONFLICT');
    await signal(client, runId, 'go-busy');
    await waitRun(client, runId);
  });

  it('returns the same run for a repeated idempotency key, even when the calls race', async () => {
    const calls = Array.from({ length: 5 }, () => start(client, 'gated', { id: 'idem' }, { idempotencyKey: 'order-77' }));
    const ids = await Promise.all(calls);
    expect(new Set(ids).size).toBe(1);
    expect(await start(client, 'gated', { id: 'idem' }, { idempotencyKey: 'order-77' })).toBe(ids[0]);
    expect(await start(client, 'gated', { id: 'idem' }, { idempotencyKey: 'order-78' })).not.toBe(ids[0]);
  });
});

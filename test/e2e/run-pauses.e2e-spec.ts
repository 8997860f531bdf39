import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, rejection, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

const FIELDS = `id status pausedAt pauseReason error tasks { nodeId status attempt attemptLimit waitReason waitDetail }`;

const pauseRun = (client: WeftClient, runId: string, reason?: string) =>
  client.request(`mutation($i: PauseRunInput!) { pauseRun(input: $i) { ${FIELDS} } }`, { i: { runId, ...(reason ? { reason } : {}) } }).then((r) => r.pauseRun);
const resumeRun = (client: WeftClient, runId: string) =>
  client.request(`mutation($i: ResumeRunInput!) { resumeRun(input: $i) { ${FIELDS} } }`, { i: { runId } }).then((r) => r.resumeRun);
const signal = (client: WeftClient, runId: string, name: string) =>
  client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name } });

/**
 * Pause and resume over the API with real workers: a paused run's signal is delivered and its
 * next CODE task waits with RUN_PAUSED; the filter and count find it; a node with
 * `on_exhausted: pause` pauses its run, and the metric counts both causes.
 */
describe('pausing runs end to end', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_METRICS_PORT: 0 });
    ({ client } = await e2e.tenant('pauses'));
    await publish(client, 'gated', {
      nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }, jsNode('after', 'return {done: true};')],
      edges: [{ from: 'gate', to: 'after' }],
    });
    await publish(client, 'declined', {
      nodes: [{ ...jsNode('charge', 'throw new Error("card declined");'), on_exhausted: 'pause' }],
      edges: [],
    });
  }, 120_000);
  afterAll(() => e2e.close());

  it('holds what a paused run would dispatch, finds it by status, and runs it to its end after the resume', async () => {
    const runId = await start(client, 'gated');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');

    const paused = await pauseRun(client, runId, 'maintenance window');
    expect(paused).toMatchObject({ status: 'PAUSED', pauseReason: 'maintenance window' });
    expect(paused.pausedAt).toEqual(expect.any(String));
    expect((await signal(client, runId, 'go')).sendSignal.delivered).toBe(true);

    const held = await waitRun(client, runId, (r) => task(r, 'after')?.status === 'QUEUED', 50_000, FIELDS);
    expect(held.status).toBe('PAUSED');
    expect(task(held, 'after')).toMatchObject({ waitReason: 'RUN_PAUSED', waitDetail: 'run paused: maintenance window' });

    const listed = await client.request(`query { runs(filter: {status: PAUSED}) { edges { node { id } } } countRuns(filter: {status: PAUSED}) }`);
    expect(listed.runs.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(runId);
    expect(listed.countRuns).toBeGreaterThanOrEqual(1);
    const running = await client.request(`query { runs(filter: {status: RUNNING}) { edges { node { id } } } }`);
    expect(running.runs.edges.map((e: { node: { id: string } }) => e.node.id)).not.toContain(runId);

    expect(await resumeRun(client, runId)).toMatchObject({ status: 'RUNNING', pausedAt: null, pauseReason: null });
    const done = await waitRun(client, runId);
    expect(done.status).toBe('SUCCEEDED');
    expect(task(done, 'after').output).toEqual({ done: true });
  });

  it('pauses a run whose node ran out of attempts, and pauses it again after the resume granted more', async () => {
    const runId = await start(client, 'declined');
    const first = await waitRun(client, runId, (r) => r.status === 'PAUSED', 50_000, FIELDS);
    expect(first.pauseReason).toMatch(/^node charge exhausted its 1 attempt: .*card declined/);
    expect(task(first, 'charge')).toMatchObject({ status: 'FAILED', attempt: 0, attemptLimit: null });

    await resumeRun(client, runId);
    const second = await waitRun(client, runId, (r) => r.status === 'PAUSED' && task(r, 'charge')?.attempt === 1, 50_000, FIELDS);
    expect(second.pauseReason).toMatch(/^node charge exhausted its 2 attempts: /);
    expect(task(second, 'charge')).toMatchObject({ attempt: 1, attemptLimit: 2 });

    const conflict = await rejection(client.request(`mutation { retryRun(input: {runId: "${runId}", fromNodeId: "charge"}) { id } }`));
    expect(conflict.code).toBe('CONFLICT');
    await client.request(`mutation { cancelRun(input: {runId: "${runId}"}) { id } }`);
    expect((await waitRun(client, runId)).status).toBe('CANCELLED');

    const metrics = await (await fetch(`${e2e.metricsUrl!}/metrics`)).text();
    expect(metrics).toMatch(/^weft_runs_paused_total\{workflow="gated",cause="operator"\} [1-9]/m);
    expect(metrics).toMatch(/^weft_runs_paused_total\{workflow="declined",cause="exhausted"\} [2-9]/m);
  });

  it('refuses a pause of a finished run, and input past its bounds, naming what is wrong', async () => {
    const runId = await start(client, 'gated');
    await signal(client, runId, 'go');
    await waitRun(client, runId);
    const finished = await rejection(pauseRun(client, runId));
    expect(finished.code).toBe('CONFLICT');
    expect(finished.message).toMatch(/is SUCCEEDED: only an active run can be paused/);
    const long = await rejection(pauseRun(client, runId, 'x'.repeat(2001)));
    expect(long.code).toBe('BAD_USER_INPUT');
    expect(long.message).toMatch(/reason/);
  });
});

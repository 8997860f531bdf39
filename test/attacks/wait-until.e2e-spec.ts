import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * A WAIT node's `until` at a leap second (RFC 3339 §5.6 allows second 60): accepted at publish
 * and when a template resolves to it at run time, and read as the following second.
 */

const cancel = (client: WeftClient, runId: string) => client.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } });

describe('WAIT until a leap second', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('leap-seconds'));
  });
  afterAll(() => e2e.close());

  it('publishes until 2016-12-31T23:59:60Z, and the run waits through it and succeeds', async () => {
    const version = await publish(client, 'past-leap', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { until: '2016-12-31T23:59:60Z' } }], edges: [] });
    expect(version).toBe(1);
    const run = await waitRun(client, await start(client, 'past-leap'));
    expect(run.status).toBe('SUCCEEDED');
    expect(task(run, 'w').status).toBe('COMPLETED');
  });

  it('parks a literal future leap second until the following second', async () => {
    await publish(client, 'future-leap', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { until: '2098-12-31T23:59:60Z' } }], edges: [] });
    const runId = await start(client, 'future-leap');
    const run = await waitRun(client, runId, (r) => task(r, 'w')?.status === 'WAITING');
    expect(task(run, 'w').wakeAt).toBe('2099-01-01T00:00:00.000Z');
    await cancel(client, runId);
  });

  it('reads a templated until that resolves to a leap second at run time', async () => {
    await publish(client, 'templated-leap', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { until: '{{input.at}}' } }], edges: [] });

    const past = await waitRun(client, await start(client, 'templated-leap', { at: '2016-12-31T23:59:60Z' }));
    expect(past.status).toBe('SUCCEEDED');
    expect(task(past, 'w').error).toBeNull();

    const futureId = await start(client, 'templated-leap', { at: '2097-06-30T23:59:60Z' });
    const future = await waitRun(client, futureId, (r) => task(r, 'w')?.status !== undefined && task(r, 'w').status !== 'PENDING');
    expect(task(future, 'w')).toMatchObject({ status: 'WAITING', wakeAt: '2097-07-01T00:00:00.000Z' });
    await cancel(client, futureId);
  });

  it('still refuses second 60 outside the last minute of a UTC day, naming the field', async () => {
    const err = await rejection(publish(client, 'noon-leap', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { until: '2016-12-31T12:00:60Z' } }], edges: [] }));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.errors[0].extensions!.problems).toEqual([expect.objectContaining({ nodeId: 'w', path: 'nodes[0].spec.until' })]);
  });
});

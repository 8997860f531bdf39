import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, publish, rejection, RUN_FIELDS, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * Signals sent to a run before any node waits for them are buffered, within per-run caps: a
 * caller cannot pile up unbounded rows and bytes on one run. Caps here: 3 signals, 2,000 bytes.
 */

const MAX_SIGNALS = 3;
const MAX_BYTES = 2000;
/** Run fields that would show any change: status, tasks, the last event's seq and the history. */
const STATE = `${RUN_FIELDS} seq history { seq type }`;

const send = (client: WeftClient, runId: string, name: string, payload?: unknown) =>
  client
    .request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, {
      i: payload === undefined ? { runId, name } : { runId, name, payload },
    })
    .then((r) => r.sendSignal.delivered as boolean);

/** A payload whose stored JSON text (`{"pad": "…"}`) is `bytes` long. */
const sized = (bytes: number) => ({ pad: 'x'.repeat(bytes - '{"pad": ""}'.length) });

const waitEvent = (id: string, event: string) => ({ node_id: id, type: 'WAIT_FOR_EVENT', spec: { event } });

describe('buffered signals are capped per run', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_MAX_BUFFERED_SIGNALS: MAX_SIGNALS, WEFT_MAX_BUFFERED_SIGNAL_BYTES: MAX_BYTES });
    ({ client } = await e2e.tenant('signal-caps'));
    // Parks on "go"; then takes four "item" signals in turn.
    await publish(client, 'gated', {
      nodes: [waitEvent('gate', 'go'), waitEvent('i1', 'item'), waitEvent('i2', 'item'), waitEvent('i3', 'item'), waitEvent('i4', 'item')],
      edges: [
        { from: 'gate', to: 'i1' },
        { from: 'i1', to: 'i2' },
        { from: 'i2', to: 'i3' },
        { from: 'i3', to: 'i4' },
      ],
    });
  });
  afterAll(() => e2e.close());

  const parked = async () => {
    const runId = await start(client, 'gated');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');
    return runId;
  };

  it('refuses the signal past the count cap with CONFLICT naming the run, the cap and the count, and changes nothing', async () => {
    const runId = await parked();
    for (let i = 0; i < MAX_SIGNALS; i++) expect(await send(client, runId, 'item', { n: i })).toBe(false);
    const before = await getRun(client, runId, STATE);

    const err = await rejection(send(client, runId, 'item', { n: 99 }));
    expect(err.code).toBe('CONFLICT');
    expect(err.message).toContain(`run ${runId}`);
    expect(err.message).toContain(`already buffers ${MAX_SIGNALS} signals`);
    expect(err.message).toContain(`the most a run may buffer is ${MAX_SIGNALS} signals`);
    expect(await getRun(client, runId, STATE)).toEqual(before);

    // The run still works: a signal a node waits for is delivered, not buffered, even now...
    expect(await send(client, runId, 'go')).toBe(true);
    // ...the waiters consume the buffered signals, oldest first, and the last one parks...
    const waiting = await waitRun(client, runId, (r) => task(r, 'i4')?.status === 'WAITING');
    expect([0, 1, 2].map((i) => task(waiting, `i${i + 1}`).output)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    // ...and gets the next signal sent.
    expect(await send(client, runId, 'item', { n: 3 })).toBe(true);
    const done = await waitRun(client, runId);
    expect(done.status).toBe('SUCCEEDED');
    expect(task(done, 'i4').output).toEqual({ n: 3 });
  });

  it('has room again once buffered signals are consumed', async () => {
    const runId = await parked();
    for (let i = 0; i < MAX_SIGNALS; i++) await send(client, runId, 'item', { n: i });
    expect((await rejection(send(client, runId, 'item'))).code).toBe('CONFLICT');
    expect(await send(client, runId, 'go')).toBe(true);
    await waitRun(client, runId, (r) => task(r, 'i4')?.status === 'WAITING');
    // The three were consumed; i4 waits for "item", so a "go" (gate's, taken already) is buffered again.
    expect(await send(client, runId, 'go')).toBe(false);
    expect(statuses(await getRun(client, runId))).toMatchObject({ gate: 'COMPLETED', i1: 'COMPLETED', i2: 'COMPLETED', i3: 'COMPLETED', i4: 'WAITING' });
  });

  it('refuses the signal whose payload would pass the byte cap, naming the bytes', async () => {
    const runId = await parked();
    expect(await send(client, runId, 'item', sized(900))).toBe(false);
    expect(await send(client, runId, 'item', sized(900))).toBe(false);
    const before = await getRun(client, runId, STATE);

    const err = await rejection(send(client, runId, 'item', sized(900)));
    expect(err.code).toBe('CONFLICT');
    expect(err.message).toContain(`run ${runId} already buffers 2 signals not yet consumed (1800 bytes of payload)`);
    expect(err.message).toContain(`its 900 bytes would exceed the ${MAX_BYTES} bytes`);
    expect(await getRun(client, runId, STATE)).toEqual(before);
    // A smaller one still fits.
    expect(await send(client, runId, 'item', sized(200))).toBe(false);
  });

  it('lets exactly the cap through when signals race on one run', async () => {
    const runId = await parked();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => send(client, runId, 'item', { n: i })));
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(accepted).toHaveLength(MAX_SIGNALS);
    expect(refused).toHaveLength(10 - MAX_SIGNALS);
    for (const r of refused) expect((r as PromiseRejectedResult).reason.code).toBe('CONFLICT');
  });
});

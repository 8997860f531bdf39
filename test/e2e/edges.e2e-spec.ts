import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

describe('conditional and error edges end to end', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('edges'));
    await publish(client, 'compensate-on-error', await readFile('examples/compensate-on-error.yaml', 'utf8'));
  });
  afterAll(() => e2e.close());

  it('compensates a charge that fails for good: the error edge runs, ship is skipped, the run succeeds', async () => {
    const run = await waitRun(client, await start(client, 'compensate-on-error', { order_id: 'A1', amount: 900 }));
    expect(run.status).toBe('SUCCEEDED');
    expect(statuses(run)).toEqual({ reserve_stock: 'COMPLETED', charge: 'FAILED', ship: 'SKIPPED', release_stock: 'COMPLETED' });
    expect(task(run, 'charge')).toMatchObject({ attempt: 0, branches: ['release_stock'] });
    expect(task(run, 'charge').error).toContain('card declined: amount 900 over the limit');
    const released = task(run, 'release_stock').output;
    expect(released.released).toBe('res-A1');
    expect(released.because).toBe(task(run, 'charge').error);
    expect(run.output).toEqual({ release_stock: released }); // the skipped sink contributes nothing
  });

  it('skips the compensation when the charge succeeds', async () => {
    const run = await waitRun(client, await start(client, 'compensate-on-error', { order_id: 'B2', amount: 100 }));
    expect(run.status).toBe('SUCCEEDED');
    expect(statuses(run)).toEqual({ reserve_stock: 'COMPLETED', charge: 'COMPLETED', ship: 'COMPLETED', release_stock: 'SKIPPED' });
    expect(task(run, 'charge').branches).toEqual(['ship']);
    expect(task(run, 'ship').output).toEqual({ shipped: true, reservation: 'res-B2' });
  });

  it('takes only the edges whose condition holds when a CODE node completes, and records them', async () => {
    await publish(client, 'conditional', {
      nodes: [
        jsNode('score', 'return {n: input.n};', { n: '{{input.n}}' }),
        jsNode('hi', 'return {side: "hi"};'),
        jsNode('lo', 'return {side: "lo"};'),
        jsNode('lo2', 'return {side: "lo2"};'),
      ],
      edges: [
        { from: 'score', to: 'hi', condition: '{{tasks.score.output.n > 1}}' },
        { from: 'score', to: 'lo', condition: '{{tasks.score.output.n <= 1}}' },
        { from: 'lo', to: 'lo2' },
      ],
    });
    const run = await waitRun(client, await start(client, 'conditional', { n: 5 }));
    expect(run.status).toBe('SUCCEEDED');
    expect(statuses(run)).toEqual({ score: 'COMPLETED', hi: 'COMPLETED', lo: 'SKIPPED', lo2: 'SKIPPED' });
    expect(task(run, 'score').branches).toEqual(['hi']);
  });

  it('fails the run when a node fails for good and no error edge is taken', async () => {
    await publish(client, 'unhandled', {
      nodes: [jsNode('boom', 'throw new Error("nope");'), jsNode('fix', 'return {fixed: true};')],
      edges: [{ from: 'boom', to: 'fix', on_error: true, condition: '{{tasks.boom.error.contains("timeout")}}' }],
    });
    const run = await waitRun(client, await start(client, 'unhandled'));
    expect(run.status).toBe('FAILED');
    expect(statuses(run)).toEqual({ boom: 'FAILED', fix: 'SKIPPED' });
    expect(task(run, 'boom').branches).toEqual([]);
  });
});

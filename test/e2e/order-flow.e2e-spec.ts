import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { RUN_FIELDS, TERMINAL, publish, start, startE2E, statuses, task, type E2E } from '../support/e2e-platform.js';

/** Follows a run over the runUpdated subscription until it ends; returns every update seen. */
async function follow(client: WeftClient, runId: string, onUpdate: (run: any) => void = () => {}): Promise<any[]> {
  const updates: any[] = [];
  await client.subscribe(`subscription($id: ID!) { runUpdated(runId: $id) { ${RUN_FIELDS} } }`, { id: runId }, (d: any) => {
    updates.push(d.runUpdated);
    onUpdate(d.runUpdated);
    return !TERMINAL.includes(d.runUpdated.status);
  }).done;
  return updates;
}

describe('the example order flow over HTTP and graphql-ws', () => {
  let e2e: E2E;
  let client: WeftClient;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client } = await e2e.tenant('orders'));
    await publish(client, 'order-flow', await readFile('examples/order-flow.yaml', 'utf8'));
  });
  afterAll(() => e2e.close());

  it('ships a small order at once, skipping the approval', async () => {
    const runId = await start(client, 'order-flow', { order_id: '1001' }, { config: { shop_url: e2e.shop.url } });
    const updates = await follow(client, runId);
    const final = updates.at(-1);

    expect(final.status).toBe('SUCCEEDED');
    expect(statuses(final)).toEqual({ fetch_order: 'COMPLETED', is_large: 'COMPLETED', approval: 'SKIPPED', ship: 'COMPLETED' });
    expect(task(final, 'ship').output).toEqual({ shipped: true, order: { order_id: '1001', total: 250, items: ['pallet'] } });
    expect(task(final, 'is_large').branches).toEqual(['ship']);
    expect(updates.length).toBeGreaterThan(1);
  });

  it('holds a large order for the approval signal, then ships it', async () => {
    const runId = await start(client, 'order-flow', { order_id: '2001' }, { config: { shop_url: e2e.shop.url } });
    let signalled: Promise<any> | undefined;
    const updates = await follow(client, runId, (run) => {
      const approval = task(run, 'approval');
      if (approval?.status === 'WAITING' && !signalled) {
        expect(approval.awaitedSignal).toBe('approve-2001');
        signalled = client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, {
          i: { runId, name: 'approve-2001', payload: { approved_by: 'ops' } },
        });
      }
    });
    expect(signalled).toBeDefined();
    expect((await signalled!).sendSignal.delivered).toBe(true);

    const final = updates.at(-1);
    expect(final.status).toBe('SUCCEEDED');
    expect(updates.some((u) => task(u, 'approval')?.status === 'WAITING')).toBe(true);
    expect(task(final, 'approval')).toMatchObject({ status: 'COMPLETED', output: { approved_by: 'ops' } });
    expect(task(final, 'ship').output.shipped).toBe(true);
    expect(task(final, 'ship').output.order.total).toBe(4200);
  });
});

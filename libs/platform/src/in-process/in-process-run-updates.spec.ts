import { describe, expect, it } from '@jest/globals';
import { PubSub } from 'graphql-subscriptions';
import { RunStatus, type RunUpdate } from '@weft/engine';
import { RUN_UPDATED_CHANNEL } from '../redis-run-updates.js';
import { InProcessRunUpdatePublisher, InProcessRunWatches } from './in-process-run-updates.js';

async function listen(pubsub: PubSub): Promise<unknown[]> {
  const got: unknown[] = [];
  await pubsub.subscribe(RUN_UPDATED_CHANNEL, (m: unknown) => void got.push(JSON.parse(m as string)));
  return got;
}

async function turns(n = 3): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

const update = (runId: string, status: RunStatus, seq: number): RunUpdate => ({ tenantId: 't', runId, status, seq });

describe('in-process run updates', () => {
  it('sends an update of a watched run, and the end of any run, on a later turn, in order', async () => {
    const pubsub = new PubSub();
    const watches = new InProcessRunWatches();
    const publisher = new InProcessRunUpdatePublisher(pubsub, watches);
    const got = await listen(pubsub);
    const release = await watches.add({ tenantId: 't', runId: 'r1' });
    expect(watches.hasEchoed({ tenantId: 't', runId: 'r1' })).toBe(true);
    await publisher.publish(update('r1', RunStatus.Running, 1));
    await publisher.publish(update('r2', RunStatus.Running, 1));
    await publisher.publish(update('r2', RunStatus.Succeeded, 2));
    expect(got).toEqual([]);
    await turns();
    expect(got).toEqual([[update('r1', RunStatus.Running, 1)], [update('r2', RunStatus.Succeeded, 2)]]);
    expect(publisher.skipped).toBe(1);
    release();
    await publisher.publish(update('r1', RunStatus.Running, 2));
    await turns();
    expect(got).toHaveLength(2);
  });

  it('counts watches: a tenant watch covers its runs; a run stays watched until its last watcher leaves', async () => {
    const watches = new InProcessRunWatches();
    const a = await watches.add({ tenantId: 't', runId: 'r' });
    const b = await watches.add({ tenantId: 't', runId: 'r' });
    a();
    a();
    expect(watches.watchingRun('t', 'r')).toBe(true);
    b();
    expect(watches.watching('t', 'r')).toBe(false);
    const all = await watches.add({ tenantId: 't' });
    expect(watches.watching('t', 'other')).toBe(true);
    expect(watches.watchingRun('t', 'other')).toBe(false);
    all();
    expect(watches.size).toBe(0);
  });
});

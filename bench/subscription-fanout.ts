/**
 * The work one API process does for live updates as subscriptions multiply: S `runChanged`
 * subscriptions of one tenant and S `runUpdated` subscriptions spread over R runs, fed R runs ×
 * U updates each through the run-update channel (an in-memory PubSub stands in for Redis; the
 * run loader returns a fixed object). Prints the service's counters (messages decoded, changes,
 * change records kept, run loads) and, for readers that never pull, the heap the pending changes
 * hold. No database, no Redis:
 *
 *   npx esbuild bench/subscription-fanout.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=dist/bench/subscription-fanout.mjs && node dist/bench/subscription-fanout.mjs [S] [R] [U]
 */
import { PubSub } from 'graphql-subscriptions';
import { RUN_UPDATED_CHANNEL } from '@weft/platform';
import { RunUpdatesService } from '@weft/api';

const [S = 1000, R = 40, U = 1] = process.argv.slice(2).map(Number);
const TENANT = '00000000-0000-7000-8000-000000000001';
const runId = (i: number) => `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`;

async function drained(subscribers: number, runs: number, updates: number): Promise<void> {
  const pubsub = new PubSub();
  const service = new RunUpdatesService(pubsub);
  const seqs = new Map<string, number>();
  const load = (id: string) => async () => ({ id, seq: seqs.get(id) ?? 0, status: 'RUNNING' }) as never;
  const changed = await Promise.all(Array.from({ length: subscribers }, () => service.watchTenant(TENANT)));
  const updated = await Promise.all(Array.from({ length: subscribers }, (_, i) => service.watch(TENANT, runId(i % runs), load(runId(i % runs)))));
  // Every reader pulls as fast as it can, as a connected client does.
  let received = 0;
  const pull = async (it: AsyncIterableIterator<unknown>) => {
    for (let r = await it.next(); !r.done; r = await it.next()) received++;
  };
  const readers = [...changed, ...updated].map(pull);
  const t0 = process.hrtime.bigint();
  for (let u = 1; u <= updates; u++) {
    for (let r = 0; r < runs; r++) {
      seqs.set(runId(r), u);
      await pubsub.publish(RUN_UPDATED_CHANNEL, JSON.stringify([{ tenantId: TENANT, runId: runId(r), status: 'RUNNING', seq: u }]));
      await new Promise((res) => setImmediate(res));
    }
  }
  await new Promise((res) => setTimeout(res, 50));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await Promise.all([...changed, ...updated].map((it) => it.return!()));
  await Promise.all(readers);
  const s = service.stats;
  console.log(
    `drained: ${subscribers} runChanged + ${subscribers} runUpdated subscriptions, ${runs} runs x ${updates} updates: ` +
      `${s.messages} messages decoded, ${s.changes} changes, ${s.changeRecords} change records kept, ${s.runLoads} run loads, ` +
      `${received} payloads delivered, ${ms.toFixed(0)} ms`,
  );
}

async function stalled(subscribers: number, runs: number): Promise<void> {
  const pubsub = new PubSub();
  const service = new RunUpdatesService(pubsub);
  const changed = await Promise.all(Array.from({ length: subscribers }, () => service.watchTenant(TENANT)));
  globalThis.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  for (let r = 0; r < runs; r++) {
    await pubsub.publish(RUN_UPDATED_CHANNEL, JSON.stringify([{ tenantId: TENANT, runId: runId(r), status: 'RUNNING', seq: 1 }]));
  }
  await new Promise((res) => setTimeout(res, 50));
  globalThis.gc?.();
  const heap = process.memoryUsage().heapUsed - heap0;
  const s = service.stats;
  console.log(
    `stalled: ${subscribers} runChanged subscriptions that never pull, ${runs} runs changed: ${s.changeRecords} change records kept, ` +
      `heap +${(heap / 1048576).toFixed(1)} MiB${globalThis.gc ? '' : ' (run node with --expose-gc for a steadier figure)'}`,
  );
  await Promise.all(changed.map((it) => it.return!()));
}

await drained(S, R, U);
await stalled(S, 2000);

import { describe, expect, it } from '@jest/globals';
import type { PubSubEngine } from 'graphql-subscriptions';
import type { RunWatchAnnouncer, Watch } from '@weft/platform';
import type { RunObject } from './run.object.js';
import { RunUpdatesService, type RunUpdatedPayload } from './run-updates.service.js';

const TENANT = '00000000-0000-4000-8000-000000000001';
const RUN = '00000000-0000-4000-8000-000000000002';

/** A pub/sub that only records its one subscriber: the tests announce nothing on it. */
function pubsub(): PubSubEngine {
  return { subscribe: async () => 1, unsubscribe: () => undefined, publish: async () => undefined } as unknown as PubSubEngine;
}

/** An announcer whose announcement comes back when `echo()` is called (or already has, with `echoed`). */
function announcer(echoed: boolean): RunWatchAnnouncer & { echo(): void } {
  let watch: Watch | undefined;
  const a = {
    onEcho: (_w: Watch) => undefined,
    async add(w: Watch) {
      watch = w;
      return () => undefined;
    },
    hasEchoed: () => echoed,
    echo() {
      a.onEcho(watch!);
    },
  };
  return a as unknown as RunWatchAnnouncer & { echo(): void };
}

/** The run as stored: `seq` moves as a test says; each `load` counts. */
function storedRun() {
  const s = { seq: 3, loads: 0, probes: 0 };
  return {
    s,
    load: async () => {
      s.loads++;
      return { id: RUN, tenantId: TENANT, seq: s.seq, status: 'RUNNING' } as unknown as RunObject;
    },
    probe: async () => {
      s.probes++;
      return s.seq;
    },
  };
}

/** Lets every queued callback and promise run. */
const settle = () => new Promise((r) => setTimeout(r, 10));

async function nextOrIdle(it: AsyncIterableIterator<RunUpdatedPayload>): Promise<RunUpdatedPayload | 'idle'> {
  const next = it.next().then((r) => r.value as RunUpdatedPayload);
  return Promise.race([next, settle().then(() => 'idle' as const)]);
}

describe("a watch's catch-up once its announcement comes back", () => {
  it('reads the run once when the announcement came back before the first read', async () => {
    const a = announcer(false);
    const service = new RunUpdatesService(pubsub(), a);
    const run = storedRun();
    const watching = service.watch(TENANT, RUN, run.load, undefined, run.probe);
    await settle();
    expect(run.s.loads).toBe(0); // the first read waits for the echo
    a.echo();
    const it = await watching;
    expect(((await it.next()).value as RunUpdatedPayload).runUpdated.seq).toBe(3);
    expect(await nextOrIdle(it)).toBe('idle');
    expect(run.s).toEqual({ seq: 3, loads: 1, probes: 0 });
    await it.return!();
  });

  it('checks the seq, and reads nothing, when the run has not moved since the first read', async () => {
    const a = announcer(true);
    const service = new RunUpdatesService(pubsub(), a);
    const run = storedRun();
    const it = await service.watch(TENANT, RUN, run.load, undefined, run.probe);
    expect(((await it.next()).value as RunUpdatedPayload).runUpdated.seq).toBe(3);
    a.echo();
    expect(await nextOrIdle(it)).toBe('idle');
    expect(run.s).toEqual({ seq: 3, loads: 1, probes: 1 });
    await it.return!();
  });

  it('reads the run again, and sends it, when a change was missed before the announcement came back', async () => {
    const a = announcer(true);
    const service = new RunUpdatesService(pubsub(), a);
    const run = storedRun();
    const it = await service.watch(TENANT, RUN, run.load, undefined, run.probe);
    expect(((await it.next()).value as RunUpdatedPayload).runUpdated.seq).toBe(3);
    run.s.seq = 5; // two events committed while publishers did not know the watch yet
    a.echo();
    const again = await nextOrIdle(it);
    expect(again === 'idle' ? again : again.runUpdated.seq).toBe(5);
    expect(run.s).toEqual({ seq: 5, loads: 2, probes: 1 });
    await it.return!();
  });
});

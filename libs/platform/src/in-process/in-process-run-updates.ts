import type { PubSubEngine } from 'graphql-subscriptions';
import { isRunTerminal, type RunUpdate, type RunUpdatePublisher } from '@weft/engine';
import { RUN_UPDATED_CHANNEL } from '../redis-run-updates.js';
import type { Watch, WatchAnnouncer } from '../run-watches.js';

function keyOf(tenantId: string, runId?: string): string {
  return runId === undefined ? `${tenantId}/*` : `${tenantId}/${runId}`;
}

/**
 * The watch registry of one process (`weft dev` without Redis): the API's subscribers register
 * here and the publisher reads the same counts, so a watch holds from the moment it is added
 * (announced and echoed at once: there is no other process to tell).
 */
export class InProcessRunWatches implements WatchAnnouncer {
  private readonly counts = new Map<string, number>();
  onEcho: (watch: Watch) => void = () => {};

  async add(watch: Watch): Promise<() => void> {
    const key = keyOf(watch.tenantId, watch.runId);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.counts.get(key) ?? 1) - 1;
      if (n > 0) this.counts.set(key, n);
      else this.counts.delete(key);
    };
  }

  hasEchoed(watch: Watch): boolean {
    return this.counts.has(keyOf(watch.tenantId, watch.runId));
  }

  /** A subscriber watches the run, or every run of its tenant. */
  watching(tenantId: string, runId: string): boolean {
    return this.counts.has(keyOf(tenantId, runId)) || this.counts.has(keyOf(tenantId));
  }

  /** A subscriber watches the run itself. */
  watchingRun(tenantId: string, runId: string): boolean {
    return this.counts.has(keyOf(tenantId, runId));
  }

  /** Watches held now (distinct), for tests. */
  get size(): number {
    return this.counts.size;
  }

  close(): void {
    this.counts.clear();
  }
}

/**
 * Run updates in one process: each update goes to `pubsub` (graphql-subscriptions' in-memory
 * PubSub, the API's subscription source) on {@link RUN_UPDATED_CHANNEL}, as the JSON array the
 * Redis publisher sends, on a later turn of the event loop (an event's commit never runs a
 * subscriber's code), in the order published. As over Redis, an update that does not end its run
 * goes out only while someone watches the run (`watches`); others are counted in `skipped`.
 */
export class InProcessRunUpdatePublisher implements RunUpdatePublisher {
  /** Updates dropped because nobody watched their run (they did not end it). */
  skipped = 0;

  constructor(
    private readonly pubsub: PubSubEngine,
    private readonly watches: InProcessRunWatches,
  ) {}

  watching(tenantId: string, runId: string): boolean {
    return this.watches.watching(tenantId, runId);
  }

  watchingRun(tenantId: string, runId: string): boolean {
    return this.watches.watchingRun(tenantId, runId);
  }

  async publish(update: RunUpdate): Promise<void> {
    if (!isRunTerminal(update.status) && !this.watching(update.tenantId, update.runId)) {
      this.skipped++;
      return;
    }
    const message = JSON.stringify([update]);
    setImmediate(() => void this.pubsub.publish(RUN_UPDATED_CHANNEL, message));
  }

  async close(): Promise<void> {}
}

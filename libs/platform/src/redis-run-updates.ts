import { Redis } from 'ioredis';
import { isRunTerminal, type RunUpdate, type RunUpdatePublisher } from '@weft/engine';

/** The Redis channel run updates travel on; the API's RedisPubSub subscribes to it. */
export const RUN_UPDATED_CHANNEL = 'weft.run-updated';

/** How long an update that does not end its run may wait for others to share its message (ms). */
export const RUN_UPDATE_COALESCE_MS = 20;

/** PUBLISHes waiting for Redis past which a message is dropped (Redis stalled: memory must not grow). */
const MAX_IN_FLIGHT = 1_000;

/**
 * Publishes run updates on Redis pub/sub so API subscribers in any process see changes made by
 * workers and schedulers (an in-memory PubSub reaches one process only). Message: the JSON array
 * of the {@link RunUpdate}s gathered since the previous message.
 *
 * `publish` never waits for Redis: an event's commit is not held up by a live update. Updates
 * that do not end their run wait up to `coalesceMs` and go out together, one per run (the one
 * with the highest `seq`: a watcher re-reads the run, so the latest announcement is all it
 * needs); an update that ends its run sends everything gathered at once. While Redis does not
 * answer, at most 1,000 messages wait for it; later ones are dropped and reported. A failure is
 * reported through `onError` and otherwise swallowed: a lost live update never loses data, the
 * run is in PostgreSQL.
 */
export class RedisRunUpdatePublisher implements RunUpdatePublisher {
  private readonly redis: Redis;
  private pending = new Map<string, RunUpdate>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;

  constructor(
    redisUrl: string,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly coalesceMs = RUN_UPDATE_COALESCE_MS,
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false });
    this.redis.on('error', () => {});
  }

  async publish(update: RunUpdate): Promise<void> {
    const key = `${update.tenantId}/${update.runId}`;
    const known = this.pending.get(key);
    // An event's update (with its seq) makes a watcher read the run anyway: it wins over one without.
    if (!known || (update.seq !== undefined && (known.seq === undefined || known.seq <= update.seq))) this.pending.set(key, update);
    if (isRunTerminal(update.status) || this.coalesceMs <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.coalesceMs);
  }

  /** Sends what is gathered, in one PUBLISH; resolves when Redis answered (or the send failed). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return Promise.resolve();
    const updates = [...this.pending.values()];
    this.pending = new Map();
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.onError(new Error(`Redis has not answered ${this.inFlight} run-update messages: ${updates.length} update(s) dropped`));
      return Promise.resolve();
    }
    this.inFlight++;
    return this.redis.publish(RUN_UPDATED_CHANNEL, JSON.stringify(updates)).then(
      () => {
        this.inFlight--;
      },
      (err: unknown) => {
        this.inFlight--;
        this.onError(err);
      },
    );
  }

  /** Sends what is gathered (waiting at most 1 s for Redis), then closes the connection. */
  async close(): Promise<void> {
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, 1_000).unref())]);
    this.redis.disconnect();
  }
}

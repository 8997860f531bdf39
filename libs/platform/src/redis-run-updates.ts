import { Redis } from 'ioredis';
import { isRunTerminal, type RunUpdate, type RunUpdatePublisher } from '@weft/engine';
import { type RunWatchSet } from './run-watches.js';

/** The Redis channel run updates travel on; the API's RedisPubSub subscribes to it. */
export const RUN_UPDATED_CHANNEL = 'weft.run-updated';

/** How long an update that does not end its run may wait for others to share its message (ms). */
export const RUN_UPDATE_COALESCE_MS = 20;

/** PUBLISHes waiting for Redis past which a message is dropped (Redis stalled: memory must not grow). */
const MAX_IN_FLIGHT = 1_000;

/** Changes of one run gathered for one message at most; past it they go as one update without a change (watchers read the run). */
const MAX_CHANGES_PER_RUN = 64;

/**
 * Publishes run updates on Redis pub/sub so API subscribers in any process see changes made by
 * workers and schedulers (an in-memory PubSub reaches one process only). Message: the JSON array
 * of the {@link RunUpdate}s gathered since the previous message.
 *
 * Only what someone needs goes out: an update that ends its run always (bench drivers and tests
 * learn run ends from the channel), any other only for a run {@link watching} says is watched
 * (`watches`, the registry of API subscribers; without it, every run counts as watched). Others
 * are dropped at once and counted in `skipped`.
 *
 * `publish` never waits for Redis: an event's commit is not held up by a live update. Updates
 * that do not end their run wait up to `coalesceMs` and go out together: of each run, every
 * update carrying a change, in seq order (a watcher applies each to the state it holds), or else
 * the one with the highest `seq` (a watcher re-reads the run, so the latest announcement is all
 * it needs); an update that ends its run sends everything gathered at once. While Redis does not
 * answer, at most 1,000 messages wait for it; later ones are dropped and reported. A failure is
 * reported through `onError` and otherwise swallowed: a lost live update never loses data, the
 * run is in PostgreSQL.
 */
export class RedisRunUpdatePublisher implements RunUpdatePublisher {
  private readonly redis: Redis;
  private pending = new Map<string, RunUpdate[]>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  /** Updates dropped because nobody watched their run (they did not end it). */
  skipped = 0;

  constructor(
    redisUrl: string,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly coalesceMs = RUN_UPDATE_COALESCE_MS,
    private readonly watches?: RunWatchSet,
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false });
    this.redis.on('error', () => {});
    watches?.start().catch((err: unknown) => onError(err));
  }

  /** Whether an update of the run that does not end it goes out now (see {@link RunWatchSet.watching}). */
  watching(tenantId: string, runId: string): boolean {
    return this.watches ? this.watches.watching(tenantId, runId) : true;
  }

  /** Whether the run itself is watched: its updates then carry their change (see {@link RunWatchSet.watchingRun}). */
  watchingRun(tenantId: string, runId: string): boolean {
    return this.watches ? this.watches.watchingRun(tenantId, runId) : true;
  }

  async publish(update: RunUpdate): Promise<void> {
    const terminal = isRunTerminal(update.status);
    if (!terminal && !this.watching(update.tenantId, update.runId)) {
      this.skipped++;
      return;
    }
    const key = `${update.tenantId}/${update.runId}`;
    const known = this.pending.get(key);
    if (!known) this.pending.set(key, [update]);
    else gather(known, update);
    if (terminal || this.coalesceMs <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.coalesceMs);
  }

  /** Sends what is gathered, in one PUBLISH; resolves when Redis answered (or the send failed). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return Promise.resolve();
    const updates = [...this.pending.values()].flat();
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

  /** Sends what is gathered (waiting at most 1 s for Redis), then closes the connections. */
  async close(): Promise<void> {
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, 1_000).unref())]);
    this.redis.disconnect();
    this.watches?.close();
  }
}

/**
 * Adds `update` to the updates of its run gathered so far (`list`, in seq order). Updates with a
 * change follow one another (too many: the last goes alone, without its change). Anything else
 * makes watchers read the run, so the run's updates become one without a change: the one with
 * the highest seq (an update without a seq, from outside an event, only when no event's is
 * gathered). One older than a gathered update is dropped.
 */
function gather(list: RunUpdate[], update: RunUpdate): void {
  const events = list.filter((u) => u.seq !== undefined);
  const reread = list.some((u) => !u.change) || update.seq === undefined || !update.change || list.length >= MAX_CHANGES_PER_RUN;
  let next = update.seq !== undefined && !events.some((u) => u.seq! >= update.seq!) ? [...events, update] : events;
  if (next.length === 0) next = [update];
  if (reread) next = [bare(next[next.length - 1]!)];
  list.splice(0, list.length, ...next);
}

function bare(u: RunUpdate): RunUpdate {
  const { change: _dropped, ...rest } = u;
  return rest;
}

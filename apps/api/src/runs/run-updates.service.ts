import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { PubSubEngine } from 'graphql-subscriptions';
import { RunStatus, WeftError } from '@weft/engine';
import { RUN_UPDATED_CHANNEL } from '@weft/platform';
import { REDIS_PUBSUB } from '../api.tokens.js';
import type { RunChangedPayload } from './run-change.object.js';
import type { RunObject } from './run.object.js';
import { TenantChangeFeed } from './tenant-change-stream.js';

/** What `runUpdated` yields: the payload's root field. */
export interface RunUpdatedPayload {
  runUpdated: RunObject;
}

/** The work {@link RunUpdatesService} has done since it started, and who it serves now. */
export interface RunUpdateStats {
  /** Messages decoded from the run-update channel. */
  messages: number;
  /** Run changes they carried. */
  changes: number;
  /** Changes kept for `runChanged` subscribers: at most one per change, however many subscribe. */
  changeRecords: number;
  /** Runs read from the database for `runUpdated` subscribers. */
  runLoads: number;
  /** `runChanged` subscribers now. */
  tenantSubscribers: number;
  /** `runUpdated` subscribers now. */
  runSubscribers: number;
}

/**
 * Fans the one Redis channel of run updates (JSON arrays of `{tenantId, runId, status, seq}`,
 * published by the coordinator after its commits) out to the subscribers of each (tenant, run). The
 * channel is subscribed once, on the first watcher, and each message is decoded once. The
 * subscribers of one run in this process share one {@link RunChannel}: an update is read from the
 * database once for all of them. The `runChanged` subscribers of one tenant share one
 * {@link TenantChangeFeed}: a change is kept once for all of them, each reading it at its pace.
 */
@Injectable()
export class RunUpdatesService implements OnModuleDestroy {
  private readonly log = new Logger('RunUpdates');
  private readonly channels = new Map<string, RunChannel>();
  /** The `runChanged` feed of each tenant with subscribers in this process. */
  private readonly tenants = new Map<string, TenantChangeFeed>();
  private subscription?: Promise<number>;
  private readonly counts = { messages: 0, changes: 0, changeRecords: 0, runLoads: 0 };

  constructor(@Inject(REDIS_PUBSUB) private readonly pubsub: PubSubEngine) {}

  /** What has been done so far (counters) and who is subscribed now. */
  get stats(): RunUpdateStats {
    let tenantSubscribers = 0;
    for (const feed of this.tenants.values()) tenantSubscribers += feed.subscribers;
    let runSubscribers = 0;
    for (const channel of this.channels.values()) runSubscribers += channel.streams.size;
    return { ...this.counts, tenantSubscribers, runSubscribers };
  }

  /**
   * A stream of the run's state: first as it is now, then re-read after each update. Updates
   * that arrive while the subscriber is still busy are coalesced (it always gets the latest
   * state, never a stale one). The Redis subscription is in place before the first read, so no
   * commit can fall between the two. `load` throws for an unknown run, before anything is
   * returned; the first watcher's `load` serves every watcher of the run while it has any (the
   * object it returns is shared by them: memoize its lazy fields there, see RunsService.loadShared).
   */
  async watch(tenantId: string, runId: string, load: () => Promise<RunObject>): Promise<AsyncIterableIterator<RunUpdatedPayload>> {
    const key = `${tenantId}/${runId}`;
    let channel = this.channels.get(key);
    if (!channel) {
      const counted = () => {
        this.counts.runLoads++;
        return load();
      };
      this.channels.set(key, (channel = new RunChannel(counted)));
    }
    const ch = channel;
    const stream = new RunStream(ch, () => this.remove(key, ch, stream));
    ch.streams.add(stream);
    try {
      await this.subscribe();
      await stream.prime();
    } catch (err) {
      this.remove(key, ch, stream);
      throw err;
    }
    return stream;
  }

  /**
   * A stream of every change to the tenant's runs (see {@link TenantChangeStream}), from the
   * moment the Redis subscription is in place: nothing is replayed.
   */
  async watchTenant(tenantId: string): Promise<AsyncIterableIterator<RunChangedPayload>> {
    let feed = this.tenants.get(tenantId);
    if (!feed) {
      const created = new TenantChangeFeed(() => {
        if (this.tenants.get(tenantId) === created) this.tenants.delete(tenantId);
      });
      this.tenants.set(tenantId, (feed = created));
    }
    const stream = feed.open();
    try {
      await this.subscribe();
    } catch (err) {
      await stream.return();
      throw err;
    }
    return stream;
  }

  async onModuleDestroy(): Promise<void> {
    this.channels.clear();
    this.tenants.clear();
    await closePubSub(this.pubsub);
  }

  private subscribe(): Promise<number> {
    this.subscription ??= this.pubsub.subscribe(RUN_UPDATED_CHANNEL, (msg: unknown) => this.dispatch(msg), {}).catch((err: unknown) => {
      this.subscription = undefined;
      this.log.warn(`cannot subscribe to ${RUN_UPDATED_CHANNEL}: ${String(err)}`);
      throw new WeftError('TRANSIENT', 'run updates are unavailable');
    });
    return this.subscription;
  }

  /** A message is an array of updates (or one update, as older publishers sent them); anything else is dropped. */
  private dispatch(msg: unknown): void {
    this.counts.messages++;
    const parsed = typeof msg === 'string' ? safeParse(msg) : msg;
    for (const u of Array.isArray(parsed) ? parsed : [parsed]) {
      const m = u as { tenantId?: unknown; runId?: unknown; seq?: unknown; status?: unknown } | undefined;
      if (!m || typeof m.tenantId !== 'string' || typeof m.runId !== 'string') continue;
      const seq = typeof m.seq === 'number' ? m.seq : undefined;
      this.counts.changes++;
      this.channels.get(`${m.tenantId}/${m.runId}`)?.notify(seq);
      const feed = this.tenants.get(m.tenantId);
      if (feed && seq !== undefined && RUN_STATUSES.has(m.status) && feed.push({ runId: m.runId, status: m.status as RunStatus, seq })) {
        this.counts.changeRecords++;
      }
    }
  }

  private remove(key: string, channel: RunChannel, stream: RunStream): void {
    channel.streams.delete(stream);
    if (channel.streams.size === 0 && this.channels.get(key) === channel) this.channels.delete(key);
  }
}

/**
 * The watchers of one run in this process. `read()` returns the state read after the latest
 * announcement: the first caller starts the read, the others (until the next announcement) get
 * the same promise, hence the same object.
 */
class RunChannel {
  readonly streams = new Set<RunStream>();
  private announcements = 0;
  private latest?: { after: number; run: Promise<RunObject> };

  constructor(private readonly load: () => Promise<RunObject>) {}

  notify(seq: number | undefined): void {
    this.announcements++;
    for (const s of this.streams) s.notify(seq);
  }

  read(): Promise<RunObject> {
    if (this.latest && this.latest.after === this.announcements) return this.latest.run;
    const latest = { after: this.announcements, run: this.load() };
    this.latest = latest;
    latest.run.catch(() => {
      if (this.latest === latest) this.latest = undefined;
    });
    return latest.run;
  }
}

/** Closes a RedisPubSub's two connections without waiting for Redis (it may be gone). */
async function closePubSub(pubsub: PubSubEngine): Promise<void> {
  const redis = pubsub as PubSubEngine & { getSubscriber?: () => { disconnect(): void }; getPublisher?: () => { disconnect(): void } };
  if (redis.getSubscriber && redis.getPublisher) {
    redis.getSubscriber().disconnect();
    redis.getPublisher().disconnect();
    return;
  }
  const closable = pubsub as PubSubEngine & { close?: () => Promise<unknown> };
  await closable.close?.()?.catch?.(() => undefined);
}

const RUN_STATUSES = new Set<unknown>(Object.values(RunStatus));

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A pull-based iterator over a run's state. `notify` marks it dirty (remembering the highest
 * seq announced); `next` waits until dirty, then reads the run once. An announcement whose seq
 * is not newer than the state already sent is skipped. `return` ends it at once, even while a
 * `next` is waiting (an async generator could not).
 */
class RunStream implements AsyncIterableIterator<RunUpdatedPayload> {
  private first?: RunObject;
  private sentSeq = -1;
  private pendingSeq: number | undefined | null = null; // null: nothing pending; undefined: pending, seq unknown
  private wake?: () => void;
  private done = false;

  constructor(
    private readonly channel: RunChannel,
    private readonly unregister: () => void,
  ) {}

  /** Reads the current state, to be sent first; throws (NOT_FOUND…) before the stream is handed out. */
  async prime(): Promise<void> {
    this.first = await this.channel.read();
  }

  notify(seq: number | undefined): void {
    if (this.done) return;
    if (this.pendingSeq === null) this.pendingSeq = seq;
    else if (this.pendingSeq !== undefined) this.pendingSeq = seq === undefined ? undefined : Math.max(this.pendingSeq, seq);
    this.wake?.();
  }

  async next(): Promise<IteratorResult<RunUpdatedPayload>> {
    if (this.first) {
      const run = this.first;
      this.first = undefined;
      this.sentSeq = run.seq;
      return { value: { runUpdated: run }, done: false };
    }
    while (!this.done) {
      if (this.pendingSeq === null) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const announced = this.pendingSeq;
      this.pendingSeq = null;
      if (announced !== undefined && announced <= this.sentSeq) continue;
      let run: RunObject;
      try {
        run = await this.channel.read();
      } catch (err) {
        await this.return(); // graphql-ws drops a failed iterator without calling return()
        throw err;
      }
      if (this.done) break;
      if (run.seq < this.sentSeq) continue;
      this.sentSeq = run.seq;
      return { value: { runUpdated: run }, done: false };
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<RunUpdatedPayload>> {
    if (!this.done) {
      this.done = true;
      this.unregister();
      this.wake?.();
    }
    return { value: undefined, done: true };
  }

  async throw(err?: unknown): Promise<IteratorResult<RunUpdatedPayload>> {
    await this.return();
    throw err;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<RunUpdatedPayload> {
    return this;
  }
}

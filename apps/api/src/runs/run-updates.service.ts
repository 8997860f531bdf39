import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import type { PubSubEngine } from 'graphql-subscriptions';
import { RunStatus, WeftError, type RunChange } from '@weft/engine';
import { RUN_UPDATED_CHANNEL, type Watch, type WatchAnnouncer } from '@weft/platform';
import { REDIS_PUBSUB, RUN_WATCHES } from '../api.tokens.js';
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
  /** Changes applied to a run's shared state without reading it. */
  runPatches: number;
  /** `runChanged` subscribers now. */
  tenantSubscribers: number;
  /** `runUpdated` subscribers now. */
  runSubscribers: number;
}

/**
 * Fans the one Redis channel of run updates (JSON arrays of `{tenantId, runId, status, seq,
 * change?}`, published by the coordinator after its commits) out to the subscribers of each
 * (tenant, run). The channel is subscribed once, on the first watcher, and each message is
 * decoded once. The subscribers of one run in this process share one {@link RunChannel}: an
 * update is applied to (or else read from the database for) all of them once. The `runChanged`
 * subscribers of one tenant share one {@link TenantChangeFeed}: a change is kept once for all of
 * them, each reading it at its pace.
 *
 * Publishers send updates that do not end a run only for watched runs, so each watch is
 * announced (RunWatchAnnouncer: the first subscriber of a run, or of a tenant's feed) before the
 * first read, and renewed while it lasts.
 */
@Injectable()
export class RunUpdatesService implements OnModuleDestroy {
  private readonly log = new Logger('RunUpdates');
  private readonly channels = new Map<string, RunChannel>();
  /** The `runChanged` feed of each tenant with subscribers in this process. */
  private readonly tenants = new Map<string, TenantChangeFeed>();
  private subscription?: Promise<number>;
  private readonly counts = { messages: 0, changes: 0, changeRecords: 0, runLoads: 0, runPatches: 0 };

  constructor(
    @Inject(REDIS_PUBSUB) private readonly pubsub: PubSubEngine,
    @Optional() @Inject(RUN_WATCHES) private readonly watches?: WatchAnnouncer,
  ) {
    if (watches) watches.onEcho = (w) => this.echoed(w);
  }

  /** What has been done so far (counters) and who is subscribed now. */
  get stats(): RunUpdateStats {
    let tenantSubscribers = 0;
    for (const feed of this.tenants.values()) tenantSubscribers += feed.subscribers;
    let runSubscribers = 0;
    for (const channel of this.channels.values()) runSubscribers += channel.streams.size;
    return { ...this.counts, tenantSubscribers, runSubscribers };
  }

  /**
   * A stream of the run's state: first as it is now, then after each update, with the change
   * the update carries applied to it (`patch`, see RunsService.patchShared), else read again.
   * Updates that arrive while the subscriber is still busy are coalesced (it always gets the
   * latest state, never a stale one). `load` throws for an unknown run, before anything is
   * returned; the first watcher's `load` serves every watcher of the run while it has any (the
   * object it returns is shared by them: memoize its lazy fields there, see RunsService.loadShared).
   *
   * What a subscriber is guaranteed: the Redis subscription and the watch's announcement are in
   * place before the first read, which waits (at most 1 s) for the announcement to come back on
   * the watch channel (Redis has then sent it to every publisher). A publisher that has not
   * learnt of the watch yet drops updates that do not end the run; they are caught up by a read
   * whenever an update's seq is not the next one after the state held, and, when the
   * announcement came back after the first read, by a check of the run's seq then (a read only
   * when it moved past the state held). So every change after the first
   * payload is sent in seq order or covered by a later payload, and the run's end always is; a
   * change dropped after that read, by a publisher still applying the announcement, shows with
   * the run's next update (its seq leaves a gap).
   */
  async watch(
    tenantId: string,
    runId: string,
    load: () => Promise<RunObject>,
    patch?: (run: RunObject, change: RunChange) => RunObject | undefined,
    probe?: () => Promise<number | undefined>,
  ): Promise<AsyncIterableIterator<RunUpdatedPayload>> {
    const key = `${tenantId}/${runId}`;
    let channel = this.channels.get(key);
    if (!channel) {
      const counted = () => {
        this.counts.runLoads++;
        return load();
      };
      const patched = patch
        ? (run: RunObject, change: RunChange) => {
            const next = patch(run, change);
            if (next) this.counts.runPatches++;
            return next;
          }
        : undefined;
      this.channels.set(key, (channel = new RunChannel(counted, patched, probe)));
    }
    const ch = channel;
    const stream = new RunStream(ch, () => this.remove(key, ch, stream));
    ch.streams.add(stream);
    try {
      await this.subscribe();
      ch.watched ??= this.announce({ tenantId, runId });
      // The first read waits for the announcement to come back: publishers then hold the watch,
      // so no change after the read is dropped and none needs a second read to catch up.
      if ((await bounded(ch.watched)) && !this.watches?.hasEchoed({ tenantId, runId })) await bounded(ch.echo);
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
    let release: Promise<(() => void) | undefined> | undefined;
    if (!feed) {
      const created = new TenantChangeFeed(() => {
        if (this.tenants.get(tenantId) === created) this.tenants.delete(tenantId);
        void release?.then((r) => r?.());
      });
      this.tenants.set(tenantId, (feed = created));
      release = this.announce({ tenantId });
    }
    const stream = feed.open();
    try {
      await this.subscribe();
      if (release) await bounded(release);
    } catch (err) {
      await stream.return();
      throw err;
    }
    return stream;
  }

  async onModuleDestroy(): Promise<void> {
    this.channels.clear();
    this.tenants.clear();
    this.watches?.close();
    await closePubSub(this.pubsub);
  }

  /**
   * Announces `w` (see RunWatchAnnouncer); resolves its release. Never rejects: a watch that
   * could not be announced still gets its run's end, and every update the publishers send anyway.
   */
  private announce(w: Watch): Promise<(() => void) | undefined> {
    if (!this.watches) return Promise.resolve(undefined);
    return this.watches.add(w).catch((err: unknown) => {
      this.log.warn(`cannot announce a watch of ${w.runId ? `run ${w.runId}` : `tenant ${w.tenantId}`}: ${String(err)}`);
      return undefined;
    });
  }

  /** Our announcement of `w` came back: every publisher has been sent it; catch up what was dropped before. */
  private echoed(w: Watch): void {
    if (w.runId !== undefined) this.channels.get(`${w.tenantId}/${w.runId}`)?.echoed();
  }

  private subscribe(): Promise<number> {
    this.subscription ??= this.pubsub
      .subscribe(RUN_UPDATED_CHANNEL, (msg: unknown) => this.dispatch(msg), {})
      .catch((err: unknown) => {
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
      const m = u as { tenantId?: unknown; runId?: unknown; seq?: unknown; status?: unknown; change?: unknown } | undefined;
      if (!m || typeof m.tenantId !== 'string' || typeof m.runId !== 'string') continue;
      const seq = typeof m.seq === 'number' ? m.seq : undefined;
      this.counts.changes++;
      const change = seq !== undefined && isChange(m.change, seq) ? m.change : undefined;
      this.channels.get(`${m.tenantId}/${m.runId}`)?.notify(seq, change);
      const feed = this.tenants.get(m.tenantId);
      if (feed && seq !== undefined && RUN_STATUSES.has(m.status) && feed.push({ runId: m.runId, status: m.status as RunStatus, seq })) {
        this.counts.changeRecords++;
      }
    }
  }

  private remove(key: string, channel: RunChannel, stream: RunStream): void {
    channel.streams.delete(stream);
    if (channel.streams.size === 0 && this.channels.get(key) === channel) {
      this.channels.delete(key);
      channel.watched?.then(
        (release) => release?.(),
        () => undefined,
      );
    }
  }
}

/** A change as publishers send it (its shape checked where it is cheap: the rest is the coordinator's). */
function isChange(c: unknown, seq: number): c is RunChange {
  const x = c as Partial<RunChange> | undefined;
  return !!x && x.seq === seq && typeof x.at === 'string' && !!x.run && Array.isArray(x.tasks) && !!x.event;
}

/**
 * The watchers of one run in this process. `read()` returns the state after the latest
 * announcement: the first caller starts the read, the others (until the next announcement) get
 * the same promise, hence the same object. An announcement that carries the change from the
 * state held (read and at the previous announcement) to the next seq is applied to it at once
 * (`patch`): no read. One that carries a change already in the state held changes nothing.
 */
class RunChannel {
  readonly streams = new Set<RunStream>();
  /** The watch's announcement: resolves to its release (undefined without an announcer). */
  watched?: Promise<(() => void) | undefined>;
  private announcements = 0;
  private latest?: { after: number; run: Promise<RunObject>; value?: RunObject };
  private heard!: () => void;
  /** Resolves when the watch's announcement came back ({@link echoed}). */
  readonly echo = new Promise<void>((resolve) => (this.heard = resolve));

  constructor(
    private readonly load: () => Promise<RunObject>,
    private readonly patch?: (run: RunObject, change: RunChange) => RunObject | undefined,
    /** The run's seq now (a one-row read), checked before a recheck reads the whole run. */
    private readonly probe?: () => Promise<number | undefined>,
  ) {}

  notify(seq: number | undefined, change?: RunChange): void {
    this.announcements++;
    if (change) this.apply(change);
    for (const s of this.streams) s.notify(seq);
  }

  /** The watch's announcement came back: catch up what publishers dropped before ({@link recheck}). */
  echoed(): void {
    this.heard();
    this.recheck();
  }

  /**
   * Reads the run again for its watchers, who get it only if its seq is newer than what they
   * have. With a `probe`, the run's seq is read first: when the state held by then (read, or
   * patched since) is at it or later, nothing was missed and nothing is read. A change committed
   * after the probe is announced like any other (the watch is known to every publisher by now).
   */
  recheck(): void {
    const held = this.latest;
    if (!this.probe || !held?.value || held.after !== this.announcements) return this.reread();
    this.probe().then(
      (now) => {
        // Patches apply changes in seq order only (a gap reads the run): a state held at `now`
        // or later holds every change up to it, even one announced while the probe ran.
        const current = this.latest?.value;
        if (now === undefined || !current || current.seq < now) this.reread();
      },
      () => this.reread(),
    );
  }

  private reread(): void {
    this.announcements++;
    for (const s of this.streams) s.recheck();
  }

  private apply(change: RunChange): void {
    const held = this.latest;
    if (!held?.value || held.after !== this.announcements - 1) return;
    if (change.seq <= held.value.seq) {
      held.after = this.announcements; // already in the state held
      return;
    }
    const next = this.patch?.(held.value, change);
    if (next) this.latest = { after: this.announcements, run: Promise.resolve(next), value: next };
  }

  read(): Promise<RunObject> {
    if (this.latest && this.latest.after === this.announcements) return this.latest.run;
    const latest: { after: number; run: Promise<RunObject>; value?: RunObject } = { after: this.announcements, run: this.load() };
    this.latest = latest;
    latest.run.then(
      (value) => (latest.value = value),
      () => {
        if (this.latest === latest) this.latest = undefined;
      },
    );
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

/** How long a subscription waits for its watch's announcement before it reads the run anyway (ms). */
const ANNOUNCE_WAIT_MS = 1_000;

/** `p`, or nothing after {@link ANNOUNCE_WAIT_MS} (Redis slow or gone: the echo's read catches up later). */
function bounded(p: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise((r) => (timer = setTimeout(r, ANNOUNCE_WAIT_MS)))]).finally(() => clearTimeout(timer));
}

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
  /** A read is due that is sent only when it is newer than what was sent ({@link recheck}). */
  private rechecking = false;
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

  /** Asks for one read, sent only if its seq is newer than the state sent (the catch-up after a watch is announced). */
  recheck(): void {
    if (this.done) return;
    this.rechecking = true;
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
      if (this.pendingSeq === null && !this.rechecking) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const onlyNewer = this.pendingSeq === null;
      this.rechecking = false;
      const announced: number | undefined = onlyNewer ? this.sentSeq + 1 : (this.pendingSeq as number | undefined);
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
      if (run.seq < this.sentSeq || (onlyNewer && run.seq === this.sentSeq)) continue;
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

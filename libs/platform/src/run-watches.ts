import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * The Redis channel on which API processes announce what their subscribers watch, and on which a
 * run-update publisher that starts asks them to announce it again.
 */
export const RUN_WATCHES_CHANNEL = 'weft.run-watches';

/** How long an announced watch holds unless announced again (ms). */
export const WATCH_LEASE_MS = 30_000;

/** How often an API process announces its watches again (ms): a third of the lease. */
export const WATCH_RENEW_MS = 10_000;

/**
 * What a publisher that knows no watches yet publishes after subscribing to the channel (ms):
 * every update, while the API processes answer its hello (they do at once).
 */
export const WATCH_HELLO_GRACE_MS = 1_000;

/** Watches one publisher keeps at most; past it, a tenant's further runs count as all watched ({@link RunWatchSet}). */
export const WATCH_MAX_ENTRIES = 10_000;

/** Runs of one tenant a publisher keeps at most; past it the whole tenant counts as watched. */
export const WATCH_MAX_RUNS_PER_TENANT = 1_000;

/** One watch: a run of a tenant, or (without `runId`) every run of the tenant (`runChanged`). */
export interface Watch {
  tenantId: string;
  runId?: string;
}

/**
 * A message on {@link RUN_WATCHES_CHANNEL} (JSON): `watch` announces (or renews) watches for
 * `leaseMs` from its receipt; `unwatch` ends them early; `hello` asks every announcer to announce
 * all its watches now. `from` is the sender's process id (an announcer learns its own echo).
 */
export type WatchMessage =
  { type: 'watch'; from: string; leaseMs: number; watches: Watch[] } | { type: 'unwatch'; from: string; watches: Watch[] } | { type: 'hello'; from: string };

function parse(text: string): WatchMessage | undefined {
  try {
    const m = JSON.parse(text) as { type?: unknown; from?: unknown; leaseMs?: unknown; watches?: unknown[] } | null;
    if (!m || typeof m !== 'object' || typeof m.from !== 'string') return undefined;
    if (m.type === 'hello') return { type: 'hello', from: m.from };
    if ((m.type === 'watch' || m.type === 'unwatch') && Array.isArray(m.watches)) {
      const watches = (m.watches as Partial<Watch>[]).filter(
        (w): w is Watch => !!w && typeof w.tenantId === 'string' && (w.runId === undefined || typeof w.runId === 'string'),
      );
      if (m.type === 'unwatch') return { type: 'unwatch', from: m.from, watches };
      const leaseMs = typeof m.leaseMs === 'number' && m.leaseMs > 0 ? Math.min(m.leaseMs, 10 * WATCH_LEASE_MS) : WATCH_LEASE_MS;
      return { type: 'watch', from: m.from, leaseMs, watches };
    }
  } catch {
    // not ours: dropped
  }
  return undefined;
}

/** The watches of one tenant a publisher knows: expiry times (ms since the epoch). */
interface TenantWatches {
  /** A `runChanged` subscriber's, or the fallback when the tenant has too many runs watched. */
  all: number;
  runs: Map<string, number>;
}

/**
 * The publisher's side of the watch registry: which runs someone watches, learnt from
 * {@link RUN_WATCHES_CHANNEL}. On start it subscribes and sends `hello`; until then, and for
 * {@link WATCH_HELLO_GRACE_MS} after, {@link watching} answers true for every run (it cannot know
 * yet). A watch holds until its lease (from the message's receipt) ends or an `unwatch` ends it;
 * expired entries are dropped when looked up and when the set is full.
 *
 * Bounded: at most {@link WATCH_MAX_RUNS_PER_TENANT} runs of one tenant (past it the tenant counts
 * as wholly watched until the lease of the watch that overflowed ends) and
 * {@link WATCH_MAX_ENTRIES} entries in all (past it, a new tenant counts as wholly watched: one
 * entry). A hostile tenant's many subscriptions cost its runs their publishing savings, never the
 * worker's memory. While Redis is unreachable the set keeps what it knew (leases then run out:
 * updates that do not end a run stop, as if nobody watched; the run's end is always published).
 */
export class RunWatchSet {
  private readonly tenants = new Map<string, TenantWatches>();
  private entries = 0;
  private readonly redis: Redis;
  private readonly id = randomUUID();
  /** Until when every run counts as watched (ms since the epoch): a fresh start, or no subscription. */
  private blindUntil = Number.POSITIVE_INFINITY;
  /** Until when every run counts as watched because the set is full. */
  private overflowUntil = 0;
  private subscribed = false;
  private starting?: Promise<void>;

  constructor(
    redisUrl: string,
    private readonly limits = { maxEntries: WATCH_MAX_ENTRIES, maxRunsPerTenant: WATCH_MAX_RUNS_PER_TENANT, graceMs: WATCH_HELLO_GRACE_MS },
    private readonly now: () => number = Date.now,
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.redis.on('error', () => {});
    this.redis.on('message', (_channel: string, text: string) => this.receive(text));
    // Cut off, it cannot learn of new watches: every run counts as watched until it is back.
    this.redis.on('close', () => (this.blindUntil = Number.POSITIVE_INFINITY));
    // Back: subscribed again (commands on one connection keep their order), it asks again.
    this.redis.on('ready', () => {
      if (this.subscribed)
        void this.redis.subscribe(RUN_WATCHES_CHANNEL).then(
          () => this.hello(),
          () => undefined,
        );
    });
  }

  /** Subscribes, then says hello (once); resolves once subscribed (or rejects when Redis cannot be reached; it keeps trying). */
  start(): Promise<void> {
    this.starting ??= (async () => {
      await this.redis.connect().catch(() => undefined);
      await this.redis.subscribe(RUN_WATCHES_CHANNEL);
      this.subscribed = true;
      await this.hello();
    })();
    return this.starting;
  }

  private async hello(): Promise<void> {
    const pub = this.redis.duplicate({ lazyConnect: false });
    pub.on('error', () => {});
    try {
      await pub.publish(RUN_WATCHES_CHANNEL, JSON.stringify({ type: 'hello', from: this.id } satisfies WatchMessage));
      this.blindUntil = Math.min(this.blindUntil, this.now() + this.limits.graceMs);
    } catch {
      // unreachable: stays blind (publishes everything) until a hello goes out
    } finally {
      pub.disconnect();
    }
  }

  /** True when an update of run `runId` of `tenantId` that does not end it would reach a watcher (see the class). */
  watching(tenantId: string, runId: string): boolean {
    const now = this.now();
    if (now < this.blindUntil || now < this.overflowUntil) return true;
    const t = this.tenants.get(tenantId);
    if (!t) return false;
    if (t.all > now) return true;
    const until = t.runs.get(runId);
    if (until === undefined) return false;
    if (until > now) return true;
    t.runs.delete(runId);
    this.entries--;
    return false;
  }

  /**
   * True when run `runId` itself has a watcher (a `runUpdated` subscriber), or the set cannot
   * tell (a fresh start, no subscription, full): its updates then carry what changed.
   */
  watchingRun(tenantId: string, runId: string): boolean {
    const now = this.now();
    if (now < this.blindUntil || now < this.overflowUntil) return true;
    const t = this.tenants.get(tenantId);
    return t !== undefined && (t.runs.get(runId) ?? 0) > now;
  }

  /** Entries kept now (tenants and runs), for tests and metrics. */
  get size(): number {
    return this.entries;
  }

  /** Applies one message of the channel (exposed for tests). */
  receive(text: string): void {
    const m = parse(text);
    if (!m) return;
    if (m.type === 'hello') return;
    const now = this.now();
    for (const w of m.watches) {
      if (m.type === 'unwatch') this.drop(w);
      else this.add(w, now + m.leaseMs, now);
    }
  }

  private add(w: Watch, until: number, now: number): void {
    let t = this.tenants.get(w.tenantId);
    if (!t) {
      if (this.entries >= this.limits.maxEntries) this.sweep(now);
      if (this.entries >= this.limits.maxEntries) {
        // Full of other tenants' live watches: every run counts as watched until this lease ends.
        this.overflowUntil = Math.max(this.overflowUntil, until);
        return;
      }
      t = { all: 0, runs: new Map() };
      this.tenants.set(w.tenantId, t);
      this.entries++;
    }
    if (w.runId === undefined) {
      t.all = Math.max(t.all, until);
      return;
    }
    const known = t.runs.get(w.runId);
    if (known !== undefined) {
      t.runs.set(w.runId, Math.max(known, until));
      return;
    }
    if (t.runs.size >= this.limits.maxRunsPerTenant || this.entries >= this.limits.maxEntries) {
      this.sweep(now);
      if (t.runs.size >= this.limits.maxRunsPerTenant || this.entries >= this.limits.maxEntries) {
        // Over the cap: the tenant counts as wholly watched, at the cost of one number.
        t.all = Math.max(t.all, until);
        return;
      }
    }
    t.runs.set(w.runId, until);
    this.entries++;
  }

  private drop(w: Watch): void {
    const t = this.tenants.get(w.tenantId);
    if (!t) return;
    if (w.runId === undefined) t.all = 0;
    else if (t.runs.delete(w.runId)) this.entries--;
  }

  /** Drops every expired entry. */
  private sweep(now: number): void {
    for (const [tenantId, t] of this.tenants) {
      for (const [runId, until] of t.runs) {
        if (until <= now) {
          t.runs.delete(runId);
          this.entries--;
        }
      }
      if (t.runs.size === 0 && t.all <= now) {
        this.tenants.delete(tenantId);
        this.entries--;
      }
    }
  }

  close(): void {
    this.redis.disconnect();
  }
}

/**
 * What the API's run-update service needs of a watch registry: RunWatchAnnouncer over Redis, or
 * the in-process registry of `weft dev` without Redis.
 */
export interface WatchAnnouncer {
  /** Called when this process's announcement of `watch` reached every publisher. */
  onEcho: (watch: Watch) => void;
  /** Registers one subscriber's watch; resolves its release. */
  add(watch: Watch): Promise<() => void>;
  /** Whether `watch` is held and every publisher knows it. */
  hasEchoed(watch: Watch): boolean;
  close(): void;
}

/**
 * The API's side of the watch registry: announces the watches of this process's subscribers on
 * {@link RUN_WATCHES_CHANNEL} when the first subscriber of one arrives, again every
 * {@link WATCH_RENEW_MS} (the lease is {@link WATCH_LEASE_MS}) and at once when a publisher says
 * hello; ends one with `unwatch` when its last subscriber leaves, and announces again at once a
 * watch another process ended that this one still holds. `onEcho(watch)` is called when this
 * process's first announcement of a watch (or the first after another's `unwatch`) comes back on
 * the channel: Redis has then sent it to every publisher subscribed (each applies it on its next turn).
 */
export class RunWatchAnnouncer implements WatchAnnouncer {
  private readonly counts = new Map<string, { watch: Watch; n: number; echoed: boolean }>();
  private readonly sub: Redis;
  private readonly pub: Redis;
  private readonly id = randomUUID();
  private timer?: NodeJS.Timeout;
  private started?: Promise<void>;
  onEcho: (watch: Watch) => void = () => {};

  constructor(
    redisUrl: string,
    private readonly leaseMs = WATCH_LEASE_MS,
    private readonly renewMs = WATCH_RENEW_MS,
  ) {
    this.sub = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.sub.on('error', () => {});
    this.sub.on('message', (_c: string, text: string) => this.receive(text));
    this.pub = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
    this.pub.on('error', () => {});
  }

  /** Subscribes to the channel (once); rejects when Redis cannot be reached. */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.sub.connect().catch(() => undefined);
      await this.sub.subscribe(RUN_WATCHES_CHANNEL);
      this.timer = setInterval(() => void this.announce([...this.counts.values()].map((c) => c.watch)), this.renewMs);
      this.timer.unref();
    })().catch((err: unknown) => {
      this.started = undefined;
      throw err;
    });
    return this.started;
  }

  /** Registers one subscriber's watch; returns its release. The first of a watch is announced at once. */
  async add(watch: Watch): Promise<() => void> {
    await this.start();
    const key = keyOf(watch);
    const known = this.counts.get(key);
    if (known) known.n++;
    else {
      this.counts.set(key, { watch, n: 1, echoed: false });
      await this.announce([watch]);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const c = this.counts.get(key);
      if (!c || --c.n > 0) return;
      this.counts.delete(key);
      void this.send({ type: 'unwatch', from: this.id, watches: [watch] });
    };
  }

  /** Whether `watch` is held and its announcement has come back (every publisher has been sent it). */
  hasEchoed(watch: Watch): boolean {
    return this.counts.get(keyOf(watch))?.echoed === true;
  }

  /** Watches held now (distinct), for tests. */
  get size(): number {
    return this.counts.size;
  }

  private receive(text: string): void {
    const m = parse(text);
    if (!m) return;
    if (m.type === 'hello') void this.announce([...this.counts.values()].map((c) => c.watch));
    else if (m.type === 'unwatch' && m.from !== this.id) {
      // Another process stopped watching what this one still watches: publishers dropped it, so
      // announce it again at once; its echo catches up what they dropped meanwhile.
      const again = m.watches.map((w) => this.counts.get(keyOf(w))).filter((c) => c !== undefined);
      for (const c of again) c.echoed = false;
      if (again.length) void this.announce(again.map((c) => c.watch));
    } else if (m.type === 'watch' && m.from === this.id) {
      for (const w of m.watches) {
        const c = this.counts.get(keyOf(w));
        if (c && !c.echoed) {
          c.echoed = true;
          this.onEcho(w);
        }
      }
    }
  }

  private async announce(watches: Watch[]): Promise<void> {
    // Batches of 500: one message stays small however many runs this process watches.
    for (let i = 0; i < watches.length; i += 500) await this.send({ type: 'watch', from: this.id, leaseMs: this.leaseMs, watches: watches.slice(i, i + 500) });
  }

  private async send(m: WatchMessage): Promise<void> {
    await this.pub.publish(RUN_WATCHES_CHANNEL, JSON.stringify(m)).catch(() => undefined);
  }

  close(): void {
    clearInterval(this.timer);
    this.sub.disconnect();
    this.pub.disconnect();
  }
}

function keyOf(w: Watch): string {
  return w.runId === undefined ? `${w.tenantId}/*` : `${w.tenantId}/${w.runId}`;
}

import type { RunChangeObject, RunChangedPayload } from './run-change.object.js';

/**
 * Most changes a tenant's feed keeps for its slowest `runChanged` subscriber; a subscriber
 * further behind skips the oldest (the feed then drops half of them at once).
 */
export const TENANT_STREAM_PENDING_MAX = 10_000;

/**
 * The changes to one tenant's runs in this process, kept once for all its `runChanged`
 * subscribers ({@link TenantChangeStream}s, each a cursor into it): an update is stored once and
 * costs nothing per subscriber but waking those waiting. A change older (lower seq) than the
 * run's newest one known is dropped. The log keeps changes until every subscriber has read past
 * them, at most {@link TENANT_STREAM_PENDING_MAX}.
 */
export class TenantChangeFeed {
  /** The changes from position {@link base} on. */
  private readonly log: RunChangeObject[] = [];
  private base = 0;
  /** Each run's newest change: its position in the log. */
  private readonly newest = new Map<string, number>();
  private readonly streams = new Set<TenantChangeStream>();
  private readonly waiting = new Set<() => void>();

  constructor(private readonly onEmpty: () => void) {}

  /** Subscribers reading the feed now. */
  get subscribers(): number {
    return this.streams.size;
  }

  /** Position of the next change to arrive. */
  get head(): number {
    return this.base + this.log.length;
  }

  /** Position of the oldest change kept. */
  get tail(): number {
    return this.base;
  }

  /** A new subscriber, reading from the next change on. */
  open(): TenantChangeStream {
    const stream = new TenantChangeStream(this, this.head, () => {
      this.streams.delete(stream);
      if (this.streams.size === 0) this.onEmpty();
    });
    this.streams.add(stream);
    return stream;
  }

  /** Keeps `change` (unless the run already has a newer one) and wakes the subscribers waiting; true when kept. */
  push(change: RunChangeObject): boolean {
    const known = this.newest.get(change.runId);
    if (known !== undefined && this.at(known).seq > change.seq) return false;
    this.newest.set(change.runId, this.head);
    this.log.push(change);
    if (this.log.length > TENANT_STREAM_PENDING_MAX) this.trim();
    const wake = [...this.waiting];
    this.waiting.clear();
    for (const w of wake) w();
    return true;
  }

  /** The change at `pos` (between {@link tail} and {@link head}). */
  at(pos: number): RunChangeObject {
    return this.log[pos - this.base]!;
  }

  /** Position of the run's newest change. */
  newestOf(runId: string): number {
    return this.newest.get(runId)!;
  }

  /** Calls `wake` once, at the next {@link push}, unless {@link cancel}led first. */
  wait(wake: () => void): void {
    this.waiting.add(wake);
  }

  cancel(wake: () => void): void {
    this.waiting.delete(wake);
  }

  /** Drops what every subscriber has read, and at least the older half when that is not enough. */
  private trim(): void {
    let read = this.head;
    for (const s of this.streams) read = Math.min(read, s.position);
    const until = Math.max(read, this.head - TENANT_STREAM_PENDING_MAX / 2);
    for (let pos = this.base; pos < until; pos++) {
      const runId = this.at(pos).runId;
      if (this.newest.get(runId) === pos) this.newest.delete(runId);
    }
    this.log.splice(0, until - this.base);
    this.base = until;
  }
}

/**
 * A pull-based iterator over the changes to a tenant's runs, a cursor into its
 * {@link TenantChangeFeed}. A slow subscriber gets each run that changed once, in its latest
 * state, in the order the runs first changed since it last read them, never a backlog of stale
 * ones: at a run's first change it has not read, it is sent the run's newest change, and the
 * run's later changes up to that one are skipped. One more than
 * {@link TENANT_STREAM_PENDING_MAX} changes behind, it skips the oldest. `return` ends it at
 * once, even while a `next` is waiting.
 */
export class TenantChangeStream implements AsyncIterableIterator<RunChangedPayload> {
  /** Runs sent ahead of the cursor: the position of the change sent. */
  private readonly sentAhead = new Map<string, number>();
  private wake?: () => void;
  private done = false;

  constructor(
    private readonly feed: TenantChangeFeed,
    private cursor: number,
    private readonly unregister: () => void,
  ) {}

  /** Position of the next change this subscriber reads. */
  get position(): number {
    return this.cursor;
  }

  async next(): Promise<IteratorResult<RunChangedPayload>> {
    while (!this.done) {
      if (this.cursor < this.feed.tail) this.skipTo(this.feed.tail);
      if (this.cursor < this.feed.head) {
        const pos = this.cursor++;
        const { runId } = this.feed.at(pos);
        const sent = this.sentAhead.get(runId);
        if (sent !== undefined) {
          if (pos === sent) this.sentAhead.delete(runId);
          if (pos <= sent) continue;
        }
        const newest = this.feed.newestOf(runId);
        if (newest > pos) this.sentAhead.set(runId, newest);
        return { value: { runChanged: this.feed.at(newest) }, done: false };
      }
      let wake!: () => void;
      await new Promise<void>((resolve) => {
        this.wake = wake = resolve;
        this.feed.wait(resolve);
      });
      this.feed.cancel(wake); // woken by return(), not by the feed
      this.wake = undefined;
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<RunChangedPayload>> {
    if (!this.done) {
      this.done = true;
      this.sentAhead.clear();
      this.unregister();
      this.wake?.();
    }
    return { value: undefined, done: true };
  }

  async throw(err?: unknown): Promise<IteratorResult<RunChangedPayload>> {
    await this.return();
    throw err;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<RunChangedPayload> {
    return this;
  }

  /** Past the changes the feed dropped: forgets the runs sent ahead of them. */
  private skipTo(pos: number): void {
    this.cursor = pos;
    for (const [runId, sent] of this.sentAhead) if (sent < pos) this.sentAhead.delete(runId);
  }
}

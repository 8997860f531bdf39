import type { RunChangeObject, RunChangedPayload } from './run-change.object.js';

/** Most runs a slow `runChanged` subscriber may have pending; past it the oldest pending change is dropped. */
export const TENANT_STREAM_PENDING_MAX = 10_000;

/**
 * A pull-based iterator over the changes to a tenant's runs. Changes not yet pulled are kept
 * one per run, the newest (highest seq) only, in the order their runs first changed: a slow
 * subscriber gets every run that changed, in its latest state, never a backlog of stale ones.
 * At most {@link TENANT_STREAM_PENDING_MAX} runs are kept. `return` ends it at once, even while
 * a `next` is waiting.
 */
export class TenantChangeStream implements AsyncIterableIterator<RunChangedPayload> {
  private readonly pending = new Map<string, RunChangeObject>();
  private wake?: () => void;
  private done = false;

  constructor(private readonly unregister: () => void) {}

  push(change: RunChangeObject): void {
    if (this.done) return;
    const known = this.pending.get(change.runId);
    if (known && known.seq > change.seq) return;
    if (!known && this.pending.size >= TENANT_STREAM_PENDING_MAX) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(change.runId, change);
    this.wake?.();
  }

  async next(): Promise<IteratorResult<RunChangedPayload>> {
    while (!this.done) {
      const first = this.pending.entries().next();
      if (!first.done) {
        const [runId, change] = first.value;
        this.pending.delete(runId);
        return { value: { runChanged: change }, done: false };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<RunChangedPayload>> {
    if (!this.done) {
      this.done = true;
      this.pending.clear();
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
}

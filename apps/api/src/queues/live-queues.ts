import type { WorkerRegistryRepository } from '@weft/persistence';

/** How long one read of the live workers' queues answers for (ms): a page of tasks asks once. */
const LIVE_QUEUES_TTL_MS = 1_000;

/**
 * The queues the live workers serve now (a draining worker takes no more jobs, so it serves
 * none), read from the workers table at most once per {@link LIVE_QUEUES_TTL_MS}.
 */
export class LiveQueues {
  private cached?: { at: number; queues: Promise<Set<string>> };

  constructor(private readonly registry: Pick<WorkerRegistryRepository, 'live'>) {}

  /** The served queues; a failed read is forgotten, not kept for the next caller. */
  served(now = Date.now()): Promise<Set<string>> {
    if (this.cached && now - this.cached.at < LIVE_QUEUES_TTL_MS) return this.cached.queues;
    const queues = this.registry.live().then((live) => new Set(live.filter((w) => w.drainingSince === null).flatMap((w) => w.queues)));
    const entry = { at: now, queues };
    this.cached = entry;
    queues.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return queues;
  }
}

import { Logger, type OnApplicationShutdown } from '@nestjs/common';

/** Rows a poll claims at most per query, so one busy tenant cannot hold a poll for long. */
export const BATCH = 200;

/**
 * One scheduler job on its own timer: {@link pollOnce} every `intervalMs`, the next poll timed
 * from the end of the last one, so polls of one job never overlap. A failed poll is logged as a
 * warning and the loop goes on. Shutdown stops the loop and waits for the poll in flight, which
 * stops between two batches.
 */
export abstract class IntervalPoller implements OnApplicationShutdown {
  private readonly log = new Logger('scheduler');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  protected stopped = false;

  protected constructor(
    /** What the poller does, for its log lines (`due timers`). */
    readonly job: string,
    private readonly intervalMs: number,
  ) {}

  /** Runs one poll now; resolves how many rows it handled. */
  abstract pollOnce(): Promise<number>;

  /** Starts polling every `intervalMs`. */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Runs `batch(BATCH)` until a batch comes back short or the poller stops; resolves the total. */
  protected async drain(batch: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (let n = BATCH; n === BATCH && !this.stopped;) total += n = await batch(BATCH);
    return total;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pollOnce()
        .then(() => undefined)
        .catch((err) => this.log.warn(`${this.job} poll failed: ${(err as Error).message}`))
        .finally(() => this.schedule());
    }, this.intervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

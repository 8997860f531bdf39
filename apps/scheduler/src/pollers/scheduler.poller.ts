import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, WEFT_CONFIG, type WeftConfig } from '@weft/platform';

/** Rows each poll claims at most, so one busy tenant cannot hold a poll for long. */
const BATCH = 200;

/**
 * Polls for due timers (WAIT wake-ups, WAIT_FOR_EVENT timeouts), for outbox rows that were
 * committed but not enqueued and for worker tasks whose lease expired while their job is gone
 * from Redis (DESIGN §4, issue 4), every `WEFT_SCHEDULER_INTERVAL_MS`; "due" and "expired" are
 * by the database's clock. Safe with several replicas: the coordinator claims rows with
 * `FOR UPDATE SKIP LOCKED` and fencing drops duplicates.
 */
@Injectable()
export class SchedulerPoller implements OnApplicationShutdown {
  private readonly log = new Logger('scheduler');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly coordinator: RunCoordinator,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    private readonly queues: BullTaskQueues,
  ) {}

  /** Starts polling. */
  start(): void {
    this.stopped = false;
    this.schedule();
    this.log.log(`polling every ${this.config.schedulerIntervalMs} ms`);
  }

  /**
   * Runs one poll now: fires due timers, relays the outbox, each until drained, then sweeps one
   * batch of expired leases (an indexed query; a claimed task's lease is pushed ahead, so the
   * next poll takes the next batch), re-dispatching the tasks whose job is gone.
   */
  async pollOnce(): Promise<{ timers: number; relayed: number; redispatched: number }> {
    let timers = 0;
    let relayed = 0;
    for (let n = BATCH; n === BATCH && !this.stopped; ) timers += n = await this.coordinator.timers.fireDue(BATCH);
    for (let n = BATCH; n === BATCH && !this.stopped; ) relayed += n = await this.coordinator.outbox.relay(BATCH);
    const redispatched = this.stopped ? 0 : await this.coordinator.lostTasks.sweep(BATCH, this.queues);
    return { timers, relayed, redispatched };
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pollOnce()
        .then(() => undefined)
        .catch((err) => this.log.warn(`poll failed: ${(err as Error).message}`))
        .finally(() => this.schedule());
    }, this.config.schedulerIntervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

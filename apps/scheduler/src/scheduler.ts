import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { JobProbe } from '@weft/engine';
import type { RunCoordinator } from '@weft/engine/coordinator';
import type { Database } from '@weft/persistence';
import { logStartLine, WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { DueTimersPoller } from './pollers/due-timers.poller.js';
import { LostTaskSweepPoller } from './pollers/lost-task-sweep.poller.js';
import { OutboxRelayPoller } from './pollers/outbox-relay.poller.js';
import { RunBatchesPoller } from './pollers/run-batches.poller.js';
import { RunRetentionPoller } from './pollers/run-retention.poller.js';
import { SchedulesPoller } from './pollers/schedules.poller.js';
import { WebhookDeliveriesPoller } from './pollers/webhook-deliveries.poller.js';

/**
 * The scheduler's pollers, each on its own timer: every `WEFT_SCHEDULER_INTERVAL_MS` due
 * timers, schedules, the outbox relay, the lost-task sweep, bulk actions and webhook deliveries;
 * once a minute run retention. Safe with several replicas: the coordinator
 * claims rows with `FOR UPDATE SKIP LOCKED` and fencing drops duplicates.
 */
@Injectable()
export class Scheduler {
  private readonly log = new Logger('scheduler');

  constructor(
    readonly timers: DueTimersPoller,
    readonly outbox: OutboxRelayPoller,
    readonly sweep: LostTaskSweepPoller,
    readonly schedules: SchedulesPoller,
    readonly retention: RunRetentionPoller,
    readonly batches: RunBatchesPoller,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    @Optional() readonly webhooks?: WebhookDeliveriesPoller,
  ) {}

  /**
   * The pollers over `coordinator`, outside Nest; `probe` tells whether a task's job is still in
   * Redis. Webhook deliveries are sent only when `ds` is given.
   */
  static create(coordinator: RunCoordinator, config: WeftConfig, probe: JobProbe, ds?: Database): Scheduler {
    return new Scheduler(
      new DueTimersPoller(coordinator.timers, config),
      new OutboxRelayPoller(coordinator.outbox, config),
      new LostTaskSweepPoller(coordinator.lostTasks, config, probe),
      new SchedulesPoller(coordinator.schedules, config),
      new RunRetentionPoller(coordinator.retention, config),
      new RunBatchesPoller(coordinator.batches, config),
      config,
      ds ? new WebhookDeliveriesPoller(ds, config) : undefined,
    );
  }

  /** Starts the pollers. */
  start(): void {
    const pollers = this.pollers();
    for (const poller of pollers) poller.start();
    logStartLine(this.log, this.config, `polling every ${this.config.schedulerIntervalMs} ms: ${pollers.map((p) => p.job).join(', ')}`);
  }

  /**
   * Stops every poller and waits for the polls in flight: what Nest does at shutdown, for a
   * scheduler made outside Nest ({@link create}).
   */
  async stop(): Promise<void> {
    await Promise.all(this.pollers().map((p) => p.onApplicationShutdown()));
  }

  private pollers() {
    return [this.timers, this.schedules, this.outbox, this.sweep, this.retention, this.batches, ...(this.webhooks ? [this.webhooks] : [])];
  }

  /** One poll of each, one after the other: timers, schedules and the outbox until drained, then one sweep batch. */
  async pollOnce(): Promise<{ timers: number; schedules: number; relayed: number; redispatched: number }> {
    const timers = await this.timers.pollOnce();
    const schedules = await this.schedules.pollOnce();
    const relayed = await this.outbox.pollOnce();
    const redispatched = await this.sweep.pollOnce();
    return { timers, schedules, relayed, redispatched };
  }
}

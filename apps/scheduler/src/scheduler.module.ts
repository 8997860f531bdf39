import { Module } from '@nestjs/common';
import { DueTimersPoller } from './pollers/due-timers.poller.js';
import { RunBatchesPoller } from './pollers/run-batches.poller.js';
import { LostTaskSweepPoller } from './pollers/lost-task-sweep.poller.js';
import { OutboxRelayPoller } from './pollers/outbox-relay.poller.js';
import { RunRetentionPoller } from './pollers/run-retention.poller.js';
import { SchedulesPoller } from './pollers/schedules.poller.js';
import { WebhookDeliveriesPoller } from './pollers/webhook-deliveries.poller.js';
import { Scheduler } from './scheduler.js';

/** The scheduler: due timers, schedules, the outbox relay, the lost-task sweep, run retention, bulk actions and webhook deliveries. Needs CoreModule imported beside it. */
@Module({
  providers: [
    DueTimersPoller,
    OutboxRelayPoller,
    LostTaskSweepPoller,
    SchedulesPoller,
    RunRetentionPoller,
    RunBatchesPoller,
    WebhookDeliveriesPoller,
    Scheduler,
  ],
  exports: [Scheduler],
})
export class SchedulerModule {}

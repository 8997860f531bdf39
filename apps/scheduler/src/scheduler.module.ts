import { Module } from '@nestjs/common';
import { SchedulerPoller } from './pollers/scheduler.poller.js';

/** The scheduler: due timers, the outbox relay and the lease sweep. Needs CoreModule imported beside it. */
@Module({ providers: [SchedulerPoller], exports: [SchedulerPoller] })
export class SchedulerModule {}

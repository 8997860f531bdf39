export { SchedulerAppModule } from './scheduler-app.module.js';
export { SchedulerModule } from './scheduler.module.js';
export { Scheduler } from './scheduler.js';
export { DueTimersPoller } from './pollers/due-timers.poller.js';
export { OutboxRelayPoller } from './pollers/outbox-relay.poller.js';
export { LostTaskSweepPoller } from './pollers/lost-task-sweep.poller.js';
export { SchedulesPoller } from './pollers/schedules.poller.js';
export { RunRetentionPoller } from './pollers/run-retention.poller.js';

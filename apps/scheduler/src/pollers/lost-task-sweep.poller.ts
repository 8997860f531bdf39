import { Inject, Injectable } from '@nestjs/common';
import { type JobProbe } from '@weft/engine';
import { LostTaskSweep } from '@weft/engine/coordinator';
import { TaskQueues, WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { BATCH, IntervalPoller } from './interval-poller.js';

/**
 * Re-dispatches worker tasks whose lease expired (by the database's clock) while their job is
 * gone from its queue (Redis, or this process's queues without Redis). One batch per poll, not a drain: a claimed task's lease is pushed ahead, so
 * the next poll takes the next batch, and the count is of tasks re-dispatched, not examined.
 */
@Injectable()
export class LostTaskSweepPoller extends IntervalPoller {
  constructor(
    private readonly lostTasks: LostTaskSweep,
    @Inject(WEFT_CONFIG) config: WeftConfig,
    @Inject(TaskQueues) private readonly probe: JobProbe,
  ) {
    super('lost-task sweep', config.schedulerIntervalMs);
  }

  async pollOnce(): Promise<number> {
    return this.stopped ? 0 : this.lostTasks.sweep(BATCH, this.probe);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { ScheduleFires } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/**
 * Fires the schedules that have work by the database's clock (a nominal time due, a buffered fire
 * whose blocking run ended, a backfill to go on), until none is left. Each schedule's runs and its
 * next fire time commit in one transaction, so replicas racing or a retry after a crash fire each
 * nominal time once.
 */
@Injectable()
export class SchedulesPoller extends IntervalPoller {
  constructor(
    private readonly schedules: ScheduleFires,
    @Inject(WEFT_CONFIG) config: WeftConfig,
  ) {
    super('schedules', config.schedulerIntervalMs);
  }

  pollOnce(): Promise<number> {
    return this.drain((limit) => this.schedules.fireDue(limit));
  }
}

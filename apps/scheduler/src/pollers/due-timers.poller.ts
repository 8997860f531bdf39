import { Inject, Injectable } from '@nestjs/common';
import { DueTimers } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/** Fires the timers that are due by the database's clock (WAIT wake-ups, WAIT_FOR_EVENT timeouts), until none is left. */
@Injectable()
export class DueTimersPoller extends IntervalPoller {
  constructor(
    private readonly timers: DueTimers,
    @Inject(WEFT_CONFIG) config: WeftConfig,
  ) {
    super('due timers', config.schedulerIntervalMs);
  }

  pollOnce(): Promise<number> {
    return this.drain((limit) => this.timers.fireDue(limit));
  }
}

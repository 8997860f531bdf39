import { Inject, Injectable } from '@nestjs/common';
import { OutboxRelay } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/** Passes fair dispatch over every queue with ready backlog, until a pass admits less than a batch. */
@Injectable()
export class OutboxRelayPoller extends IntervalPoller {
  constructor(
    private readonly outbox: OutboxRelay,
    @Inject(WEFT_CONFIG) config: WeftConfig,
  ) {
    super('outbox relay', config.schedulerIntervalMs);
  }

  pollOnce(): Promise<number> {
    return this.drain((limit) => this.outbox.relay(limit));
  }
}

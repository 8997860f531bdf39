import { Inject, Injectable } from '@nestjs/common';
import { OutboxRelay } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/** Enqueues the outbox rows that were committed but never reached Redis, until none is left. */
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

import { Inject, Injectable } from '@nestjs/common';
import { RunRetention } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/** How often run retention passes, ms, unless the scheduler's interval is longer: run trees expire by the day. */
export const RETENTION_EVERY_MS = 60_000;

/**
 * Deletes the run trees of tenants with a retention whose root ended longer ago than it, by the
 * database's clock: a pass a minute, in bounded batches taken round-robin by tenant and cut after
 * a few seconds (the rest waits for the next pass). Replicas skip each other's locked trees.
 */
@Injectable()
export class RunRetentionPoller extends IntervalPoller {
  constructor(
    private readonly retention: RunRetention,
    @Inject(WEFT_CONFIG) config: WeftConfig,
  ) {
    super('run retention', Math.max(RETENTION_EVERY_MS, config.schedulerIntervalMs));
  }

  async pollOnce(): Promise<number> {
    return this.stopped ? 0 : (await this.retention.sweep()).runs;
  }
}

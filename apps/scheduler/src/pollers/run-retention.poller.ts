import { Inject, Injectable } from '@nestjs/common';
import { RunRetention } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/**
 * Deletes the run trees of tenants with a retention whose root ended longer ago than it, by the
 * database's clock: a pass every `WEFT_RETENTION_INTERVAL_MS` (a minute), in bounded batches
 * taken round-robin by tenant and cut after a few seconds (the rest waits for the next pass).
 * Replicas skip each other's locked trees.
 */
@Injectable()
export class RunRetentionPoller extends IntervalPoller {
  constructor(
    private readonly retention: RunRetention,
    @Inject(WEFT_CONFIG) config: WeftConfig,
  ) {
    // Configurations built by hand for a test may leave it out: a minute, as by default.
    super('run retention', config.retentionIntervalMs ?? 60_000);
  }

  async pollOnce(): Promise<number> {
    return this.stopped ? 0 : (await this.retention.sweep()).runs;
  }
}

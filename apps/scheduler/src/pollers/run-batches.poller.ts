import { Inject, Injectable } from '@nestjs/common';
import { RunBatches } from '@weft/engine/coordinator';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { IntervalPoller } from './interval-poller.js';

/**
 * Works through the bulk actions (createRunBatch): every `WEFT_SCHEDULER_INTERVAL_MS`, each
 * running batch whose next slice is due acts on at most `WEFT_BATCH_RUNS_PER_SECOND` of its runs,
 * then waits a second. Replicas skip each other's leased batches.
 */
@Injectable()
export class RunBatchesPoller extends IntervalPoller {
  constructor(
    private readonly batches: RunBatches,
    @Inject(WEFT_CONFIG) config: WeftConfig,
  ) {
    super('run batches', config.schedulerIntervalMs);
  }

  async pollOnce(): Promise<number> {
    return this.stopped ? 0 : this.batches.processDue();
  }
}

import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Database } from '@weft/persistence';
import { WEFT_CONFIG, WeftMetrics, type WeftConfig } from '@weft/platform';
import { DataSource } from 'typeorm';
import { WebhookSender } from '../webhooks/webhook-sender.js';
import { IntervalPoller } from './interval-poller.js';

/**
 * Sends webhook deliveries: every `WEFT_SCHEDULER_INTERVAL_MS`, the due ones (see
 * {@link WebhookSender}), at most 50 a poll. Replicas skip each other's leased deliveries.
 */
@Injectable()
export class WebhookDeliveriesPoller extends IntervalPoller {
  private readonly sender: WebhookSender;

  constructor(@Inject(DataSource) ds: Database, @Inject(WEFT_CONFIG) config: WeftConfig, @Optional() metrics?: WeftMetrics) {
    super('webhook deliveries', config.schedulerIntervalMs);
    this.sender = new WebhookSender(ds, {
      allowPrivate: config.httpAllowPrivate ?? false,
      allowHosts: config.httpAllowHosts ?? [],
      ...(config.webhookBackoffMs ? { backoffMs: config.webhookBackoffMs } : {}),
      ...(metrics ? { metrics } : {}),
    });
  }

  async pollOnce(): Promise<number> {
    return this.stopped ? 0 : this.sender.sendDue();
  }

  override async onApplicationShutdown(): Promise<void> {
    await super.onApplicationShutdown();
    await this.sender.close();
  }
}

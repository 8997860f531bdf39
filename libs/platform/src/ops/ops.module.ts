import { Module, type DynamicModule, type OnModuleInit, Inject, Injectable } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { LivenessController } from './liveness.controller.js';
import { OpsListener } from './ops-listener.js';
import { Readiness } from './readiness.js';
import { registerStoreGauges } from './store-gauges.js';
import { WeftMetrics } from './weft-metrics.js';

const OPS_OPTIONS = Symbol('OPS_OPTIONS');

/** Options of {@link OpsModule}. */
export interface OpsOptions {
  /** Report the queues' backlog and the outbox (the scheduler's processes). */
  queueGauges: boolean;
}

@Injectable()
class StoreGauges implements OnModuleInit {
  constructor(
    private readonly metrics: WeftMetrics,
    private readonly ds: DataSource,
    @Inject(OPS_OPTIONS) private readonly opts: OpsOptions,
  ) {}

  onModuleInit(): void {
    registerStoreGauges(this.metrics, this.ds, { queues: this.opts.queueGauges });
  }
}

/**
 * The ops listener ({@link OpsListener}: `/healthz`, `/readyz`, `/metrics`, opened by
 * {@link startOpsListener}) with the gauges read at scrape time, and a bare `/healthz` on an
 * HTTP application's own port ({@link LivenessController}). Needs {@link CoreModule} (the
 * DataSource, the queues, {@link WeftMetrics}).
 */
@Module({})
export class OpsModule {
  static forRoot(opts: OpsOptions): DynamicModule {
    return {
      module: OpsModule,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [LivenessController],
      providers: [{ provide: OPS_OPTIONS, useValue: opts }, Readiness, StoreGauges, OpsListener],
      exports: [OpsListener],
    };
  }
}

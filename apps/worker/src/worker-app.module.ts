import { Module, type DynamicModule } from '@nestjs/common';
import { CoreModule, OpsModule, type WeftConfig } from '@weft/platform';
import { WorkerModule } from './worker.module.js';

/** The worker as a process of its own: CoreModule over `config`, the OpsModule (metrics, health) and the WorkerModule. */
@Module({})
export class WorkerAppModule {
  static forRoot(config: WeftConfig): DynamicModule {
    return { module: WorkerAppModule, imports: [CoreModule.forRoot(config), OpsModule.forRoot({ queueGauges: false }), WorkerModule] };
  }
}

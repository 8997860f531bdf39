import { Module, type DynamicModule } from '@nestjs/common';
import { CoreModule, OpsModule, type WeftConfig } from '@weft/platform';
import { SchedulerModule } from './scheduler.module.js';

/** The scheduler as a process of its own: CoreModule over `config`, the OpsModule (metrics, health) and the SchedulerModule. */
@Module({})
export class SchedulerAppModule {
  static forRoot(config: WeftConfig): DynamicModule {
    return { module: SchedulerAppModule, imports: [CoreModule.forRoot(config), OpsModule.forRoot({ queueGauges: true }), SchedulerModule] };
  }
}

import { Module, type DynamicModule } from '@nestjs/common';
import { CoreModule, type WeftConfig } from '@weft/platform';
import { SchedulerModule } from './scheduler.module.js';

/** The scheduler as a process of its own: CoreModule over `config` and the SchedulerModule. */
@Module({})
export class SchedulerAppModule {
  static forRoot(config: WeftConfig): DynamicModule {
    return { module: SchedulerAppModule, imports: [CoreModule.forRoot(config), SchedulerModule] };
  }
}

import { Module, type DynamicModule } from '@nestjs/common';
import { CoreModule, type WeftConfig } from '@weft/platform';
import { WorkerModule } from './worker.module.js';

/** The worker as a process of its own: CoreModule over `config` and the WorkerModule. */
@Module({})
export class WorkerAppModule {
  static forRoot(config: WeftConfig): DynamicModule {
    return { module: WorkerAppModule, imports: [CoreModule.forRoot(config), WorkerModule] };
  }
}

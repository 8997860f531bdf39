import { Module, type DynamicModule } from '@nestjs/common';
import { CoreModule, OpsModule, type WeftConfig } from '@weft/platform';
import { ApiModule } from './api.module.js';

/** The API as a process of its own: CoreModule over `config`, the OpsModule (metrics, health) and the ApiModule. */
@Module({})
export class ApiAppModule {
  static forRoot(config: WeftConfig): DynamicModule {
    return { module: ApiAppModule, imports: [CoreModule.forRoot(config), OpsModule.forRoot({ queueGauges: false }), ApiModule] };
  }
}

import { Global, Injectable, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RunCoordinator } from '@weft/engine/coordinator';
import { createDataSource, RunRepository, TenantRepository, WorkflowRepository } from '@weft/persistence';
import { BullTaskQueues, queuePrefix } from './bull-queue.adapter.js';
import { RedisRunUpdatePublisher } from './redis-run-updates.js';
import { runtimeConnectionError } from './services.js';
import type { WeftConfig } from './weft-config.js';

/** Injection token of the validated {@link WeftConfig}. */
export const WEFT_CONFIG = Symbol('WEFT_CONFIG');

@Injectable()
class CoreLifecycle implements OnApplicationShutdown {
  constructor(
    private readonly ds: DataSource,
    private readonly queues: BullTaskQueues,
    private readonly publisher: RedisRunUpdatePublisher,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.queues.close();
    await this.publisher.close();
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}

/**
 * What every Weft process shares, as one global Nest module: the config, the PostgreSQL
 * DataSource, the Bull queues, the run-update publisher, the coordinator and the read
 * repositories. Closes its connections on application shutdown. The composition root checks
 * `config.databaseUrl` with `ensureRuntimeRole` before booting it (one line, no Nest stack trace).
 */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: WeftConfig): DynamicModule {
    const log = new Logger('coordinator');
    return {
      module: CoreModule,
      providers: [
        { provide: WEFT_CONFIG, useValue: config },
        {
          provide: DataSource,
          useFactory: async () => {
            const ds = createDataSource(config.databaseUrl, { poolSize: config.dbPoolSize });
            // The runtime role was checked once already, before boot (ensureRuntimeRole).
            try {
              await ds.initialize();
            } catch (err) {
              if (ds.isInitialized) await ds.destroy().catch(() => undefined);
              throw runtimeConnectionError(err, config.databaseUrl);
            }
            return ds;
          },
        },
        {
          provide: BullTaskQueues,
          useFactory: () =>
            new BullTaskQueues(config.redisUrl, queuePrefix(config.databaseUrl), {
              jobLockMs: config.jobLockMs,
              onError: (m) => new Logger('bull').warn(m),
            }),
        },
        {
          provide: RedisRunUpdatePublisher,
          useFactory: () => new RedisRunUpdatePublisher(config.redisUrl, (e) => log.warn(`run update not published: ${String(e)}`)),
        },
        {
          provide: RunCoordinator,
          inject: [DataSource, BullTaskQueues, RedisRunUpdatePublisher],
          useFactory: (ds: DataSource, q: BullTaskQueues, p: RedisRunUpdatePublisher) =>
            new RunCoordinator(ds, q, p, {
              logger: { warn: (m: string) => log.warn(m), error: (m: string) => log.error(m) },
              maxOutputBytes: config.maxOutputBytes,
              maxSubworkflowDepth: config.maxSubworkflowDepth,
              maxRunTree: config.maxRunTree,
              maxBufferedSignals: config.maxBufferedSignals,
              maxBufferedSignalBytes: config.maxBufferedSignalBytes,
              dispatchLeaseMs: config.dispatchLeaseMs,
              runLeaseMs: config.runLeaseMs,
            }),
        },
        { provide: RunRepository, inject: [DataSource], useFactory: (ds: DataSource) => new RunRepository(ds) },
        { provide: WorkflowRepository, inject: [DataSource], useFactory: (ds: DataSource) => new WorkflowRepository(ds) },
        { provide: TenantRepository, inject: [DataSource], useFactory: (ds: DataSource) => new TenantRepository(ds) },
        CoreLifecycle,
      ],
      exports: [WEFT_CONFIG, DataSource, BullTaskQueues, RedisRunUpdatePublisher, RunCoordinator, RunRepository, WorkflowRepository, TenantRepository],
    };
  }
}

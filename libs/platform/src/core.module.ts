import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  DueTimers,
  LostTaskSweep,
  OutboxRelay,
  RunBatches,
  RunCommands,
  RunCoordinator,
  RunRetention,
  ScheduleFires,
  TaskLeases,
} from '@weft/engine/coordinator';
import {
  createDataSource,
  QueueReservationRepository,
  QueueViewRepository,
  FlowViewRepository,
  AttemptLogRepository,
  RunBatchRepository,
  WebhookRepository,
  RunRepository,
  ScheduleBackfillRepository,
  ScheduleRepository,
  TenantRepository,
  TenantSettingsRepository,
  VersionLookupRepository,
  WorkerRegistryRepository,
  WorkflowRepository,
} from '@weft/persistence';
import { scheduleGraceMs, type RunUpdatePublisher } from '@weft/engine';
import { BullTaskQueues, queuePrefix } from './bull-queue.adapter.js';
import { InProcessTransport } from './in-process/in-process-transport.js';
import { EngineTelemetry } from './ops/engine-telemetry.js';
import { WeftTracing } from './ops/tracing.js';
import { WeftMetrics } from './ops/weft-metrics.js';
import { RedisRunUpdatePublisher } from './redis-run-updates.js';
import { RunWatchSet } from './run-watches.js';
import { runtimeConnectionError } from './services.js';
import { TaskQueues } from './task-queues.js';
import type { WeftConfig } from './weft-config.js';

/** Injection token of the validated {@link WeftConfig}. */
export const WEFT_CONFIG = Symbol('WEFT_CONFIG');

/** Injection token of the process's RunUpdatePublisher (with a `close`): Redis's, or the in-process one. */
export const RUN_UPDATE_PUBLISHER = Symbol('RUN_UPDATE_PUBLISHER');

/** A run-update publisher CoreModule closes on shutdown. */
type ClosablePublisher = RunUpdatePublisher & { close(): Promise<void> };

/**
 * Shutdown in two steps. Before the application shuts down (after the worker's own hook), the
 * queues stop taking jobs and the jobs in flight finish: they report through the DataSource, and
 * TypeOrmModule destroys it in the last step, in an order Nest does not fix between it and this
 * global module. Last, the transport's connections close (Redis's, or the in-process queues).
 */
@Injectable()
class CoreLifecycle implements BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    private readonly queues: TaskQueues,
    @Inject(RUN_UPDATE_PUBLISHER) private readonly publisher: ClosablePublisher,
    private readonly tracing: WeftTracing,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.queues.stopConsuming();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queues.close();
    await this.publisher.close();
    await this.tracing.shutdown();
  }
}

/**
 * The runtime DataSource through `@nestjs/typeorm`: `createDataSource` builds it and opens it
 * here, so a failure is the one-line {@link runtimeConnectionError}, never retried (the runtime
 * role was checked once already, before boot, by `ensureRuntimeRole`).
 */
function dataSourceModule(config: WeftConfig): DynamicModule {
  return TypeOrmModule.forRootAsync({
    useFactory: () => ({ toRetry: () => false }),
    dataSourceFactory: async () => {
      const ds = createDataSource(config.databaseUrl, { poolSize: config.dbPoolSize });
      try {
        await ds.initialize();
      } catch (err) {
        if (ds.isInitialized) await ds.destroy().catch(() => undefined);
        throw runtimeConnectionError(err, config.databaseUrl);
      }
      return ds;
    },
  });
}

/**
 * The transport's providers: over Redis (the default) BullTaskQueues and RedisRunUpdatePublisher,
 * each also under its role's token (TaskQueues, RUN_UPDATE_PUBLISHER); in process
 * (`config.transport` `in-process`) one {@link InProcessTransport} whose parts fill the same tokens.
 */
function transportProviders(config: WeftConfig, log: Logger): Provider[] {
  if (config.transport === 'in-process') {
    return [
      { provide: InProcessTransport, useFactory: () => new InProcessTransport((m) => new Logger('queues').warn(m)) },
      { provide: TaskQueues, inject: [InProcessTransport], useFactory: (t: InProcessTransport) => t.queues },
      { provide: RUN_UPDATE_PUBLISHER, inject: [InProcessTransport], useFactory: (t: InProcessTransport) => t.publisher },
    ];
  }
  return [
    {
      provide: BullTaskQueues,
      useFactory: () =>
        new BullTaskQueues(config.redisUrl, queuePrefix(config.databaseUrl), {
          jobLockMs: config.jobLockMs,
          onError: (m) => new Logger('bull').warn(m),
        }),
    },
    { provide: TaskQueues, useExisting: BullTaskQueues },
    {
      provide: RedisRunUpdatePublisher,
      // Updates that do not end a run go out only for watched runs (the API announces its subscribers').
      useFactory: () =>
        new RedisRunUpdatePublisher(config.redisUrl, (e) => log.warn(`run update not published: ${String(e)}`), undefined, new RunWatchSet(config.redisUrl)),
    },
    { provide: RUN_UPDATE_PUBLISHER, useExisting: RedisRunUpdatePublisher },
  ];
}

function transportExports(config: WeftConfig): NonNullable<DynamicModule['exports']> {
  return config.transport === 'in-process'
    ? [InProcessTransport, TaskQueues, RUN_UPDATE_PUBLISHER]
    : [BullTaskQueues, TaskQueues, RedisRunUpdatePublisher, RUN_UPDATE_PUBLISHER];
}

/**
 * What every Weft process shares, as one global Nest module: the config, the PostgreSQL DataSource
 * (`@nestjs/typeorm`), the task queues and the run-update publisher of its transport, the metrics, the coordinator
 * (its observer counting into the metrics and logging runs) and the read
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
      imports: [dataSourceModule(config)],
      providers: [
        { provide: WEFT_CONFIG, useValue: config },
        ...transportProviders(config, log),
        {
          provide: WeftMetrics,
          useFactory: () =>
            new WeftMetrics({
              tenantLabel: config.metricsTenantLabel,
              workflowsPerTenant: config.metricsWorkflowsPerTenant,
              maxLabelValues: config.metricsMaxWorkflows,
            }),
        },
        { provide: WeftTracing, useFactory: () => new WeftTracing({ tracesUrl: config.otlpTracesUrl, serviceName: config.serviceName }) },
        {
          provide: RunCoordinator,
          inject: [DataSource, TaskQueues, RUN_UPDATE_PUBLISHER, WeftMetrics, WeftTracing],
          useFactory: (ds: DataSource, q: TaskQueues, p: ClosablePublisher, metrics: WeftMetrics, tracing: WeftTracing) =>
            new RunCoordinator(ds, q, p, {
              logger: { warn: (m: string) => log.warn(m), error: (m: string) => log.error(m) },
              observer: new EngineTelemetry(metrics, tracing),
              maxOutputBytes: config.maxOutputBytes,
              maxSubworkflowDepth: config.maxSubworkflowDepth,
              maxRunTree: config.maxRunTree,
              maxBufferedSignals: config.maxBufferedSignals,
              maxBufferedSignalBytes: config.maxBufferedSignalBytes,
              dispatchLeaseMs: config.dispatchLeaseMs,
              runLeaseMs: config.runLeaseMs,
              fencedSteps: config.fencedSteps,
              scheduleGraceMs: scheduleGraceMs(config.schedulerIntervalMs),
              batchRunsPerSecond: config.batchRunsPerSecond,
            }),
        },
        // Each app injects the rooms it calls, never the whole coordinator.
        { provide: RunCommands, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.runs },
        { provide: TaskLeases, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.leases },
        { provide: DueTimers, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.timers },
        { provide: OutboxRelay, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.outbox },
        { provide: LostTaskSweep, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.lostTasks },
        { provide: ScheduleFires, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.schedules },
        { provide: RunRetention, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.retention },
        { provide: RunBatches, inject: [RunCoordinator], useFactory: (c: RunCoordinator) => c.batches },
        { provide: ScheduleRepository, inject: [DataSource], useFactory: (ds: DataSource) => new ScheduleRepository(ds) },
        { provide: ScheduleBackfillRepository, inject: [DataSource], useFactory: (ds: DataSource) => new ScheduleBackfillRepository(ds) },
        { provide: VersionLookupRepository, inject: [DataSource], useFactory: (ds: DataSource) => new VersionLookupRepository(ds) },
        { provide: RunRepository, inject: [DataSource], useFactory: (ds: DataSource) => new RunRepository(ds) },
        { provide: RunBatchRepository, inject: [DataSource], useFactory: (ds: DataSource) => new RunBatchRepository(ds) },
        { provide: WebhookRepository, inject: [DataSource], useFactory: (ds: DataSource) => new WebhookRepository(ds) },
        { provide: AttemptLogRepository, inject: [DataSource], useFactory: (ds: DataSource) => new AttemptLogRepository(ds) },
        { provide: WorkflowRepository, inject: [DataSource], useFactory: (ds: DataSource) => new WorkflowRepository(ds) },
        { provide: TenantRepository, inject: [DataSource], useFactory: (ds: DataSource) => new TenantRepository(ds) },
        { provide: TenantSettingsRepository, inject: [DataSource], useFactory: (ds: DataSource) => new TenantSettingsRepository(ds) },
        { provide: QueueReservationRepository, inject: [DataSource], useFactory: (ds: DataSource) => new QueueReservationRepository(ds) },
        { provide: QueueViewRepository, inject: [DataSource], useFactory: (ds: DataSource) => new QueueViewRepository(ds) },
        { provide: FlowViewRepository, inject: [DataSource], useFactory: (ds: DataSource) => new FlowViewRepository(ds) },
        { provide: WorkerRegistryRepository, inject: [DataSource], useFactory: (ds: DataSource) => new WorkerRegistryRepository(ds) },
        CoreLifecycle,
      ],
      exports: [
        WEFT_CONFIG,
        WeftMetrics,
        WeftTracing,
        ...transportExports(config),
        RunCoordinator,
        RunCommands,
        TaskLeases,
        DueTimers,
        OutboxRelay,
        LostTaskSweep,
        ScheduleFires,
        RunRetention,
        RunBatches,
        ScheduleRepository,
        ScheduleBackfillRepository,
        VersionLookupRepository,
        RunRepository,
        RunBatchRepository,
        WebhookRepository,
        AttemptLogRepository,
        WorkflowRepository,
        TenantRepository,
        TenantSettingsRepository,
        QueueReservationRepository,
        QueueViewRepository,
        FlowViewRepository,
        WorkerRegistryRepository,
      ],
    };
  }
}

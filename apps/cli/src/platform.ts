import 'reflect-metadata';
import { Logger, Module, type DynamicModule, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  CoreModule,
  OpsModule,
  bootWithoutApi,
  logDatabase,
  logStartLine,
  prepareServer,
  startOpsListener,
  type PreparedDatabase,
  type WeftConfig,
} from '@weft/platform';
import { ApiModule, apiAnnouncement, listenApi } from '@weft/api';
import { TaskProcessor, WorkerModule } from '@weft/worker';
import { Scheduler, SchedulerModule } from '@weft/scheduler';

/** Which roles this process plays. */
export interface Roles {
  api?: boolean;
  /** Interface the API binds to (default: every interface). */
  host?: string;
  worker?: boolean;
  scheduler?: boolean;
}

/** A running Weft process: the GraphQL URL when it serves the API, and how to stop it. */
export interface RunningPlatform {
  url?: string;
  /** The ops listener (`/metrics`, `/readyz`, `/healthz`; `WEFT_METRICS_PORT`), of any role. */
  metricsUrl?: string;
  /** The Nest application (for tests and embedders: `app.get(…)`). */
  app: INestApplicationContext;
  close(): Promise<void>;
}

/**
 * The composition root: checks PostgreSQL and Redis answer (creating the database when
 * missing), optionally migrates, then boots one Nest application with the requested roles.
 * `weft dev` is all three roles plus migrations in one process. The process logs JSON lines
 * through a WeftLogger at `config.logLevel`, or through `opts.logger`; `opts.onDatabase` hears
 * whether the database was created and which migrations were applied. With `config.transport`
 * `in-process` there is no Redis: jobs and run updates stay in this process. Throws
 * ServiceUnavailableError with one clear line when a service cannot be reached.
 */
export async function startPlatform(
  config: WeftConfig,
  roles: Roles,
  opts: { migrate?: boolean; logger?: LoggerService; onDatabase?: (prepared: PreparedDatabase) => void } = {},
): Promise<RunningPlatform> {
  const logger = await prepareServer(config, opts);

  const imports: DynamicModule['imports'] = [CoreModule.forRoot(config), OpsModule.forRoot({ queueGauges: roles.scheduler === true })];
  if (roles.api) imports.push(ApiModule);
  if (roles.worker) imports.push(WorkerModule);
  if (roles.scheduler) imports.push(SchedulerModule);

  @Module({ imports })
  class WeftProcessModule {}

  let app: INestApplicationContext;
  let url: string | undefined;
  let metricsUrl: string | undefined;
  if (roles.api) {
    const api = await NestFactory.create(WeftProcessModule, { logger });
    try {
      url = await listenApi(api, config.port, roles.host);
    } catch (err) {
      await api.close();
      if ((err as { code?: string }).code === 'EADDRINUSE') {
        throw new Error(`port ${config.port} is already in use: pass --port N (0 picks a free port) or set PORT`);
      }
      throw err;
    }
    // /metrics and /readyz are never on the API's port: with WEFT_METRICS_PORT, a listener of their own.
    metricsUrl = await startOpsListener(api, config).catch(async (err: unknown) => {
      await api.close();
      throw err;
    });
    app = api;
  } else {
    ({ app, metricsUrl } = await bootWithoutApi(WeftProcessModule, config, logger));
  }
  app.enableShutdownHooks();
  if (roles.worker) await app.get(TaskProcessor).start(config.queues);
  if (roles.scheduler) app.get(Scheduler).start();
  if (url) logStartLine(new Logger('weft'), config, apiAnnouncement(url, roles.host));
  logDatabase(config);
  return { url, ...(metricsUrl ? { metricsUrl } : {}), app, close: () => app.close() };
}

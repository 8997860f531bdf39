import { Logger, Module, type INestApplication } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { GraphQLModule } from '@nestjs/graphql';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { RedisPubSub } from 'graphql-redis-subscriptions';
import { Redis } from 'ioredis';
import { InProcessTransport, RunWatchAnnouncer, WEFT_CONFIG, WeftMetrics, type WeftConfig } from '@weft/platform';
import { MAX_MESSAGE_BYTES } from './common/query-limits.js';
import { REDIS_PUBSUB, RUN_WATCHES } from './api.tokens.js';
import { AuthModule } from './auth/auth.module.js';
import { AuthService } from './auth/auth.service.js';
import { ConsoleModule } from './console/console.module.js';
import { graphqlOptions } from './graphql.options.js';
import { KeysResolver } from './keys/keys.resolver.js';
import { KeysService } from './keys/keys.service.js';
import { WhoamiResolver } from './keys/whoami.resolver.js';
import { FlowResolver } from './flow/flow.resolver.js';
import { FlowService } from './flow/flow.service.js';
import { QueuesResolver } from './queues/queues.resolver.js';
import { QueuesService } from './queues/queues.service.js';
import { RunUpdatesService } from './runs/run-updates.service.js';
import { RunEventFieldsResolver, RunsResolver, TaskFieldsResolver } from './runs/runs.resolver.js';
import { TaskAttemptsResolver } from './runs/task-attempts.resolver.js';
import { TaskIterationsResolver } from './runs/task-iterations.resolver.js';
import { RunsService } from './runs/runs.service.js';
import { SchedulesResolver } from './schedules/schedules.resolver.js';
import { SchedulesService } from './schedules/schedules.service.js';
import { RunBatchesResolver } from './batches/run-batches.resolver.js';
import { RunBatchesService } from './batches/run-batches.service.js';
import { TenantSettingsResolver } from './settings/tenant-settings.resolver.js';
import { TenantSettingsService } from './settings/tenant-settings.service.js';
import { SocketServer } from './sockets/socket-server.service.js';
import { WorkflowResolver, WorkflowsResolver } from './workflows/workflows.resolver.js';
import { DefinitionChecker } from './workflows/definition-checker.js';
import { WorkflowsService } from './workflows/workflows.service.js';

/**
 * The GraphQL API (HTTP POST /graphql, and graphql-ws on the same path served by
 * {@link SocketServer}). Needs the global
 * CoreModule of @weft/platform beside it, which provides WEFT_CONFIG, RunCommands,
 * RunRepository, WorkflowRepository, TenantRepository, TenantSettingsRepository, FlowViewRepository and the queue and worker repositories. REDIS_PUBSUB and
 * RUN_WATCHES are built here from WEFT_CONFIG.redisUrl (override them to test without Redis), or
 * taken from CoreModule's InProcessTransport when it has one (`weft dev` without Redis).
 */
@Module({
  imports: [
    AuthModule,
    ConsoleModule.forRoot(),
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: ApolloDriver,
      imports: [AuthModule],
      // The metrics come from CoreModule; suites that stand in for it may leave them out.
      inject: [AuthService, { token: WeftMetrics, optional: true }],
      useFactory: (auth: AuthService, metrics?: WeftMetrics) => graphqlOptions(auth, metrics),
    }),
  ],
  providers: [
    {
      provide: REDIS_PUBSUB,
      inject: [WEFT_CONFIG, { token: InProcessTransport, optional: true }],
      useFactory: (config: WeftConfig, local?: InProcessTransport) => local?.pubsub ?? createRedisPubSub(config.redisUrl),
    },
    {
      provide: RUN_WATCHES,
      inject: [WEFT_CONFIG, { token: InProcessTransport, optional: true }],
      useFactory: (config: WeftConfig, local?: InProcessTransport) => local?.watches ?? new RunWatchAnnouncer(config.redisUrl),
    },
    RunUpdatesService,
    SocketServer,
    DefinitionChecker,
    WorkflowsService,
    RunsService,
    KeysService,
    WorkflowsResolver,
    WorkflowResolver,
    RunsResolver,
    TaskFieldsResolver,
    TaskAttemptsResolver,
    TaskIterationsResolver,
    RunEventFieldsResolver,
    KeysResolver,
    WhoamiResolver,
    QueuesService,
    QueuesResolver,
    SchedulesService,
    SchedulesResolver,
    TenantSettingsService,
    TenantSettingsResolver,
    RunBatchesService,
    RunBatchesResolver,
    FlowService,
    FlowResolver,
  ],
})
export class ApiModule {}

/**
 * A RedisPubSub on two connections: the subscriber (auto-resubscribes after a reconnect) and a
 * publisher that never connects unless something publishes through it (the coordinator
 * publishes with its own client).
 */
export function createRedisPubSub(redisUrl: string): RedisPubSub {
  const log = new Logger('RunUpdates');
  let reported = false;
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
  subscriber.on('error', (err: Error) => {
    if (!reported) log.warn(`Redis subscriber: ${err.message}`);
    reported = true;
  });
  subscriber.on('ready', () => (reported = false));
  const publisher = new Redis(redisUrl, { lazyConnect: true });
  publisher.on('error', () => undefined);
  return new RedisPubSub({ subscriber, publisher });
}

/**
 * Listens on `port` (0: any free port) on every interface, with a body limit large enough for
 * definitions ({@link MAX_MESSAGE_BYTES}, the graphql-ws message limit too); returns the GraphQL
 * URL on loopback, e.g. `http://127.0.0.1:4000/graphql`.
 */
export async function listenApi(app: INestApplication, port: number, host?: string): Promise<string> {
  (app as NestExpressApplication).useBodyParser('json', { limit: MAX_MESSAGE_BYTES });
  if (host) await app.listen(port, host);
  else await app.listen(port);
  const address = app.getHttpServer().address() as { port: number } | string | null;
  const actual = typeof address === 'object' && address ? address.port : port;
  const shown = !host || listensEverywhere(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${actual}/graphql`;
}

/**
 * The log line announcing the API at `url` (from {@link listenApi}): it names the address to
 * reach it by, and says when the server listens on every interface (no `host`, `0.0.0.0` or `::`),
 * which the loopback address in the URL would hide.
 */
export function apiAnnouncement(url: string, host?: string): string {
  return `GraphQL API at ${url}${listensEverywhere(host) ? ' (listening on every interface)' : ''}`;
}

/** True when a server given `host` (none, `0.0.0.0` or `::`) listens on every interface. */
function listensEverywhere(host: string | undefined): boolean {
  return !host || host === '0.0.0.0' || host === '::';
}

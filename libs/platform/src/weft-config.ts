import 'reflect-metadata';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { WeftLogLevel } from './weft-logger.js';
import { DEFAULT_QUEUES, WeftEnv } from './weft-env.js';

export { DEFAULT_QUEUES, WeftEnv };

/** The validated configuration handed to every module. */
export interface WeftConfig {
  /** The runtime role's connection (row-level security applies). */
  databaseUrl: string;
  /** The owner's connection: creating the database and migrating only. */
  ownerDatabaseUrl: string;
  /** True when DATABASE_URL or DATABASE_OWNER_URL was set (`weft dev` then never starts a database of its own). */
  databaseUrlGiven: boolean;
  redisUrl: string;
  /** True when REDIS_URL was set (`weft dev` then never carries jobs in process). */
  redisUrlGiven: boolean;
  /**
   * How jobs and run updates travel between the roles: `redis` (Bull and Redis pub/sub, any
   * number of processes; the default, also when absent) or `in-process` (`weft dev` without
   * Redis: one process only, see docs/ARCHITECTURE.md).
   */
  transport?: 'redis' | 'in-process';
  /**
   * True when the process prints a start summary of its own (`weft dev`): the roles then log their
   * start lines (listeners, queues, pollers, database, CODE isolation's parts) at debug, not info.
   */
  quietStart?: boolean;
  /** WEFT_HOME: Weft's folder on this machine (`weft dev`'s embedded database lives in it). */
  weftHome: string;
  port: number;
  queues: string[];
  workerConcurrency: number;
  /** WEFT_EAGER_DISPATCH: attempts a worker slot takes in a row from its own reports (0: none). */
  eagerDispatch: number;
  /** WEFT_FENCED_STEPS: reports decided from memory and written fenced through a step committer (default true). */
  fencedSteps: boolean;
  /** WEFT_DRAIN_SECONDS: how long a worker stopping on SIGTERM lets its executions finish before it hands them back. */
  drainSeconds: number;
  httpAllowPrivate: boolean;
  httpAllowHosts: string[];
  /** WEFT_CODE_UNCONFINED: run CODE without full isolation (local development). `undefined`: not set. */
  codeUnconfined: boolean | undefined;
  /** WEFT_CODE_MAX_PROCESSES: processes and threads one CODE execution may hold (default 128). */
  codeMaxProcesses: number;
  /** WEFT_CODE_MAX_TOTAL_MB: memory all CODE executions of a worker hold together, MiB (`undefined`: half the host's, at least 4,096). */
  codeMaxTotalMb: number | undefined;
  schedulerIntervalMs: number;
  /** WEFT_RETENTION_INTERVAL_MS: how often the scheduler passes over the run trees past their tenant's retention (default 60,000). */
  retentionIntervalMs: number;
  /** WEFT_BATCH_RUNS_PER_SECOND: the most runs a bulk action acts on per second (default 100). */
  batchRunsPerSecond?: number;
  /** WEFT_WEBHOOK_BACKOFF_MS: the first backoff of a failed webhook delivery, ms (default 1,000; doubled at each attempt, at most an hour). */
  webhookBackoffMs?: number;
  /** WEFT_MAX_SCHEDULES_PER_TENANT: schedules one tenant may hold (default 1000). */
  maxSchedulesPerTenant: number;
  /** WEFT_MIN_SCHEDULE_INTERVAL_SECONDS: the smallest gap between a schedule's fires (default 10). */
  minScheduleIntervalSeconds: number;
  /** WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT: unfinished backfills one tenant may hold (default 4). */
  maxActiveBackfillsPerTenant: number;
  dbPoolSize: number;
  /** A revoked key's open graphql-ws connection is closed within this many milliseconds. */
  wsKeyRecheckMs: number;
  /** WEFT_WS_MAX_CONNECTIONS: open graphql-ws connections per API process (default 1000). */
  wsMaxConnections: number;
  /** WEFT_WS_MAX_CONNECTIONS_PER_KEY: open graphql-ws connections per API key and process (default 100). */
  wsMaxConnectionsPerKey: number;
  /** WEFT_WS_MAX_CONNECTIONS_PER_TENANT: open graphql-ws connections per tenant and process (default 200, at most half the process cap). */
  wsMaxConnectionsPerTenant: number;
  /** WEFT_WS_MAX_PENDING_PER_ADDRESS: graphql-ws connections not yet authenticated per remote address (default 16). */
  wsMaxPendingPerAddress: number;
  /** WEFT_MAX_KEYS_PER_TENANT: live API keys per tenant (default 100). */
  maxKeysPerTenant: number;
  /** WEFT_MAX_BUFFERED_SIGNALS: unconsumed signals one run may buffer (default 1000). */
  maxBufferedSignals: number;
  /** WEFT_MAX_BUFFERED_SIGNAL_BYTES: bytes of payload one run's buffered signals may hold (default 16 MiB). */
  maxBufferedSignalBytes: number;
  /** Largest task output, in UTF-8 bytes of its JSON text; larger fails the attempt (OUTPUT_TOO_LARGE). */
  maxOutputBytes: number;
  /** WEFT_MAX_RESPONSE_BYTES: bytes of stored JSON one GraphQL answer may hold (default 64 MiB). */
  maxResponseBytes: number;
  /** WEFT_MAX_SUBWORKFLOW_DEPTH: the deepest chain of child runs (default 10). */
  maxSubworkflowDepth: number;
  /** WEFT_MAX_RUN_TREE: the most runs one tree of child runs may hold (default 1000). */
  maxRunTree: number;
  /** WEFT_MAX_DEFINITION_NODES and WEFT_MAX_DEFINITION_EDGES: the most nodes and edges a published definition may have. */
  maxDefinitionNodes: number;
  maxDefinitionEdges: number;
  /** Lease of a dispatched worker task after its `not_before`, ms. */
  dispatchLeaseMs: number;
  /** Lease a worker's claim and heartbeats give a running task, ms (heartbeat every third). */
  runLeaseMs: number;
  /** Bull's job lock (`lockDuration`), ms. */
  jobLockMs: number;
  /** WEFT_LOG_LEVEL: the least severe level logged (default info). */
  logLevel: WeftLogLevel;
  /** WEFT_LOG_FORMAT, `auto` resolved against the process's stdout. */
  logFormat: 'json' | 'pretty';
  /** WEFT_METRICS_PORT: the ops listener (metrics, readiness, liveness) of the process; undefined: none. */
  metricsPort: number | undefined;
  /** WEFT_METRICS_HOST: the interface of that listener. */
  metricsHost: string;
  /** WEFT_METRICS_WORKFLOWS_PER_TENANT: `workflow` label values per tenant. */
  metricsWorkflowsPerTenant: number;
  /** WEFT_METRICS_MAX_WORKFLOWS: `workflow` label values in all. */
  metricsMaxWorkflows: number;
  /** WEFT_METRICS_TENANT_LABEL: a `tenant` label on run and task metrics. */
  metricsTenantLabel: boolean;
  /** Where spans are sent (OTLP/HTTP traces URL); undefined: none. */
  otlpTracesUrl: string | undefined;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
}

/** Thrown when the environment is invalid; `message` lists each bad variable on its own line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Validates `env` (default `process.env`) and returns the configuration; `overrides` (e.g. CLI
 * flags) win over the environment. Throws {@link ConfigError} naming every invalid variable.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Record<keyof WeftEnv, string | number | boolean>> = {},
): WeftConfig {
  const known = Object.keys(new WeftEnv()) as (keyof WeftEnv)[];
  const raw: Record<string, unknown> = {};
  for (const k of known) {
    const v = overrides[k] ?? env[k];
    if (v !== undefined && v !== '') raw[k] = typeof v === 'string' ? v : String(v);
  }
  const dto = plainToInstance(WeftEnv, raw);
  const errors = validateSync(dto);
  if (errors.length > 0) {
    // One message per variable: the type check when the value is not even of the right type.
    const lines = errors.map((e) => {
      const c = e.constraints ?? {};
      const first = c.isInt ?? c.isBoolean ?? c.isString ?? Object.values(c)[0];
      return `${e.property}=${JSON.stringify(raw[e.property])}: ${first}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  // Unset, the per-tenant cap follows a small process cap down (half of it) instead of refusing it.
  if (raw.WEFT_WS_MAX_CONNECTIONS_PER_TENANT === undefined) {
    dto.WEFT_WS_MAX_CONNECTIONS_PER_TENANT = Math.min(dto.WEFT_WS_MAX_CONNECTIONS_PER_TENANT, Math.max(1, Math.floor(dto.WEFT_WS_MAX_CONNECTIONS / 2)));
  } else if (dto.WEFT_WS_MAX_CONNECTIONS_PER_TENANT >= dto.WEFT_WS_MAX_CONNECTIONS) {
    const given = JSON.stringify(raw.WEFT_WS_MAX_CONNECTIONS_PER_TENANT);
    throw new ConfigError(
      `invalid configuration:\n  WEFT_WS_MAX_CONNECTIONS_PER_TENANT=${given}: must be below WEFT_WS_MAX_CONNECTIONS ` +
        `(${dto.WEFT_WS_MAX_CONNECTIONS}), or one tenant could hold every graphql-ws connection of the process`,
    );
  }
  const queues =
    dto.WEFT_QUEUES.trim().toLowerCase() === 'all'
      ? [...DEFAULT_QUEUES]
      : [
          ...new Set(
            dto.WEFT_QUEUES.split(',')
              .map((q) => q.trim().toLowerCase())
              .filter(Boolean),
          ),
        ];
  return {
    databaseUrl: dto.DATABASE_URL,
    ownerDatabaseUrl: dto.DATABASE_OWNER_URL || ownerUrlOf(dto.DATABASE_URL),
    databaseUrlGiven: raw.DATABASE_URL !== undefined || raw.DATABASE_OWNER_URL !== undefined,
    redisUrl: dto.REDIS_URL,
    redisUrlGiven: raw.REDIS_URL !== undefined,
    transport: 'redis',
    weftHome: dto.WEFT_HOME.trim() || defaultWeftHome(),
    port: dto.PORT,
    queues,
    workerConcurrency: dto.WEFT_WORKER_CONCURRENCY,
    eagerDispatch: dto.WEFT_EAGER_DISPATCH,
    fencedSteps: dto.WEFT_FENCED_STEPS,
    drainSeconds: dto.WEFT_DRAIN_SECONDS,
    httpAllowPrivate: dto.WEFT_HTTP_ALLOW_PRIVATE,
    httpAllowHosts: dto.WEFT_HTTP_ALLOW_HOSTS.split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    codeUnconfined: raw.WEFT_CODE_UNCONFINED === undefined ? undefined : dto.WEFT_CODE_UNCONFINED,
    codeMaxProcesses: dto.WEFT_CODE_MAX_PROCESSES,
    codeMaxTotalMb: dto.WEFT_CODE_MAX_TOTAL_MB,
    schedulerIntervalMs: dto.WEFT_SCHEDULER_INTERVAL_MS,
    retentionIntervalMs: dto.WEFT_RETENTION_INTERVAL_MS,
    batchRunsPerSecond: dto.WEFT_BATCH_RUNS_PER_SECOND,
    webhookBackoffMs: dto.WEFT_WEBHOOK_BACKOFF_MS,
    maxSchedulesPerTenant: dto.WEFT_MAX_SCHEDULES_PER_TENANT,
    minScheduleIntervalSeconds: dto.WEFT_MIN_SCHEDULE_INTERVAL_SECONDS,
    maxActiveBackfillsPerTenant: dto.WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT,
    dbPoolSize: dto.WEFT_DB_POOL_SIZE,
    wsKeyRecheckMs: dto.WEFT_WS_KEY_RECHECK_MS,
    wsMaxConnections: dto.WEFT_WS_MAX_CONNECTIONS,
    wsMaxConnectionsPerKey: dto.WEFT_WS_MAX_CONNECTIONS_PER_KEY,
    wsMaxConnectionsPerTenant: dto.WEFT_WS_MAX_CONNECTIONS_PER_TENANT,
    wsMaxPendingPerAddress: dto.WEFT_WS_MAX_PENDING_PER_ADDRESS,
    maxKeysPerTenant: dto.WEFT_MAX_KEYS_PER_TENANT,
    maxBufferedSignals: dto.WEFT_MAX_BUFFERED_SIGNALS,
    maxBufferedSignalBytes: dto.WEFT_MAX_BUFFERED_SIGNAL_BYTES,
    maxOutputBytes: dto.WEFT_MAX_OUTPUT_BYTES,
    maxResponseBytes: dto.WEFT_MAX_RESPONSE_BYTES,
    maxSubworkflowDepth: dto.WEFT_MAX_SUBWORKFLOW_DEPTH,
    maxRunTree: dto.WEFT_MAX_RUN_TREE,
    maxDefinitionNodes: dto.WEFT_MAX_DEFINITION_NODES,
    maxDefinitionEdges: dto.WEFT_MAX_DEFINITION_EDGES,
    dispatchLeaseMs: dto.WEFT_DISPATCH_LEASE_MS,
    runLeaseMs: dto.WEFT_RUN_LEASE_MS,
    jobLockMs: dto.WEFT_JOB_LOCK_MS,
    logLevel: dto.WEFT_LOG_LEVEL === 'log' ? 'info' : dto.WEFT_LOG_LEVEL,
    logFormat: dto.WEFT_LOG_FORMAT === 'auto' ? (process.stdout.isTTY ? 'pretty' : 'json') : dto.WEFT_LOG_FORMAT,
    metricsPort: dto.WEFT_METRICS_PORT,
    metricsHost: dto.WEFT_METRICS_HOST.trim() || '127.0.0.1',
    metricsWorkflowsPerTenant: dto.WEFT_METRICS_WORKFLOWS_PER_TENANT,
    metricsMaxWorkflows: dto.WEFT_METRICS_MAX_WORKFLOWS,
    metricsTenantLabel: dto.WEFT_METRICS_TENANT_LABEL,
    otlpTracesUrl:
      dto.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ||
      (dto.OTEL_EXPORTER_OTLP_ENDPOINT ? `${dto.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
    serviceName: dto.OTEL_SERVICE_NAME,
  };
}

/** `~/.weft`, or `/var/lib/weft` for root (see WeftEnv.WEFT_HOME). */
function defaultWeftHome(): string {
  return process.getuid?.() === 0 ? '/var/lib/weft' : join(homedir(), '.weft');
}

/** `databaseUrl` with the user `postgres` and no password: the default owner connection. */
export function ownerUrlOf(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    u.username = 'postgres';
    u.password = '';
    return u.toString();
  } catch {
    return databaseUrl;
  }
}

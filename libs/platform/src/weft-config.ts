import 'reflect-metadata';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsString, Matches, Max, Min, ValidateIf, validateSync } from 'class-validator';
import { WEFT_LOG_LEVELS, type WeftLogLevel } from './weft-logger.js';

/** The queues a worker serves when `WEFT_QUEUES` is unset or `all`: one per built-in runtime. */
export const DEFAULT_QUEUES = ['http', 'python', 'js'] as const;

/** A numeric string becomes a number; anything else is kept as given so the error can show it. */
const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^\s*-?\d+(\.\d+)?\s*$/.test(String(value)) ? Number(value) : value;
/** 1/true/yes/on and 0/false/no/off; anything else is kept as given so the error can show it. */
const toBool = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '') return undefined;
  const v = String(value).trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  return value;
};

/**
 * The process environment Weft reads, validated once at boot (`process.env` is read nowhere
 * else). Every field has a default that works on a developer machine with local PostgreSQL and
 * Redis.
 */
export class WeftEnv {
  /**
   * PostgreSQL URL the processes run on, as the runtime role (`weft_app`, created by the
   * migrations: not a superuser, no BYPASSRLS, owns no table), so row-level security applies.
   */
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must start with postgres:// or postgresql://' })
  DATABASE_URL = 'postgres://weft_app@127.0.0.1:5432/weft';

  /**
   * PostgreSQL URL of the tables' owner, used only to create the database and run migrations.
   * Default: DATABASE_URL with the user `postgres` and no password.
   */
  @ValidateIf((env: WeftEnv) => env.DATABASE_OWNER_URL !== '')
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_OWNER_URL must start with postgres:// or postgresql://' })
  DATABASE_OWNER_URL = '';

  /** Redis URL (Bull transport and run-update pub/sub). */
  @IsString()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must start with redis:// or rediss://' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** HTTP port of the GraphQL API. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 4000;

  /** Comma-separated queues a worker serves, or `all`. */
  @IsString()
  @Matches(/^[a-z0-9_,.\-\s]+$/i, { message: 'WEFT_QUEUES must be a comma-separated list of queue names, or "all"' })
  WEFT_QUEUES = 'all';

  /** Jobs a worker runs at once, per queue. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEFT_WORKER_CONCURRENCY = 8;

  /**
   * Eager dispatch: how many attempts in a row a worker's slot may take from its own reports (the
   * next node of a chain, on the same queue, executed at once without a Bull round trip) before
   * the next goes through the queue again; 0 sends every attempt through the queue.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  WEFT_EAGER_DISPATCH = 64;

  /**
   * On SIGTERM a worker stops taking jobs and gives the executions it holds this many seconds to
   * finish; those still running then are aborted and handed back, so another worker takes them
   * at once. 25 by default: with the second or so handing back and closing take, the worker is
   * gone within the 30 s a container orchestrator commonly waits before it sends SIGKILL.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3600)
  WEFT_DRAIN_SECONDS = 25;

  /** Allow HTTP nodes to reach loopback, private and link-local addresses. */
  @Transform(toBool)
  @IsBoolean({ message: 'WEFT_HTTP_ALLOW_PRIVATE must be 1/true/yes/on or 0/false/no/off' })
  WEFT_HTTP_ALLOW_PRIVATE = false;

  /**
   * Run CODE even where the worker cannot isolate it (not root, no bubblewrap, no writable cgroup):
   * for local development only. Unset, such a worker fails every CODE attempt naming what is
   * missing; `weft dev` defaults it to on and says so.
   */
  @Transform(toBool)
  @IsBoolean({ message: 'WEFT_CODE_UNCONFINED must be 1/true/yes/on or 0/false/no/off' })
  WEFT_CODE_UNCONFINED = false;

  /** Processes and threads one CODE execution may hold at once (its cgroup's pids.max). */
  @Transform(toInt)
  @IsInt()
  @Min(16)
  @Max(65_536)
  WEFT_CODE_MAX_PROCESSES = 128;

  /** Host names HTTP nodes may reach even when they resolve to private addresses. */
  @IsString()
  WEFT_HTTP_ALLOW_HOSTS = '';

  /** How often the scheduler polls for due timers and unsent outbox rows, in milliseconds. */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(60000)
  WEFT_SCHEDULER_INTERVAL_MS = 250;

  /** Connections in each process's PostgreSQL pool. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  WEFT_DB_POOL_SIZE = 10;

  /** How often the API checks again the key of an open graphql-ws connection, in milliseconds. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  WEFT_WS_KEY_RECHECK_MS = 10_000;

  /**
   * Open graphql-ws connections the API process accepts in all, authenticated or not; one more
   * is closed at once with 1013 (Try Again Later), reason `TOO_MANY_CONNECTIONS`.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_WS_MAX_CONNECTIONS = 1000;

  /**
   * Open graphql-ws connections one API key may hold on the API process; one more is closed
   * once authenticated with 4029, reason `TOO_MANY_KEY_CONNECTIONS`.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_WS_MAX_CONNECTIONS_PER_KEY = 100;

  /**
   * Open graphql-ws connections one remote address may hold before `connection_init`
   * authenticated them; one more is closed at once with 1013, reason `TOO_MANY_PENDING_CONNECTIONS`.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_WS_MAX_PENDING_PER_ADDRESS = 16;

  /**
   * Signals one run may hold buffered (sent before a node waited for them, not consumed yet); one
   * more is refused with CONFLICT.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_MAX_BUFFERED_SIGNALS = 1000;

  /**
   * Bytes of payload (JSON text as stored) one run's buffered signals may hold, default 16 MiB; a
   * signal that would take the run past it is refused with CONFLICT.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1024 * 1024 * 1024)
  WEFT_MAX_BUFFERED_SIGNAL_BYTES = 16 * 1024 * 1024;

  /**
   * Largest task output a worker may report, in UTF-8 bytes of its JSON text (default 1 MiB); a
   * larger one fails the attempt with OUTPUT_TOO_LARGE.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1024 * 1024 * 1024)
  WEFT_MAX_OUTPUT_BYTES = 1024 * 1024;

  /**
   * Bytes of stored JSON (run input/config/output, task input/output, history payloads and
   * actions, and the error texts, as PostgreSQL prints them) one GraphQL answer may hold, default 64 MiB; an operation
   * that would return more is refused with BAD_USER_INPUT before the values are read.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(1024 * 1024 * 1024)
  WEFT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

  /**
   * The deepest chain of SUBWORKFLOW child runs: a run at this depth (a run started
   * over the API is at 0) cannot start a child, and its SUBWORKFLOW node fails saying so.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  WEFT_MAX_SUBWORKFLOW_DEPTH = 10;

  /**
   * The most runs one tree of SUBWORKFLOW child runs may hold, its top run included: a
   * SUBWORKFLOW node of a full tree fails instead of starting a child (a recursive fan-out would
   * otherwise grow exponentially within the depth limit).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_MAX_RUN_TREE = 1000;

  /**
   * Lease of a dispatched worker task, ms after its `not_before`: an attempt no worker claimed
   * within it, whose Bull job is gone, is re-dispatched by the scheduler.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  WEFT_DISPATCH_LEASE_MS = 30_000;

  /**
   * Lease a worker's claim and each heartbeat give a running task, ms; workers heartbeat every
   * third of it. A task whose worker stopped heartbeating and whose job is gone is re-dispatched.
   */
  @Transform(toInt)
  @IsInt()
  @Min(300)
  @Max(3_600_000)
  WEFT_RUN_LEASE_MS = 15_000;

  /**
   * Bull's job lock, ms (`lockDuration`; renewed and checked for stalls every third of it): a
   * SIGKILLed worker's job is redelivered roughly this long (plus up to two thirds) after it died.
   */
  @Transform(toInt)
  @IsInt()
  @Min(300)
  @Max(3_600_000)
  WEFT_JOB_LOCK_MS = 15_000;

  /**
   * Port of the HTTP listener serving `/metrics`, `/healthz` and `/readyz` on a process without
   * the API (`weft worker`, `weft scheduler`); unset, such a process has none. A process with the
   * API serves them on the API's port.
   */
  @ValidateIf((env: WeftEnv) => env.WEFT_METRICS_PORT !== undefined)
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  WEFT_METRICS_PORT: number | undefined = undefined;

  /**
   * OpenTelemetry: the OTLP/HTTP endpoint spans are sent to (`/v1/traces` is appended), as the
   * OpenTelemetry SDKs read it; unset, no span is exported.
   */
  @ValidateIf((env: WeftEnv) => env.OTEL_EXPORTER_OTLP_ENDPOINT !== '')
  @Matches(/^https?:\/\/\S+$/, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT = '';

  /** The traces endpoint itself (used as it is), winning over OTEL_EXPORTER_OTLP_ENDPOINT. */
  @ValidateIf((env: WeftEnv) => env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== '')
  @Matches(/^https?:\/\/\S+$/, { message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL' })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = '';

  /** `service.name` of the exported spans. */
  @IsString()
  OTEL_SERVICE_NAME = 'weft';

  /** The interface that listener binds to (default every one: orchestrators probe it from outside). */
  @IsString()
  WEFT_METRICS_HOST = '0.0.0.0';

  /** Add a `tenant` label to the run and task metrics (one series per tenant: off by default). */
  @Transform(toBool)
  @IsBoolean({ message: 'WEFT_METRICS_TENANT_LABEL must be 1/true/yes/on or 0/false/no/off' })
  WEFT_METRICS_TENANT_LABEL = false;

  /**
   * The least severe level logged: fatal, error, warn, info, debug or trace (`log` is accepted
   * as `info`, Nest's name for it).
   */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsIn([...WEFT_LOG_LEVELS, 'log'], { message: `WEFT_LOG_LEVEL must be one of ${WEFT_LOG_LEVELS.join(', ')}` })
  WEFT_LOG_LEVEL: WeftLogLevel | 'log' = 'info';

  /**
   * How records are written: `json` (one JSON object per line, for collectors), `pretty` (one
   * readable line, for people) or `auto` (pretty when stdout is a terminal, else json).
   */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsIn(['json', 'pretty', 'auto'], { message: 'WEFT_LOG_FORMAT must be json, pretty or auto' })
  WEFT_LOG_FORMAT: 'json' | 'pretty' | 'auto' = 'auto';
}

/** The validated configuration handed to every module. */
export interface WeftConfig {
  /** The runtime role's connection (row-level security applies). */
  databaseUrl: string;
  /** The owner's connection: creating the database and migrating only. */
  ownerDatabaseUrl: string;
  redisUrl: string;
  port: number;
  queues: string[];
  workerConcurrency: number;
  /** WEFT_EAGER_DISPATCH: attempts a worker slot takes in a row from its own reports (0: none). */
  eagerDispatch: number;
  /** WEFT_DRAIN_SECONDS: how long a worker stopping on SIGTERM lets its executions finish before it hands them back. */
  drainSeconds: number;
  httpAllowPrivate: boolean;
  httpAllowHosts: string[];
  /** WEFT_CODE_UNCONFINED: run CODE without full isolation (local development). `undefined`: not set. */
  codeUnconfined: boolean | undefined;
  /** WEFT_CODE_MAX_PROCESSES: processes and threads one CODE execution may hold (default 128). */
  codeMaxProcesses: number;
  schedulerIntervalMs: number;
  dbPoolSize: number;
  /** A revoked key's open graphql-ws connection is closed within this many milliseconds. */
  wsKeyRecheckMs: number;
  /** WEFT_WS_MAX_CONNECTIONS: open graphql-ws connections per API process (default 1000). */
  wsMaxConnections: number;
  /** WEFT_WS_MAX_CONNECTIONS_PER_KEY: open graphql-ws connections per API key and process (default 100). */
  wsMaxConnectionsPerKey: number;
  /** WEFT_WS_MAX_PENDING_PER_ADDRESS: graphql-ws connections not yet authenticated per remote address (default 16). */
  wsMaxPendingPerAddress: number;
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
  /** WEFT_METRICS_PORT: the metrics and health listener of a process without the API; undefined: none. */
  metricsPort: number | undefined;
  /** WEFT_METRICS_HOST: the interface of that listener. */
  metricsHost: string;
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
  const queues =
    dto.WEFT_QUEUES.trim().toLowerCase() === 'all'
      ? [...DEFAULT_QUEUES]
      : [...new Set(dto.WEFT_QUEUES.split(',').map((q) => q.trim().toLowerCase()).filter(Boolean))];
  return {
    databaseUrl: dto.DATABASE_URL,
    ownerDatabaseUrl: dto.DATABASE_OWNER_URL || ownerUrlOf(dto.DATABASE_URL),
    redisUrl: dto.REDIS_URL,
    port: dto.PORT,
    queues,
    workerConcurrency: dto.WEFT_WORKER_CONCURRENCY,
    eagerDispatch: dto.WEFT_EAGER_DISPATCH,
    drainSeconds: dto.WEFT_DRAIN_SECONDS,
    httpAllowPrivate: dto.WEFT_HTTP_ALLOW_PRIVATE,
    httpAllowHosts: dto.WEFT_HTTP_ALLOW_HOSTS.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
    codeUnconfined: raw.WEFT_CODE_UNCONFINED === undefined ? undefined : dto.WEFT_CODE_UNCONFINED,
    codeMaxProcesses: dto.WEFT_CODE_MAX_PROCESSES,
    schedulerIntervalMs: dto.WEFT_SCHEDULER_INTERVAL_MS,
    dbPoolSize: dto.WEFT_DB_POOL_SIZE,
    wsKeyRecheckMs: dto.WEFT_WS_KEY_RECHECK_MS,
    wsMaxConnections: dto.WEFT_WS_MAX_CONNECTIONS,
    wsMaxConnectionsPerKey: dto.WEFT_WS_MAX_CONNECTIONS_PER_KEY,
    wsMaxPendingPerAddress: dto.WEFT_WS_MAX_PENDING_PER_ADDRESS,
    maxBufferedSignals: dto.WEFT_MAX_BUFFERED_SIGNALS,
    maxBufferedSignalBytes: dto.WEFT_MAX_BUFFERED_SIGNAL_BYTES,
    maxOutputBytes: dto.WEFT_MAX_OUTPUT_BYTES,
    maxResponseBytes: dto.WEFT_MAX_RESPONSE_BYTES,
    maxSubworkflowDepth: dto.WEFT_MAX_SUBWORKFLOW_DEPTH,
    maxRunTree: dto.WEFT_MAX_RUN_TREE,
    dispatchLeaseMs: dto.WEFT_DISPATCH_LEASE_MS,
    runLeaseMs: dto.WEFT_RUN_LEASE_MS,
    jobLockMs: dto.WEFT_JOB_LOCK_MS,
    logLevel: dto.WEFT_LOG_LEVEL === 'log' ? 'info' : dto.WEFT_LOG_LEVEL,
    logFormat: dto.WEFT_LOG_FORMAT === 'auto' ? (process.stdout.isTTY ? 'pretty' : 'json') : dto.WEFT_LOG_FORMAT,
    metricsPort: dto.WEFT_METRICS_PORT,
    metricsHost: dto.WEFT_METRICS_HOST.trim() || '0.0.0.0',
    metricsTenantLabel: dto.WEFT_METRICS_TENANT_LABEL,
    otlpTracesUrl: dto.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (dto.OTEL_EXPORTER_OTLP_ENDPOINT ? `${dto.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
    serviceName: dto.OTEL_SERVICE_NAME,
  };
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

import 'reflect-metadata';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
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

  /**
   * Comma-separated queues a worker serves, or `all`; each name as a definition's `queue` may give
   * it (1 to 64 of `a-z0-9_.-`, first a letter or digit, any case), white space only around it.
   */
  @IsString()
  @Matches(/^\s*(?:[a-z0-9][a-z0-9_.-]{0,63})?\s*(?:,\s*(?:[a-z0-9][a-z0-9_.-]{0,63})?\s*)*$/i, {
    message: 'WEFT_QUEUES must be a comma-separated list of queue names (1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit), or "all"',
  })
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
   * Fenced steps: a worker's report on a run whose previous event the same process applied is
   * decided from memory and written by one fenced statement, committed with the other reports
   * queued meanwhile, instead of locking the run first. On by default; off sends every report
   * down the locking path (to compare, or to rule it out).
   */
  @Transform(toBool)
  @IsBoolean({ message: 'WEFT_FENCED_STEPS must be 1/true/yes/on or 0/false/no/off' })
  WEFT_FENCED_STEPS = true;

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

  /**
   * Memory all of a worker's CODE executions may hold together, MiB: their parent cgroup's limit,
   * and what an execution reserves before it starts. Unset: half the host's memory, at least 4,096.
   */
  @Transform(toInt)
  @ValidateIf((_env: WeftEnv, value: unknown) => value !== undefined)
  @IsInt({ message: 'WEFT_CODE_MAX_TOTAL_MB must be a whole number of MiB' })
  @Min(16)
  @Max(16_777_216)
  WEFT_CODE_MAX_TOTAL_MB: number | undefined = undefined;

  /** Host names HTTP nodes may reach even when they resolve to private addresses. */
  @IsString()
  WEFT_HTTP_ALLOW_HOSTS = '';

  /** How often the scheduler polls for due timers and unsent outbox rows, in milliseconds. */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(60000)
  WEFT_SCHEDULER_INTERVAL_MS = 250;

  /**
   * How often the scheduler deletes the run trees past their tenant's retention, in milliseconds
   * (a pass is bounded in time, so this is also how soon a large backlog goes on being deleted).
   */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(86_400_000)
  WEFT_RETENTION_INTERVAL_MS = 60_000;

  /** The most runs a bulk action (createRunBatch) acts on per second, across the scheduler's passes. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  WEFT_BATCH_RUNS_PER_SECOND = 100;

  /** The first backoff of a failed webhook delivery, ms; attempt n waits 2^(n-1) times it (at most an hour). Tests shorten it. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(60_000)
  WEFT_WEBHOOK_BACKOFF_MS = 1_000;

  /** Schedules one tenant may hold; one more is refused with BAD_USER_INPUT. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_MAX_SCHEDULES_PER_TENANT = 1000;

  /** The smallest gap between two fires a schedule may set (an interval, or a cron's seconds to hours), seconds. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(86_400)
  WEFT_MIN_SCHEDULE_INTERVAL_SECONDS = 10;

  /** Unfinished backfills one tenant may hold at once; one more is refused with CONFLICT. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT = 4;

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
   * Open graphql-ws connections one tenant may hold on the API process, whatever keys it uses;
   * one more is closed once authenticated with 4029, reason `TOO_MANY_TENANT_CONNECTIONS`. Must
   * be below WEFT_WS_MAX_CONNECTIONS, so one tenant never holds them all; unset, 200 or half of
   * WEFT_WS_MAX_CONNECTIONS, whichever is less.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_WS_MAX_CONNECTIONS_PER_TENANT = 200;

  /**
   * Open graphql-ws connections one remote address may hold before `connection_init`
   * authenticated them; one more is closed at once with 1013, reason `TOO_MANY_PENDING_CONNECTIONS`.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_WS_MAX_PENDING_PER_ADDRESS = 16;

  /** Live (not revoked) API keys one tenant may hold; one more is refused with CONFLICT. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEFT_MAX_KEYS_PER_TENANT = 100;

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
   * The most nodes a published definition may have (default 2,000): one with more is refused
   * with BAD_USER_INPUT right after parsing, before it is validated.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000)
  WEFT_MAX_DEFINITION_NODES = 2000;

  /** The most edges a published definition may have (default 10,000), refused like too many nodes. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(500_000)
  WEFT_MAX_DEFINITION_EDGES = 10_000;

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
   * Port of the ops listener serving `/metrics`, `/healthz` and `/readyz` of any process (API,
   * worker, scheduler), apart from the API's public port (which answers only a bare `/healthz`);
   * unset, the process has none (`weft dev` then picks a free one).
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

  /**
   * The interface that listener binds to (default loopback; `0.0.0.0` where a scraper or a probe
   * comes from another container or host, as the image and docker-compose.yml set).
   */
  @IsString()
  WEFT_METRICS_HOST = '127.0.0.1';

  /**
   * Distinct workflows of one tenant kept as `workflow` label values per process; the tenant's
   * later ones count as `workflow="_other"` under its own budget, so no tenant takes another's.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  WEFT_METRICS_WORKFLOWS_PER_TENANT = 20;

  /** Distinct `workflow` label values per process, all tenants together; past it, `_other`. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000)
  WEFT_METRICS_MAX_WORKFLOWS = 200;

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

  /**
   * Weft's own folder on this machine: `weft dev` keeps its embedded PostgreSQL's data in
   * `$WEFT_HOME/dev-postgres`. Default `~/.weft`; as root `/var/lib/weft` (the server runs as an
   * unprivileged user, who cannot enter /root; when that user cannot run the binaries where npm
   * installed them, they are copied into `$WEFT_HOME/postgres-<version>`).
   */
  @IsString()
  WEFT_HOME = '';
}

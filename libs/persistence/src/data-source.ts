import type { EventEmitter } from 'node:events';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { OutboxEntity } from './entities/outbox.entity.js';
import { RunEventEntity } from './entities/run-event.entity.js';
import { RunEntity } from './entities/run.entity.js';
import { SignalEntity } from './entities/signal.entity.js';
import { TaskEntity } from './entities/task.entity.js';
import { TenantEntity } from './entities/tenant.entity.js';
import { WorkflowVersionEntity } from './entities/workflow-version.entity.js';
import { WorkflowEntity } from './entities/workflow.entity.js';
import { InitialSchema1764489600000 } from './migrations/1764489600000-initial-schema.js';
import { LostTaskIndex1764576000000 } from './migrations/1764576000000-lost-task-index.js';
import { VersionManagement1764662400000 } from './migrations/1764662400000-version-management.js';
import { RowLevelSecurity1764748800000 } from './migrations/1764748800000-row-level-security.js';
import { TaskLeases1764835200000 } from './migrations/1764835200000-task-leases.js';
import { IterationsAndChildRuns1764921600000 } from './migrations/1764921600000-iterations-and-child-runs.js';
import { RunTreesAndChildRetries1765008000000 } from './migrations/1765008000000-run-trees-and-child-retries.js';
import { TasksByRun1765094400000 } from './migrations/1765094400000-tasks-by-run.js';
import { WriteAssertions1765180800000 } from './migrations/1765180800000-write-assertions.js';
import { TenantFirstKeys1765267200000 } from './migrations/1765267200000-tenant-first-keys.js';
import { OperationalStats1765353600000 } from './migrations/1765353600000-operational-stats.js';
import { WorkersAndQueueReservations1765440000000 } from './migrations/1765440000000-workers-and-queue-reservations.js';
import { RunTraces1765526400000 } from './migrations/1765526400000-run-traces.js';
import { Schedules1765612800000 } from './migrations/1765612800000-schedules.js';
import { FairScheduleClaims1765699200000 } from './migrations/1765699200000-fair-schedule-claims.js';
import { StoredJsonSizes1765785600000 } from './migrations/1765785600000-stored-json-sizes.js';
import { FairDispatch1765872000000 } from './migrations/1765872000000-fair-dispatch.js';
import { FlowUpkeep1765958400000 } from './migrations/1765958400000-flow-upkeep.js';
import { DerivedCompletions1766131200000 } from './migrations/1766131200000-derived-completions.js';
import { StablePlans1766044800000 } from './migrations/1766044800000-stable-plans.js';
import { AttemptLogs1766217600000 } from './migrations/1766217600000-attempt-logs.js';
import { UniqueTenantNames1766304000000 } from './migrations/1766304000000-unique-tenant-names.js';
import { AttemptLogsByTask1766390400000 } from './migrations/1766390400000-attempt-logs-by-task.js';
import { RunLabels1766476800000 } from './migrations/1766476800000-run-labels.js';
import { RunRetention1766563200000 } from './migrations/1766563200000-run-retention.js';
import { RunPauses1766649600000 } from './migrations/1766649600000-run-pauses.js';
import { RunDeadlines1766736000000 } from './migrations/1766736000000-run-deadlines.js';
import { StartDeadlines1766822400000 } from './migrations/1766822400000-start-deadlines.js';
import { RunSearchIndexes1766908800000 } from './migrations/1766908800000-run-search-indexes.js';
import { RunBatches1766995200000 } from './migrations/1766995200000-run-batches.js';
import { Webhooks1767081600000 } from './migrations/1767081600000-webhooks.js';
import { RunFinally1767427200000 } from './migrations/1767427200000-run-finally.js';
import { LoopIterations1767513600000 } from './migrations/1767513600000-loop-iterations.js';

/** Every entity of the schema. */
export const ENTITIES = [TenantEntity, ApiKeyEntity, WorkflowEntity, WorkflowVersionEntity, RunEntity, TaskEntity, SignalEntity, RunEventEntity, OutboxEntity];

/** Every migration, oldest first. The schema is built by migrations only, never `synchronize`. */
export const MIGRATIONS = [
  InitialSchema1764489600000,
  LostTaskIndex1764576000000,
  VersionManagement1764662400000,
  RowLevelSecurity1764748800000,
  TaskLeases1764835200000,
  IterationsAndChildRuns1764921600000,
  RunTreesAndChildRetries1765008000000,
  TasksByRun1765094400000,
  WriteAssertions1765180800000,
  TenantFirstKeys1765267200000,
  OperationalStats1765353600000,
  WorkersAndQueueReservations1765440000000,
  RunTraces1765526400000,
  Schedules1765612800000,
  FairScheduleClaims1765699200000,
  StoredJsonSizes1765785600000,
  FairDispatch1765872000000,
  FlowUpkeep1765958400000,
  StablePlans1766044800000,
  DerivedCompletions1766131200000,
  AttemptLogs1766217600000,
  UniqueTenantNames1766304000000,
  AttemptLogsByTask1766390400000,
  RunLabels1766476800000,
  RunRetention1766563200000,
  RunPauses1766649600000,
  RunDeadlines1766736000000,
  StartDeadlines1766822400000,
  RunSearchIndexes1766908800000,
  RunBatches1766995200000,
  Webhooks1767081600000,
  RunFinally1767427200000,
  LoopIterations1767513600000,
];

/** Options of {@link createDataSource}. */
export interface DataSourceOptions {
  /** Maximum pooled connections (pg default 10). */
  poolSize?: number;
  /** `application_name` shown in `pg_stat_activity` (default `weft`). */
  applicationName?: string;
  /** Log every query through TypeORM's console logger (debugging only). */
  logging?: boolean;
  /** Server-side `statement_timeout` in milliseconds for every connection (default none). */
  statementTimeoutMs?: number;
}

/**
 * A PostgreSQL DataSource for `url` (`postgres://user@host:port/db`) with every entity and
 * migration registered, `synchronize` and `migrationsRun` off. Not initialized: call
 * `initialize()` (and `destroy()` when done).
 */
export function createDataSource(url: string, opts: DataSourceOptions = {}): DataSource {
  return new GuardedDataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: opts.logging ?? false,
    poolSize: opts.poolSize,
    applicationName: opts.applicationName ?? 'weft',
    extra: opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : undefined,
  });
}

/**
 * A DataSource whose pooled connections can never crash the process: pg emits `error` on a
 * client whose connection breaks (a terminated backend, a network cut); while TypeORM holds the
 * client it listens, but a second error after it let go, or one between two checkouts, would be
 * an unhandled `error` event. Every client of the pool gets a listener that drops it (the pool
 * and the failing query already deal with the broken connection).
 */
class GuardedDataSource extends DataSource {
  override async initialize(): Promise<this> {
    await super.initialize();
    const pool = (this.driver as unknown as { master?: EventEmitter & { _clients?: EventEmitter[] } }).master;
    if (pool && typeof pool.on === 'function') {
      const guard = (client: EventEmitter) => {
        if (!client.listeners('error').includes(ignoreClientError)) client.on('error', ignoreClientError);
      };
      pool.on('connect', guard);
      for (const client of pool._clients ?? []) guard(client);
    }
    return this;
  }
}

function ignoreClientError(): void {
  // The broken connection is discarded by the pool; its query (if any) fails on its own.
}

/** Advisory lock key serializing concurrent `runMigrations` calls on one database. */
const MIGRATION_LOCK = 7_310_517_203;

/**
 * Applies every pending migration to the database at `url`, each in its own transaction, and
 * returns the names of the migrations it applied. Concurrent callers (several processes
 * booting at once) are serialized by a PostgreSQL advisory lock, so each migration runs once.
 */
export async function runMigrations(url: string): Promise<string[]> {
  const lock = new pg.Client({ connectionString: url, application_name: 'weft-migrate-lock' });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const ds = createDataSource(url, { poolSize: 1, applicationName: 'weft-migrate' });
    await ds.initialize();
    try {
      const applied = await ds.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await ds.destroy();
    }
  } finally {
    await lock.end().catch(() => undefined);
  }
}

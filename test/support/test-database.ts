import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource, runMigrations } from '@weft/persistence';

/**
 * One PostgreSQL database per test file, cloned from a migrated template (after
 * Trigger.dev): the template `weft_test_template_<hash of the migration files>` is created once
 * (by Jest's globalSetup, or lazily by the first clone) and every suite gets a fresh
 * `CREATE DATABASE … TEMPLATE …` copy in milliseconds instead of re-running migrations.
 *
 * `WEFT_TEST_PG_URL` points at the server's maintenance database (default
 * `postgres://postgres@127.0.0.1:5432/postgres`, the local trust-auth superuser).
 */
export const ADMIN_URL = process.env.WEFT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../libs/persistence/src/migrations/', import.meta.url));
/** Advisory lock key serializing template creation across Jest workers and parallel runs. */
const TEMPLATE_LOCK = 7_310_517_204;

/** Login role the runtime connects as (created by the row-level-security migration). */
export const RUNTIME_ROLE = 'weft_app';

/** A database of the local server with the same credentials as {@link ADMIN_URL} (the owner's). */
export function databaseUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The same database as the runtime role {@link RUNTIME_ROLE}, which row-level security holds. */
export function runtimeUrl(name: string): string {
  const u = new URL(databaseUrl(name));
  u.username = RUNTIME_ROLE;
  u.password = '';
  return u.toString();
}

/**
 * Name of the template database for the current migration files (changes when they change).
 * global-setup.ts computes the same name with the same algorithm (it cannot import this file).
 */
export function templateName(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    h.update(f)
      .update('\0')
      .update(readFileSync(join(MIGRATIONS_DIR, f)))
      .update('\0');
  }
  return `weft_test_template_${h.digest('hex').slice(0, 16)}`;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL, application_name: 'weft-test-admin' });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates the migrated template database if it does not exist yet and returns its name. Safe
 * to call concurrently: creation runs under an advisory lock and migrates a scratch database
 * that is renamed into place only when complete, so a half-migrated template is never cloned.
 */
export async function ensureTemplate(): Promise<string> {
  const name = templateName();
  await admin(async (c) => {
    const exists = async () => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (await exists()) return;
    await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      if (await exists()) return;
      const scratch = `${name}_tmp_${process.pid}`;
      await c.query(`DROP DATABASE IF EXISTS ${quote(scratch)}`);
      await c.query(`CREATE DATABASE ${quote(scratch)}`);
      await runMigrations(databaseUrl(scratch));
      await c.query(`ALTER DATABASE ${quote(scratch)} RENAME TO ${quote(name)}`);
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return name;
}

/**
 * A test's own database: `url` and `ds` connect as the runtime role (row-level security applies,
 * as in production); `ownerUrl` and `owner` as the tables' owner, for what only the owner may do
 * in a test (triggers that play a failing database, reading across tenants to check a result).
 * `drop()` removes it all.
 */
export interface TestDatabase {
  name: string;
  url: string;
  ds: DataSource;
  ownerUrl: string;
  owner: DataSource;
  /**
   * Closes both DataSources, drops the database (terminating any connection still open on it) and
   * deletes the Redis keys of its queues (`weft:<name>:*`, Bull's job counters and what a suite left).
   */
  drop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Clones the migrated template into a uniquely named database (`weft_test_<pid>_<random>`)
 * and returns it with initialized DataSources (the runtime's `poolSize` default 10). Retries the clone
 * while the template is briefly accessed by another session (SQLSTATE 55006), for up to 60 s.
 */
export async function createTestDatabase(opts: { poolSize?: number } = {}): Promise<TestDatabase> {
  // globalSetup created the template and named it; without it (another runner), create it here.
  const template = process.env.WEFT_TEST_TEMPLATE ?? (await ensureTemplate());
  const name = `weft_test_${process.pid}_${randomBytes(5).toString('hex')}`;
  await admin(async (c) => {
    // For up to 60 s: another run on the machine may be creating its own clone at the same time.
    for (const deadline = Date.now() + 60_000; ;) {
      try {
        await c.query(`CREATE DATABASE ${quote(name)} TEMPLATE ${quote(template)}`);
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || Date.now() > deadline) throw err;
        await sleep(50 + Math.random() * 100);
      }
    }
  });
  const url = runtimeUrl(name);
  const ownerUrl = databaseUrl(name);
  const ds = createDataSource(url, { poolSize: opts.poolSize ?? 10, applicationName: 'weft-test' });
  const owner = createDataSource(ownerUrl, { poolSize: 2, applicationName: 'weft-test-owner' });
  await Promise.all([ds.initialize(), owner.initialize()]);
  return {
    name,
    url,
    ds,
    ownerUrl,
    owner,
    async drop() {
      if (ds.isInitialized) await ds.destroy();
      if (owner.isInitialized) await owner.destroy();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`));
      await deleteRedisKeys(`weft:${name}:*`);
    },
  };
}

/**
 * Deletes the Redis keys matching `pattern` (best effort: a suite without Redis has none). The keys
 * of a test database's queues are `weft:<database name>:…` (`queuePrefix` in libs/platform).
 */
export async function deleteRedisKeys(pattern: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } catch {
    // Redis not reachable: nothing of this database's queues can be there to delete.
  } finally {
    redis.disconnect();
  }
}

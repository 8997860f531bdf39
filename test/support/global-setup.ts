/**
 * Jest globalSetup: creates the migrated template database `weft_test_template_<hash of the
 * migration files>` once (a no-op while the migrations are unchanged) before any suite clones it
 * (see test-database.ts), and hands its name to the test workers in `WEFT_TEST_TEMPLATE`. First it
 * drops the test databases a killed run left behind (those of processes that are gone).
 *
 * Jest loads this module natively, without its module mapper or transformer for imports, so it
 * imports no project TypeScript: it transpiles the migration files itself (they may import only
 * types) and runs them with TypeORM's own migration runner, as `runMigrations` would.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import ts from 'typescript';
import { DataSource } from 'typeorm';

const ADMIN_URL = process.env.WEFT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MIGRATIONS_DIR = fileURLToPath(new URL('../../libs/persistence/src/migrations/', import.meta.url));
/** Same key as test-database.ts: template creation is serialized across processes. */
const TEMPLATE_LOCK = 7_310_517_204;

function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort();
}

/** Same algorithm as `templateName()` in test-database.ts. */
function templateName(): string {
  const h = createHash('sha256');
  for (const f of migrationFiles())
    h.update(f)
      .update('\0')
      .update(readFileSync(join(MIGRATIONS_DIR, f)))
      .update('\0');
  return `weft_test_template_${h.digest('hex').slice(0, 16)}`;
}

function dbUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function migrate(url: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-migrations-'));
  try {
    const classes: (new () => unknown)[] = [];
    for (const f of migrationFiles()) {
      const out = ts.transpileModule(readFileSync(join(MIGRATIONS_DIR, f), 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const file = join(dir, f.replace(/\.ts$/, '.mjs'));
      writeFileSync(file, out);
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const v of Object.values(mod)) if (typeof v === 'function' && typeof v.prototype?.up === 'function') classes.push(v as new () => unknown);
    }
    const ds = new DataSource({ type: 'postgres', url, migrations: classes, migrationsTableName: 'migrations', poolSize: 1 });
    await ds.initialize();
    try {
      await ds.runMigrations({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether process `pid` of this machine is gone. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Drops the test databases (`weft_test_<pid>_…`, see test-database.ts) of processes of this machine
 * that are gone: a run that was killed left them. Databases of live processes (another run on the
 * machine) and the templates are left alone.
 */
async function dropLeftovers(c: pg.Client, q: (n: string) => string): Promise<void> {
  const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname ~ '^weft_test_[0-9]+_'`);
  for (const { datname } of rows) {
    const pid = Number(/^weft_test_(\d+)_/.exec(datname)![1]);
    if (pid !== process.pid && gone(pid)) await c.query(`DROP DATABASE IF EXISTS ${q(datname)} WITH (FORCE)`).catch(() => undefined);
  }
}

export default async function globalSetup(): Promise<void> {
  const name = templateName();
  const q = (n: string) => `"${n.replace(/"/g, '""')}"`;
  const c = new pg.Client({ connectionString: ADMIN_URL, application_name: 'weft-test-setup' });
  await c.connect();
  try {
    await dropLeftovers(c, q);
    const exists = async () => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
    if (!(await exists())) {
      await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
      try {
        if (!(await exists())) {
          const scratch = `${name}_tmp_${process.pid}`;
          await c.query(`DROP DATABASE IF EXISTS ${q(scratch)}`);
          await c.query(`CREATE DATABASE ${q(scratch)}`);
          await migrate(dbUrl(scratch));
          await c.query(`ALTER DATABASE ${q(scratch)} RENAME TO ${q(name)}`);
        }
      } finally {
        await c.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
      }
    }
  } finally {
    await c.end();
  }
  process.env.WEFT_TEST_TEMPLATE = name;
}

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '@weft/persistence';
import { ADMIN_URL, databaseUrl } from './test-database.js';

/**
 * An empty database of its own for a test of one migration on rows written before it: created by
 * {@link create}, migrated by the owner up to any migration with {@link migrator}, dropped by
 * {@link drop}. `name` ends in `suffix`; `ownerUrl` connects as the tables' owner.
 */
export function migrationDatabase(suffix: string) {
  const name = `weft_test_${process.pid}_${randomBytes(5).toString('hex')}_${suffix}`;
  const ownerUrl = databaseUrl(name);
  return {
    name,
    ownerUrl,
    create: () => admin(`CREATE DATABASE "${name}"`),
    drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
    /** A DataSource of the owner that knows the first `count` migrations of {@link MIGRATIONS}. */
    migrator: (count: number) =>
      new DataSource({ type: 'postgres', url: ownerUrl, migrations: MIGRATIONS.slice(0, count), migrationsTableName: 'migrations', poolSize: 1 }),
  };
}

/** Runs `text` on the server's administrative database. */
async function admin(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

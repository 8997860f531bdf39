import type { DataSource } from 'typeorm';
import type { WeftConfig } from '@weft/platform';

// Loaded when an admin command runs, like the other server commands (see server-commands.ts).
const serverSide = () => import('./server-side.js');

/** What the server side offers the admin commands (Nest, TypeORM and the repositories, loaded lazily). */
export type ServerSide = Awaited<ReturnType<typeof serverSide>>;

/**
 * The database as the `admin` commands use it: refuses a database that does not exist (a mistyped
 * name), migrates it as the owner (`DATABASE_OWNER_URL`), checks the runtime role like every
 * server process, then runs `fn` on a runtime connection (`DATABASE_URL`, under row-level
 * security) and closes it.
 */
export async function withAdminDatabase(fn: (ds: DataSource, s: ServerSide, config: WeftConfig) => Promise<void>): Promise<void> {
  const s = await serverSide();
  const config = s.loadConfig();
  await s.ensureDatabase(config.ownerDatabaseUrl, { create: false });
  await s.runMigrations(config.ownerDatabaseUrl);
  await s.ensureRuntimeRole(config.databaseUrl);
  const ds = s.createDataSource(config.databaseUrl, { poolSize: 1 });
  await ds.initialize();
  try {
    await fn(ds, s, config);
  } finally {
    await ds.destroy();
  }
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the database';
  }
}

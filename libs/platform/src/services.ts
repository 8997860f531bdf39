import pg from 'pg';
import { Redis } from 'ioredis';
import { checkRuntimeRole, createDatabase, createDataSource, RuntimeRoleError } from '@weft/persistence';
import { databaseNameOf, serverOf } from './urls.js';

/** A backing service could not be reached; `message` is one line saying which and how to start it. */
export class ServiceUnavailableError extends Error {
  override name = 'ServiceUnavailableError';
}

function reason(err: unknown): string {
  const e = err as { code?: string; message?: string };
  if (e.message && e.code && !e.message.includes(e.code)) return `${e.message} (${e.code})`;
  return e.message || e.code || String(err);
}

/**
 * Checks PostgreSQL answers at `url` (the owner's connection, `DATABASE_OWNER_URL`) and, with
 * `create` (the default; `weft dev`, `weft migrate`), creates the database when it is missing,
 * so the default `weft` database needs no set-up. Without `create` a missing database is an
 * error naming it (a mistyped name must not quietly become a new, empty installation). Resolves
 * true when it created the database. Throws {@link ServiceUnavailableError} when the server
 * cannot be reached or the URL is malformed.
 */
export async function ensureDatabase(url: string, opts: { create?: boolean } = {}): Promise<boolean> {
  try {
    new URL(url);
  } catch {
    throw new ServiceUnavailableError(`DATABASE_URL is not a valid URL: ${url}`);
  }
  const dbName = databaseNameOf(url, 'postgres');
  const tryConnect = async (u: string) => {
    const c = new pg.Client({ connectionString: u, connectionTimeoutMillis: 5000 });
    await c.connect();
    return c;
  };
  try {
    const c = await tryConnect(url);
    await c.end();
    return false;
  } catch (err) {
    if ((err as { code?: string }).code === '3D000' && opts.create === false) {
      throw new ServiceUnavailableError(
        `database "${dbName}" does not exist at ${serverOf(url)}: check the name in DATABASE_URL, or create it with \`weft migrate\` (or \`weft dev\`)`,
      );
    }
    if ((err as { code?: string }).code !== '3D000') {
      throw new ServiceUnavailableError(
        `Cannot reach PostgreSQL at ${serverOf(url)} (${reason(err)}). Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start), or set DATABASE_URL to a server that answers: a weft dev on its embedded PostgreSQL prints that URL on its "Weft database:" line.`,
      );
    }
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const c = await tryConnect(admin.toString()).catch((err) => {
    throw new ServiceUnavailableError(`Cannot create database "${dbName}" at ${serverOf(url)}: ${reason(err)}`);
  });
  try {
    return await createDatabase(c, dbName);
  } catch (err) {
    throw new ServiceUnavailableError(`Cannot create database "${dbName}" at ${serverOf(url)}: ${reason(err)}`);
  } finally {
    await c.end();
  }
}

/**
 * The one-line error for a runtime connection (`DATABASE_URL`) that failed to open or failed
 * {@link checkRuntimeRole}: a missing role or database says to migrate first; anything else
 * names the server. Returns a {@link ServiceUnavailableError}.
 */
export function runtimeConnectionError(err: unknown, url: string): ServiceUnavailableError {
  const code = (err as { code?: string }).code;
  if (err instanceof RuntimeRoleError) return new ServiceUnavailableError(err.message);
  const db = databaseNameOf(url, 'weft');
  let user = 'weft_app';
  try {
    user = decodeURIComponent(new URL(url).username) || user;
  } catch {
    // keep the default in the message
  }
  if (code === '3D000') {
    return new ServiceUnavailableError(
      `database "${db}" of DATABASE_URL does not exist: run \`weft migrate\` (it creates the database of DATABASE_OWNER_URL), and make DATABASE_URL and DATABASE_OWNER_URL name the same database`,
    );
  }
  if (code === '28000' && user === 'weft_app') {
    return new ServiceUnavailableError('role weft_app does not exist yet: run `weft migrate` first (the migrations create it), or start with `weft dev`');
  }
  if (code === '28000' || code === '28P01') {
    return new ServiceUnavailableError(
      `PostgreSQL refused DATABASE_URL's role ${user} (${(err as Error).message}): connect as weft_app, or create ${user} and run \`GRANT weft_app TO ${user}\``,
    );
  }
  return new ServiceUnavailableError(`Cannot connect to PostgreSQL at ${serverOf(url)} as DATABASE_URL (${reason(err)})`);
}

/**
 * Opens one connection as `DATABASE_URL` and runs {@link checkRuntimeRole} on it, so a process
 * refuses to start with one clear line (a {@link ServiceUnavailableError} from
 * {@link runtimeConnectionError}) before anything else boots.
 */
export async function ensureRuntimeRole(url: string): Promise<void> {
  const ds = createDataSource(url, { poolSize: 1, applicationName: 'weft-check' });
  try {
    await ds.initialize();
    await checkRuntimeRole(ds);
  } catch (err) {
    throw runtimeConnectionError(err, url);
  } finally {
    if (ds.isInitialized) await ds.destroy().catch(() => undefined);
  }
}

/** Checks Redis answers PING at `url` within 3 s; throws {@link ServiceUnavailableError} otherwise. */
export async function ensureRedis(url: string): Promise<void> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  let cause: unknown;
  r.on('error', (err) => (cause ??= err));
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    let port = '6379';
    try {
      port = new URL(url).port || port;
    } catch {
      // keep the default port in the hint
    }
    throw new ServiceUnavailableError(
      `Cannot reach Redis at ${serverOf(url)} (${reason(cause ?? err)}). Start it (redis-server --daemonize yes --bind 127.0.0.1 --port ${port} --save "") or set REDIS_URL.`,
    );
  } finally {
    r.disconnect();
  }
}

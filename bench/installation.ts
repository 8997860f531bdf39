/**
 * A Weft installation of a bench's own, as `npm run bench:attack` and `npm run bench:fairness`
 * use it: a fresh database `<dbPrefix>_<hex>` (`weft migrate`), tenants from `weft admin
 * create-tenant`, and `weft api`, `weft worker`, `weft scheduler` as separate processes (chaos's
 * `WeftProcess`) whose logs go to a temporary folder. {@link Installation.close} stops the
 * processes and drops the database, the Redis keys `weft:<database>:*` and the logs (unless
 * kept). Everything it talks to is on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { WeftClient } from '@weft/client';
import { dropInstallation, freePort, provisionTenant, weftEnv, withDb, WeftProcess } from '../chaos/processes.js';
import { waitForApi } from './weft.js';

/** The repository's root (the compiled file sits in dist/bench/). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = join(ROOT, 'dist/apps/cli/src/main.js');

/** The roles a bench starts, one process each. */
export type Role = 'api' | 'worker' | 'scheduler';

export interface InstallationOptions {
  /** The bench's name, in messages and as PostgreSQL's `application_name` of the clean-up. */
  tool: string;
  /** The database is `<dbPrefix>_<8 hex digits>`. */
  dbPrefix: string;
  /** PostgreSQL superuser URL without a database. */
  postgres: string;
  redis: string;
  /** Tenants to create, by name, in this order. */
  tenants: string[];
  /** Extra environment of one role's process (e.g. the worker's concurrency). */
  roleEnv?: Partial<Record<Role, NodeJS.ProcessEnv>>;
  keep: boolean;
  say: (line: string) => void;
}

export interface InstalledTenant {
  name: string;
  tenantId: string;
  apiKey: string;
}

export interface Installation {
  dbName: string;
  /** The Redis prefix of the installation's keys (without the trailing `:*`). */
  prefix: string;
  logDir: string;
  /** The API's GraphQL endpoint. */
  url: string;
  /** The database as its owner (superuser), for the bench's own reads. */
  ownerUrl: string;
  tenants: InstalledTenant[];
  /** The processes that exited without being asked, as `name (code c, signal s)`. */
  exits: string[];
  /** Pids of the three processes, by role (for /proc readings). */
  pids(): Partial<Record<Role, number>>;
  /** Stops the processes and removes what the installation made (unless `keep`); never throws. */
  close(): Promise<void>;
}

/**
 * Refuses a PostgreSQL or Redis URL that is not on this machine.
 * @throws Error `<tool> runs against this machine only, not <host>`.
 */
export function assertLoopback(tool: string, ...urls: string[]): void {
  for (const url of urls) {
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname))
      throw new Error(`${tool} runs against this machine only, not ${new URL(url).host}`);
  }
}

/**
 * Creates the database and tenants, starts the three processes and waits for the API to answer.
 * On failure, whatever it made is removed before the error is rethrown.
 */
export async function startInstallation(o: InstallationOptions): Promise<Installation> {
  const postgres = o.postgres.replace(/\/+$/, '');
  const dbName = `${o.dbPrefix}_${randomBytes(4).toString('hex')}`;
  const logDir = mkdtempSync(join(tmpdir(), `${dbName}-`));
  const prefix = `weft:${dbName}`;
  const ownerUrl = withDb(postgres, dbName);
  o.say(`${o.tool}: database ${dbName} · Redis keys ${prefix}:* · logs ${logDir}`);
  const redis = new Redis(o.redis, { maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined);
  const procs = new Map<Role, WeftProcess>();
  const exits: string[] = [];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.allSettled([...procs.values()].map((p) => p.stop()));
    if (o.keep) {
      o.say(`${o.tool}: kept database ${dbName}, Redis keys ${prefix}:* and logs in ${logDir}`);
    } else {
      try {
        const deleted = await dropInstallation(postgres, dbName, redis, prefix, o.tool);
        rmSync(logDir, { recursive: true, force: true });
        o.say(`${o.tool}: dropped database ${dbName}, ${deleted} Redis key${deleted === 1 ? '' : 's'} and the logs`);
      } catch (err) {
        o.say(`${o.tool}: cleanup failed: ${(err as Error).message}`);
      }
    }
    redis.disconnect();
  };
  try {
    const env = weftEnv(withDb(postgres, dbName, 'weft_app'), ownerUrl, o.redis, { WEFT_LOG_LEVEL: process.env.WEFT_LOG_LEVEL ?? 'warn' });
    const tenants: InstalledTenant[] = [];
    for (const [i, name] of o.tenants.entries()) {
      const t = i === 0 ? await provisionTenant(CLI, env, name) : await createTenant(env, name);
      tenants.push({ name, ...t });
    }
    const port = await freePort();
    const t0 = performance.now();
    const args: Record<Role, string[]> = { api: ['api', '--port', String(port), '--host', '127.0.0.1'], worker: ['worker'], scheduler: ['scheduler'] };
    for (const role of ['api', 'worker', 'scheduler'] as const) {
      const p = new WeftProcess(
        role,
        CLI,
        args[role],
        { ...env, ...o.roleEnv?.[role] },
        logDir,
        () => Math.round(performance.now() - t0),
        (e) => exits.push(`${e.name} (code ${e.code}, signal ${e.signal})`),
      );
      procs.set(role, p);
      p.start();
    }
    const url = `http://127.0.0.1:${port}/graphql`;
    await waitForApi(new WeftClient(url, tenants[0]!.apiKey), () => undefined, 'the Weft API');
    return {
      dbName,
      prefix,
      logDir,
      url,
      ownerUrl,
      tenants,
      exits,
      pids: () => Object.fromEntries([...procs].map(([role, p]) => [role, p.pid])),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A further tenant of a migrated database, through the CLI. */
async function createTenant(env: NodeJS.ProcessEnv, name: string): Promise<{ tenantId: string; apiKey: string }> {
  const created = await promisify(execFile)(process.execPath, [CLI, 'admin', 'create-tenant', name], { env });
  return JSON.parse(created.stdout.trim().split('\n').pop()!) as { tenantId: string; apiKey: string };
}

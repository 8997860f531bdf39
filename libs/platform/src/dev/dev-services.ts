import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { serverOf } from '../urls.js';
import type { WeftConfig } from '../weft-config.js';
import { WeftLogger } from '../weft-logger.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';

/** Where `weft dev`'s database is, and how it found it. */
export type DevDatabase = { kind: 'embedded'; server: EmbeddedPostgres } | { kind: 'given' } | { kind: 'local' };

/** What `weft dev` runs on: the config to boot with, what it chose, and how to stop what it started. */
export interface DevServices {
  /** `config` with the embedded database's URLs and the transport chosen. */
  config: WeftConfig;
  database: DevDatabase;
  /** Stops what it started (the embedded PostgreSQL); resolves once it exited. */
  stop(): Promise<void>;
}

/** PostgreSQL's and Redis's usual addresses, which `weft dev` tries before it does without them. */
const LOCAL_POSTGRES = { host: '127.0.0.1', port: 5432 };
const LOCAL_REDIS = { host: '127.0.0.1', port: 6379 };

/** The folder of the embedded PostgreSQL's data under `weftHome`. */
export function devPostgresDir(weftHome: string): string {
  return join(weftHome, 'dev-postgres');
}

/**
 * What `weft dev` runs on, decided before it boots:
 * - database: DATABASE_URL (or DATABASE_OWNER_URL) when set; else PostgreSQL on 127.0.0.1:5432
 *   when something accepts connections there; else an embedded PostgreSQL it starts over
 *   `$WEFT_HOME/dev-postgres` on a free port of 127.0.0.1 ({@link startEmbeddedPostgres}), as the
 *   database `weft` (created and migrated by the boot, like any `weft dev` database);
 * - transport: Redis when REDIS_URL is set or something accepts connections on 127.0.0.1:6379,
 *   else `in-process` (one process; see docs/ARCHITECTURE.md).
 * Throws ServiceUnavailableError when the embedded server cannot start.
 */
export async function startDevServices(config: WeftConfig): Promise<DevServices> {
  // The embedded server's lines go to Weft's log (at debug) from its first one.
  Logger.overrideLogger(new WeftLogger(config.logLevel, undefined, config.logFormat));
  const transport = config.redisUrlGiven || (await answers(LOCAL_REDIS)) ? 'redis' : 'in-process';
  if (config.databaseUrlGiven) return { config: { ...config, transport }, database: { kind: 'given' }, stop: async () => {} };
  if (await answers(LOCAL_POSTGRES)) return { config: { ...config, transport }, database: { kind: 'local' }, stop: async () => {} };
  const log = new Logger('postgres');
  const dir = devPostgresDir(config.weftHome);
  await mkdir(config.weftHome, { recursive: true });
  const server = await startEmbeddedPostgres(dir, { log: (line) => log.debug(line) });
  return {
    config: { ...config, transport, databaseUrl: server.url('weft', 'weft_app'), ownerDatabaseUrl: server.url('weft') },
    database: { kind: 'embedded', server },
    stop: () => server.stop(),
  };
}

/**
 * The lines `weft dev` prints before its URLs: the server an earlier `weft dev` left running, when
 * this start stopped one; the database (its runtime URL, where it comes from, whether this start
 * created it and which migrations it applied); and the transport.
 */
export function devSummary(dev: DevServices, prepared: { created: boolean; applied: string[] }): string[] {
  const { config, database } = dev;
  const origin =
    database.kind === 'embedded'
      ? `embedded PostgreSQL ${database.server.version} in ${database.server.dir}${database.server.initialised ? ', initialised now' : ''}`
      : database.kind === 'given'
        ? 'DATABASE_URL'
        : `PostgreSQL on ${LOCAL_POSTGRES.host}:${LOCAL_POSTGRES.port}`;
  const migrated = prepared.applied.length > 0 ? `${prepared.applied.length} migration(s) applied` : 'migrations up to date';
  const state = `${prepared.created ? 'database created, ' : ''}${migrated}`;
  const transport =
    config.transport === 'in-process'
      ? `in process (no Redis on ${LOCAL_REDIS.host}:${LOCAL_REDIS.port} and no REDIS_URL: this one process only; jobs do not outlive it)`
      : `Redis at ${serverOf(config.redisUrl)}`;
  const leftover =
    database.kind === 'embedded' && database.server.leftover
      ? [`Weft stopped the PostgreSQL server (pid ${database.server.leftover}) an earlier weft dev left running on ${database.server.dir}`]
      : [];
  return [...leftover, `Weft database: ${redacted(config.databaseUrl)} (${origin}; ${state})`, `Weft transport: ${transport}`];
}

/** True when something accepts a TCP connection at `host:port` within 1 s. */
function answers(at: { host: string; port: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(at);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The URL without its password. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

import { Logger, type LoggerService } from '@nestjs/common';
import { runMigrations } from '@weft/persistence';
import { ensureDatabase, ensureRedis, ensureRuntimeRole, ServiceUnavailableError } from './services.js';
import { databaseNameOf, serverOf } from './urls.js';
import type { WeftConfig } from './weft-config.js';
import { logStartLine } from './start-line.js';
import { WeftLogger } from './weft-logger.js';

/** What {@link prepareServer} did to the database: created it, and the migrations it applied. */
export interface PreparedDatabase {
  created: boolean;
  applied: string[];
}

/**
 * What a server process does before Nest boots: routes every `new Logger(context)` to `logger`
 * (default a {@link WeftLogger} at `config.logLevel`, in `config.logFormat`), checks PostgreSQL answers (with `migrate`,
 * creating the database when it is missing, then migrating it), Redis answers (unless
 * `config.transport` is `in-process`) and `DATABASE_URL` is the runtime role; tells `onDatabase`
 * what it did to the database. Throws ServiceUnavailableError with one clear line;
 * resolves the logger to create the Nest application with.
 */
export async function prepareServer(
  config: WeftConfig,
  opts: { migrate?: boolean; logger?: LoggerService; onDatabase?: (prepared: PreparedDatabase) => void } = {},
): Promise<LoggerService> {
  const logger = opts.logger ?? new WeftLogger(config.logLevel, undefined, config.logFormat);
  Logger.overrideLogger(logger);
  const created = await ensureDatabase(config.ownerDatabaseUrl, { create: !!opts.migrate });
  if (config.transport !== 'in-process') {
    await ensureRedis(config.redisUrl).catch((err: unknown) => {
      // Every role but `weft dev` shares its jobs through Redis: say so beside how to start it.
      throw new ServiceUnavailableError(
        `${(err as Error).message} Weft needs Redis to carry jobs between processes; only \`weft dev\` (one process) runs without it.`,
      );
    });
  }
  const applied = opts.migrate ? await runMigrations(config.ownerDatabaseUrl) : [];
  await ensureRuntimeRole(config.databaseUrl);
  opts.onDatabase?.({ created, applied });
  return logger;
}

/** Logs the database a started process runs on. */
export function logDatabase(config: WeftConfig): void {
  logStartLine(new Logger('weft'), config, `database ${databaseNameOf(config.databaseUrl, '(none named)')} on ${serverOf(config.databaseUrl)}`);
}

/**
 * Runs an app's `main`: an error before it serves (invalid configuration, a service down, a port
 * in use) prints `<name>: <message>` on stderr and exits 1.
 */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

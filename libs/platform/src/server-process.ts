import { Logger, type LoggerService } from '@nestjs/common';
import { runMigrations } from '@weft/persistence';
import { ensureDatabase, ensureRedis, ensureRuntimeRole } from './services.js';
import { databaseNameOf, serverOf } from './urls.js';
import type { WeftConfig } from './weft-config.js';
import { WeftLogger } from './weft-logger.js';

/**
 * What a server process does before Nest boots: routes every `new Logger(context)` to `logger`
 * (default a {@link WeftLogger} at `config.logLevel`, in `config.logFormat`), checks PostgreSQL answers (with `migrate`,
 * creating the database when it is missing, then migrating it), Redis answers and
 * `DATABASE_URL` is the runtime role. Throws ServiceUnavailableError with one clear line;
 * resolves the logger to create the Nest application with.
 */
export async function prepareServer(config: WeftConfig, opts: { migrate?: boolean; logger?: LoggerService } = {}): Promise<LoggerService> {
  const logger = opts.logger ?? new WeftLogger(config.logLevel, undefined, config.logFormat);
  Logger.overrideLogger(logger);
  await ensureDatabase(config.ownerDatabaseUrl, { create: !!opts.migrate });
  await ensureRedis(config.redisUrl);
  if (opts.migrate) await runMigrations(config.ownerDatabaseUrl);
  await ensureRuntimeRole(config.databaseUrl);
  return logger;
}

/** Logs the database a started process runs on. */
export function logDatabase(config: WeftConfig): void {
  new Logger('weft').log(`database ${databaseNameOf(config.databaseUrl, '(none named)')} on ${serverOf(config.databaseUrl)}`);
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

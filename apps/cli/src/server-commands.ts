import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { runMigrations, TenantRepository, createDataSource } from '@weft/persistence';
import { ensureDatabase, loadConfig, type WeftConfig } from '@weft/platform';
import { startPlatform, type Roles } from './platform.js';

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

function positive(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** Runs a long-lived process until SIGINT/SIGTERM, then closes it cleanly. */
async function serve(config: WeftConfig, roles: Roles, migrate: boolean): Promise<void> {
  const platform = await startPlatform(config, roles, { migrate });
  if (platform.url) process.stdout.write(`Weft GraphQL API: ${platform.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await platform.close();
}

/** Registers the server-side commands (DESIGN §7). */
export function serverCommands(program: Command): void {
  program
    .command('dev')
    .description('migrate, then run the API, a worker for every queue and the scheduler in one process')
    .option('--port <n>', 'HTTP port (default $PORT or 4000; 0 picks a free port)', port)
    .action(async (o: { port?: number }) => {
      const config = loadConfig(process.env, o.port !== undefined ? { PORT: o.port } : {});
      await serve(config, { api: true, worker: true, scheduler: true }, true);
    });

  program
    .command('api')
    .description('run the GraphQL API')
    .option('--port <n>', 'HTTP port (default $PORT or 4000)', port)
    .action(async (o: { port?: number }) => {
      await serve(loadConfig(process.env, o.port !== undefined ? { PORT: o.port } : {}), { api: true }, false);
    });

  program
    .command('worker')
    .description('run a worker for some queues (default $WEFT_QUEUES, or all)')
    .option('--queues <a,b>', 'comma-separated queues')
    .option('--concurrency <n>', 'jobs at once per queue', positive)
    .action(async (o: { queues?: string; concurrency?: number }) => {
      const overrides: Record<string, string | number> = {};
      if (o.queues) overrides.WEFT_QUEUES = o.queues;
      if (o.concurrency) overrides.WEFT_WORKER_CONCURRENCY = o.concurrency;
      await serve(loadConfig(process.env, overrides), { worker: true }, false);
    });

  program
    .command('scheduler')
    .description('run the scheduler (timers, outbox relay)')
    .action(async () => serve(loadConfig(), { scheduler: true }, false));

  program
    .command('migrate')
    .description('create the database if missing and apply migrations')
    .action(async () => {
      const config = loadConfig();
      await ensureDatabase(config.databaseUrl);
      const applied = await runMigrations(config.databaseUrl);
      process.stdout.write(`migrations applied: ${Array.isArray(applied) ? applied.length : applied}\n`);
    });

  const admin = program.command('admin').description('administration on the database directly');
  admin
    .command('create-tenant <name>')
    .description('create a tenant and its first admin API key (printed once, as JSON on the last line)')
    .action(async (name: string) => {
      if (!name.trim()) throw new InvalidArgumentError('tenant name must not be empty');
      const config = loadConfig();
      await ensureDatabase(config.databaseUrl);
      await runMigrations(config.databaseUrl);
      const ds = createDataSource(config.databaseUrl, { poolSize: 1 });
      await ds.initialize();
      try {
        const created = await new TenantRepository(ds).createTenant(name.trim());
        process.stdout.write(`${JSON.stringify({ tenantId: created.tenantId, apiKey: created.apiKey })}\n`);
      } finally {
        await ds.destroy();
      }
    });
}

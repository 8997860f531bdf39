import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { WeftConfig } from '@weft/platform';
import type { Roles } from './platform.js';

// The server side loads Nest, TypeORM and Bull only when a server command runs, so the client
// commands and --help start fast.
const platform = () => import('@weft/platform');
const persistence = () => import('@weft/persistence');

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
  const { startPlatform } = await import('./platform.js');
  const running = await startPlatform(config, roles, { migrate });
  if (running.url) process.stdout.write(`Weft GraphQL API: ${running.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.close();
}

/** Registers the server-side commands (DESIGN §7). */
export function serverCommands(program: Command): void {
  program
    .command('dev')
    .description('migrate, then run the API, a worker for every queue and the scheduler in one process')
    .option('--port <n>', 'HTTP port (default $PORT or 4000; 0 picks a free port)', port)
    .option('--host <addr>', 'interface to listen on', '127.0.0.1')
    .action(async (o: { port?: number; host: string }) => {
      const config = (await platform()).loadConfig(process.env, o.port !== undefined ? { PORT: o.port } : {});
      await serve(config, { api: true, worker: true, scheduler: true, host: o.host }, true);
    });

  program
    .command('api')
    .description('run the GraphQL API')
    .option('--port <n>', 'HTTP port (default $PORT or 4000)', port)
    .option('--host <addr>', 'interface to listen on (default: all)')
    .action(async (o: { port?: number; host?: string }) => {
      const config = (await platform()).loadConfig(process.env, o.port !== undefined ? { PORT: o.port } : {});
      await serve(config, { api: true, host: o.host }, false);
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
      await serve((await platform()).loadConfig(process.env, overrides), { worker: true }, false);
    });

  program
    .command('scheduler')
    .description('run the scheduler (timers, outbox relay)')
    .action(async () => serve((await platform()).loadConfig(), { scheduler: true }, false));

  program
    .command('migrate')
    .description('create the database if missing and apply migrations')
    .action(async () => {
      const { loadConfig, ensureDatabase } = await platform();
      const config = loadConfig();
      await ensureDatabase(config.ownerDatabaseUrl);
      const applied = await (await persistence()).runMigrations(config.ownerDatabaseUrl);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    });

  const admin = program.command('admin').description('administration on the database directly');
  admin
    .command('create-tenant <name>')
    .description('create a tenant and its first admin API key (printed once, as JSON on the last line)')
    .action(async (name: string) => {
      const clean = name.trim();
      if (!clean) throw new InvalidArgumentError('tenant name must not be empty');
      if (clean.length > 200) throw new InvalidArgumentError(`tenant name is ${clean.length} characters; at most 200`);
      if (/[\u0000-\u001f\u007f\ufffd]/.test(clean)) throw new InvalidArgumentError('tenant name must not contain control characters or invalid UTF-8');
      const { loadConfig, ensureDatabase } = await platform();
      const { runMigrations, createDataSource, TenantRepository } = await persistence();
      const config = loadConfig();
      await ensureDatabase(config.ownerDatabaseUrl);
      await runMigrations(config.ownerDatabaseUrl);
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

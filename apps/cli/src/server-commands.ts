import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { WeftConfig } from '@weft/platform';
import type { Roles } from './platform.js';
import { tenantAdminCommands } from './tenant-admin-commands.js';

// The server side loads Nest, TypeORM and Bull only when a server command runs, so the client
// commands and --help start fast. Through a local module: `nest build` rewrites the path aliases
// of static imports only, not of `import('@weft/…')`.
const serverSide = () => import('./server-side.js');

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
  if (running.url) process.stdout.write(`Weft GraphQL API: ${running.url}\nWeft web console: ${new URL(running.url).origin}/\n`);
  if (running.metricsUrl) process.stdout.write(`Weft ops endpoints (no key): ${running.metricsUrl}/metrics, ${running.metricsUrl}/readyz, ${running.metricsUrl}/healthz\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.close();
}

/** Registers the server-side commands. */
export function serverCommands(program: Command): void {
  program
    .command('dev')
    .description('migrate, then run the API, a worker for every queue and the scheduler in one process')
    .option('--port <n>', 'HTTP port (default $PORT or 4000; 0 picks a free port)', port)
    .option('--host <addr>', 'interface to listen on', '127.0.0.1')
    .option('--metrics-port <n>', 'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT, or a free port)', port)
    .action(async (o: { port?: number; host: string; metricsPort?: number }) => {
      const overrides: Record<string, number> = {};
      if (o.port !== undefined) overrides.PORT = o.port;
      if (o.metricsPort !== undefined) overrides.WEFT_METRICS_PORT = o.metricsPort;
      const loaded = (await serverSide()).loadConfig(process.env, overrides);
      // Local development: CODE runs even where it cannot be isolated (the worker's start-up log
      // says what holds and warns when it runs unconfined); WEFT_CODE_UNCONFINED=0 refuses it.
      // The ops endpoints are not on the API's port: without a port for them, any free one.
      const config = { ...loaded, codeUnconfined: loaded.codeUnconfined ?? true, metricsPort: loaded.metricsPort ?? 0 };
      await serve(config, { api: true, worker: true, scheduler: true, host: o.host }, true);
    });

  program
    .command('api')
    .description('run the GraphQL API')
    .option('--port <n>', 'HTTP port (default $PORT or 4000)', port)
    .option('--host <addr>', 'interface to listen on (default: all)')
    .option('--metrics-port <n>', 'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT; none when unset)', port)
    .action(async (o: { port?: number; host?: string; metricsPort?: number }) => {
      const overrides: Record<string, number> = {};
      if (o.port !== undefined) overrides.PORT = o.port;
      if (o.metricsPort !== undefined) overrides.WEFT_METRICS_PORT = o.metricsPort;
      const config = (await serverSide()).loadConfig(process.env, overrides);
      await serve(config, { api: true, host: o.host }, false);
    });

  program
    .command('worker')
    .description('run a worker for some queues (default $WEFT_QUEUES, or all)')
    .option('--queues <a,b>', 'comma-separated queues')
    .option('--concurrency <n>', 'jobs at once per queue', positive)
    .option('--metrics-port <n>', 'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT; none when unset)', port)
    .action(async (o: { queues?: string; concurrency?: number; metricsPort?: number }) => {
      const overrides: Record<string, string | number> = {};
      if (o.queues) overrides.WEFT_QUEUES = o.queues;
      if (o.concurrency) overrides.WEFT_WORKER_CONCURRENCY = o.concurrency;
      if (o.metricsPort !== undefined) overrides.WEFT_METRICS_PORT = o.metricsPort;
      await serve((await serverSide()).loadConfig(process.env, overrides), { worker: true }, false);
    });

  program
    .command('scheduler')
    .description('run the scheduler (timers, outbox relay)')
    .option('--metrics-port <n>', 'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT; none when unset)', port)
    .action(async (o: { metricsPort?: number }) =>
      serve((await serverSide()).loadConfig(process.env, o.metricsPort !== undefined ? { WEFT_METRICS_PORT: o.metricsPort } : {}), { scheduler: true }, false),
    );

  program
    .command('migrate')
    .description('create the database if missing and apply migrations')
    .action(async () => {
      const { loadConfig, ensureDatabase, runMigrations } = await serverSide();
      const config = loadConfig();
      await ensureDatabase(config.ownerDatabaseUrl);
      const applied = await runMigrations(config.ownerDatabaseUrl);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    });

  const admin = program.command('admin').description('administration on the database directly');
  tenantAdminCommands(admin);
}

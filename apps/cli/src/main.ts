#!/usr/bin/env node
import { runCli } from './cli.js';

// A reader that closed the pipe (`weft runs | head`) ends the command quietly, as for other CLIs.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// Exits once the command is done, with its code (see exit-codes.ts), even if a connection of a
// library is still open.
runCli(process.argv.slice(2)).then((code) => process.exit(code));

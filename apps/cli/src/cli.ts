import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { clientCommands } from './client-commands.js';
import { queueCommands } from './queue-commands.js';
import { completionCommand } from './completion-command.js';
import { EXIT, exitCodeOf, USAGE_ERROR } from './exit-codes.js';
import { serverCommands } from './server-commands.js';

/**
 * The version of the package that holds this file: the `version` of the nearest package.json
 * above it that declares the `weft` bin (the same from the sources and from `dist/`).
 */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string; bin?: Record<string, string> };
      if (pkg.bin?.weft && pkg.version) return pkg.version;
    } catch {
      // no package.json here: look further up
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}

/**
 * Every command of the tree under `cmd` reports a usage error as commander's one line plus
 * `(run '<command> --help' for usage)`, and hands the error to `report` instead of exiting.
 */
function reportErrors(cmd: Command, path: string, report: (err: CommanderError) => never): void {
  cmd.exitOverride(report).showHelpAfterError(`(run '${path} --help' for usage)`);
  for (const c of cmd.commands) reportErrors(c, `${path} ${c.name()}`, report);
}

/**
 * The `weft` command: the server side (dev, api, worker, scheduler, migrate, admin), the client
 * side (apply, validate, workflows, versions, default-version, deprecate, run, runs, run-status,
 * watch, history, signal, cancel, pause, resume, retry, batch, schedules, keys, context) and completion.
 */
export function buildProgram(
  report: (err: CommanderError) => never = (err) => {
    throw err;
  },
): Command {
  const program = new Command('weft')
    .description('Weft: durable multi-tenant workflows')
    .version(packageVersion(), '-V, --version', 'print the version')
    .enablePositionalOptions();
  program.commandsGroup('Server (on PostgreSQL and Redis directly):');
  serverCommands(program);
  clientCommands(program);
  queueCommands(program);
  program.commandsGroup('Other:');
  completionCommand(program);
  program.helpCommand(true);
  reportErrors(program, 'weft', report);
  return program;
}

/**
 * Runs `weft <args>` in this process and resolves its exit code (see {@link EXIT}): 0, or the
 * code an action set (a watched run that did not succeed); 2 for a usage error, which commander
 * has printed as one line with a hint; for any other error, printed as `error: <message>`, 4 for a
 * conflict (see {@link exitCodeOf}), else 1.
 * Restores `process.exitCode` afterwards.
 */
export async function runCli(args: string[]): Promise<number> {
  const reported = new WeakSet<Error>();
  const program = buildProgram((err) => {
    reported.add(err);
    throw err;
  });
  const saved = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync(args, { from: 'user' });
    return Number(process.exitCode ?? EXIT.ok);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (!reported.has(err)) process.stderr.write(`error: ${err.message.replace(/^error: /, '')}\n`);
      if (err.exitCode === 0) return EXIT.ok;
      return err.code.startsWith('commander.') || err.code === USAGE_ERROR ? EXIT.usage : err.exitCode;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitCodeOf(err);
  } finally {
    process.exitCode = saved;
  }
}

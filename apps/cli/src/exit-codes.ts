import type { Command } from 'commander';

/**
 * The `weft` command's exit codes, as kubectl and argo use them: 0 success; 1 the command failed
 * while running (the API refused or could not be reached, a file could not be read); 2 the
 * command line is wrong (unknown command or option, a missing or malformed argument), said in
 * one line with a hint; 3 a watched run ended without succeeding (FAILED or CANCELLED), or a
 * watched bulk action failed on a run or was stopped; 4 a conflict: what the command would create
 * exists already (a tenant name taken), or the API refused with CONFLICT (the run has ended, the
 * tenant's last admin key, a cap reached).
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, runNotSucceeded: 3, conflict: 4 } as const;

/** An error that ends the command with `exitCode` (see {@link EXIT}) instead of 1. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/**
 * The exit code of an error a command threw: a {@link CliError}'s own, {@link EXIT}.conflict for
 * an API refusal with the code CONFLICT, else {@link EXIT}.failure.
 */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof Error && err.name === 'WeftApiError' && (err as { code?: unknown }).code === 'CONFLICT') return EXIT.conflict;
  return EXIT.failure;
}

/** The `code` of a usage error an action raises (commander's own start with `commander.`). */
export const USAGE_ERROR = 'weft.usage';

/**
 * Ends `cmd` with a usage error: `error: <message>` and the command's hint on stderr, exit code
 * {@link EXIT}.usage. For a mistake only the action can see (two options that exclude each other).
 */
export function usageError(cmd: Command, message: string): never {
  cmd.error(`error: ${message}`, { exitCode: EXIT.usage, code: USAGE_ERROR });
}

import { Command } from 'commander';
import { clientCommands } from '@weft/cli';
import { captured } from './weft-cli.js';

/**
 * Runs `weft <args>` in this process with the commands `register` adds (the CLI's
 * `clientCommands` or `serverCommands`) and the environment variables `env` set for the call
 * (restored afterwards); resolves what it wrote to stdout. Commander's own output and stderr are
 * swallowed; a failing command rejects.
 */
export async function runCommands(register: (program: Command) => void, env: Record<string, string>, ...args: string[]): Promise<string> {
  return (await runCapturing(register, env, args)).stdout;
}

/** As {@link runCommands}, resolving what the command wrote to stdout and to stderr (Commander's own output left out). */
async function runCapturing(register: (program: Command) => void, env: Record<string, string>, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const program = new Command('weft').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  register(program);
  const { stdout, stderr } = await captured(env, () => program.parseAsync(args, { from: 'user' }));
  return { stdout, stderr };
}

/** The client side of the CLI (`weft <args>`) against the API at `url` with `apiKey` (WEFT_URL / WEFT_API_KEY). */
export function runWeft(url: string, apiKey: string, ...args: string[]): Promise<string> {
  return runCommands(clientCommands, { WEFT_URL: url, WEFT_API_KEY: apiKey }, ...args);
}

/** {@link runWeft}, resolving stdout and stderr (warnings go to stderr). */
export function runWeftCapturing(url: string, apiKey: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return runCapturing(clientCommands, { WEFT_URL: url, WEFT_API_KEY: apiKey }, args);
}

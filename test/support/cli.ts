import { jest } from '@jest/globals';
import { Command } from 'commander';
import { clientCommands } from '../../apps/cli/src/client-commands.js';

/**
 * Runs the client side of the `weft` CLI (`weft <args>`) in this process against the API at
 * `url` with `apiKey` (as WEFT_URL / WEFT_API_KEY, restored afterwards) and resolves what it
 * wrote to stdout. Commander's own output and stderr are swallowed; a failing command rejects.
 */
export async function runWeft(url: string, apiKey: string, ...args: string[]): Promise<string> {
  const program = new Command('weft').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  clientCommands(program);
  let out = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const env = { WEFT_URL: process.env.WEFT_URL, WEFT_API_KEY: process.env.WEFT_API_KEY };
  process.env.WEFT_URL = url;
  process.env.WEFT_API_KEY = apiKey;
  try {
    await program.parseAsync(args, { from: 'user' });
    return out;
  } finally {
    write.mockRestore();
    err.mockRestore();
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

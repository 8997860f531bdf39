import { jest } from '@jest/globals';
// The CLI's entry function itself, not the package entry point: that one also loads the server
// side (Nest, TypeORM), which a unit test of the client commands does not need.
import { runCli } from '../../apps/cli/src/cli.js';

/** What one `weft` invocation did: its exit code and what it wrote to stdout and stderr. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `weft <args>` in this process as the binary does (`runCli`: every command, the real
 * error handling and exit codes) with the environment variables `env` set for the call (an
 * `undefined` value unsets one; all restored afterwards). Unless `env` sets WEFT_CONFIG, the
 * config file is one that does not exist, so no context of the machine is used.
 */
export async function cli(env: Record<string, string | undefined>, ...args: string[]): Promise<CliResult> {
  const { result, stdout, stderr } = await captured({ WEFT_CONFIG: '/nonexistent/weft-test/config.yaml', ...env }, () => runCli(args));
  return { code: result, stdout, stderr };
}

/**
 * Runs `fn` with the environment variables `vars` set (an `undefined` value unsets one) and
 * stdout and stderr captured; restores both afterwards, also when `fn` rejects.
 */
export async function captured<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<{ result: T; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return { result: await fn(), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

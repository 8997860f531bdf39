import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, task, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Polls `check` every 50 ms until it holds; fails after 60 s (a bound on a hang, not a timing assertion). */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/**
 * `weft logs`: the logs of a run's attempts once, for one node, and followed live (`-f`) by a
 * separate `weft` process while the run waits for a signal and after it.
 */
describe('weft logs', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('logs-cli'));
    // first prints, the run waits for the signal "go", then second prints two lines.
    await publish(client, 'gated', {
      nodes: [
        jsNode('first', 'console.log("first says hi"); return 1;'),
        { node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } },
        jsNode('second', 'console.log("second line 1"); console.error("second line 2"); return 2;'),
      ],
      edges: [
        { from: 'first', to: 'gate' },
        { from: 'gate', to: 'second' },
      ],
    });
    await publish(client, 'solo', { nodes: [jsNode('solo', 'console.log("only me"); throw new Error("broken");')], edges: [] });
  });
  afterAll(() => e2e.close());

  it('follows a live run with -f: prints each attempt as it ends, prefixed with node and attempt, and exits when the run ends', async () => {
    const runId = await start(client, 'gated');
    await waitRun(client, runId, (r) => task(r, 'gate')?.status === 'WAITING');
    const child: ChildProcessWithoutNullStreams = spawn(
      process.execPath,
      ['--import', './test/support/ts-register.mjs', 'apps/cli/src/main.ts', 'logs', runId, '-f'],
      {
        cwd: ROOT,
        env: { ...process.env, WEFT_CONFIG: '/nonexistent/weft-test/config.yaml', WEFT_URL: e2e.url, WEFT_API_KEY: apiKey },
      },
    );
    let stdout = '';
    let stderr = '';
    let code: number | null | undefined;
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (c) => (code = c));
    try {
      await until('the first attempt printed', () => stdout.includes('first says hi') || code !== undefined);
      // Still following: the run waits for its signal.
      expect({ code, stdout }).toEqual({ code: undefined, stdout: '[first #1] first says hi\n' });
      await client.request(`mutation($i: SendSignalInput!) { sendSignal(input: $i) { delivered } }`, { i: { runId, name: 'go' } });
      await until('weft logs -f to exit', () => code !== undefined);
    } finally {
      child.kill();
    }
    expect({ code, stdout, stderr }).toEqual({
      code: 0,
      stdout: '[first #1] first says hi\n[second #1] second line 1\n[second #1] second line 2\n',
      stderr: '',
    });
  });

  it('prints one node without a prefix, and a run already ended once with -f (exit code 3 when it did not succeed)', async () => {
    const gated = await start(client, 'gated');
    await waitRun(client, gated, (r) => task(r, 'gate')?.status === 'WAITING');
    expect(await weft('logs', gated, '--node', 'first')).toEqual({ code: 0, stdout: 'first says hi\n', stderr: '' });
    expect(await weft('logs', gated, '--node', 'second')).toEqual({ code: 0, stdout: '', stderr: '' });
    // A mistyped node, or one no worker runs, is named rather than printing nothing.
    for (const node of ['frist', 'gate']) {
      expect(await weft('logs', gated, '--node', node)).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: run ${gated} has no HTTP or CODE node "${node}", so no logs; its nodes with logs: first, second\n`,
      });
    }

    const solo = await start(client, 'solo');
    await waitRun(client, solo);
    // One worker node in the definition: no prefix.
    expect(await weft('logs', solo, '-f')).toEqual({ code: 3, stdout: 'only me\n', stderr: '' });
  });

  it("refuses another tenant's run as not found, exit code 1", async () => {
    const runId = await start(client, 'solo');
    await waitRun(client, runId);
    const other = await e2e.tenant('intruder');
    const r = await cli({ WEFT_URL: e2e.url, WEFT_API_KEY: other.apiKey }, 'logs', runId);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('NOT_FOUND');
  });
});

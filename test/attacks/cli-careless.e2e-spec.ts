import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startE2E, type E2E } from '../support/e2e-platform.js';
import { cli, type CliResult } from '../support/weft-cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A careless user's `weft apply` and `workflows get`: a folder holding notes, a link that loops
 * and one that leads nowhere, and a link to itself; an empty or blank stdin; a version that does
 * not exist. Each is named once, with exit code 1, and what can be published is.
 */
describe('weft apply and workflows get, used carelessly', () => {
  let e2e: E2E;
  let apiKey: string;
  let dir: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  /** The real binary, with `stdin` as its standard input. */
  const piped = (stdin: string, ...args: string[]): Promise<CliResult> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', 'apps/cli/src/main.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, WEFT_CONFIG: '/nonexistent/weft-test/config.yaml', WEFT_URL: e2e.url, WEFT_API_KEY: apiKey },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(stdin);
    });

  beforeAll(async () => {
    e2e = await startE2E();
    ({ apiKey } = await e2e.tenant('careless'));
    dir = await mkdtemp(join(tmpdir(), 'weft-careless-'));
  });
  afterAll(async () => {
    await e2e.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('publishes what a folder holds and names each definition link that loops or leads nowhere', async () => {
    await writeFile(join(dir, 'good.yaml'), 'nodes:\n  - node_id: a\n    type: WAIT\n    spec: { duration_seconds: 1 }\nedges: []\n');
    await writeFile(join(dir, 'notes.txt'), 'not a definition');
    await symlink('loop.yaml', join(dir, 'loop.yaml'));
    await symlink('missing.yaml', join(dir, 'dangling.yaml'));
    await symlink('.', join(dir, 'self'));
    const r = await weft('apply', '-f', dir, '-R');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`workflow good version 1 (${join(dir, 'good.yaml')})\n`);
    expect(r.stderr).toContain(`${join(dir, 'dangling.yaml')}: a link to a file that does not exist`);
    expect(r.stderr).toContain(`${join(dir, 'loop.yaml')}: a link that loops`);
    expect(r.stderr).not.toContain('notes.txt');
  });

  it('says stdin is empty, with or without --id, and publishes nothing', async () => {
    for (const [stdin, args] of [
      ['', []],
      ['  \n\n', ['--id', 'blank']],
    ] as const) {
      const r = await piped(stdin, 'apply', '-f', '-', ...args);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: stdin is empty: there is no definition to publish\n',
      });
    }
    expect(JSON.parse((await weft('workflows', '-o', 'json')).stdout).map((w: { id: string }) => w.id)).toEqual(['good']);
  });

  it('names a version or a workflow that does not exist once, exit code 1', async () => {
    expect(await weft('workflows', 'get', 'good', '--version', '99', '-o', 'yaml')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: NOT_FOUND: Workflow good has no version 99\n',
    });
    expect(await weft('workflows', 'get', 'nope')).toEqual({ code: 1, stdout: '', stderr: 'error: NOT_FOUND: Workflow nope not found\n' });
  });
});

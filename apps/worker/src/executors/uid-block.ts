import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the claims of uid blocks live: one lock file per block, holding the claimant's pid. */
const LOCK_DIR = tmpdir();

/**
 * Claims a block of `size` uids for this process's CODE executions, so that two worker processes
 * on one machine never run code as the same uid (each kills every process of a uid when an
 * execution ends, which would kill the other's code). Blocks start at `base` and are numbered
 * 0, 1, …; block k is uids `base + k·size` … `base + (k+1)·size - 1`, claimed by creating
 * `weft-code-uids-<base>-<size>-<k>.lock` (O_EXCL) holding this pid. A lock whose pid is no
 * longer alive is taken over. The claim is released when the process exits. Returns the first
 * uid of the block.
 *
 * @throws Error when every block up to `maxUid` is held by a live process.
 */
export function claimUidBlock(base: number, size: number, maxUid: number): number {
  const blocks = Math.floor((maxUid - base + 1) / size);
  for (let k = 0; k < blocks; k++) {
    const file = join(LOCK_DIR, `weft-code-uids-${base}-${size}-${k}.lock`);
    if (tryLock(file) || (holderIsGone(file) && takeOver(file))) {
      process.once('exit', () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      });
      return base + k * size;
    }
  }
  throw new Error(`no free block of ${size} uids from ${base} to ${maxUid}: every one is claimed by a live process (${LOCK_DIR}/weft-code-uids-*.lock)`);
}

function tryLock(file: string): boolean {
  try {
    const fd = openSync(file, 'wx', 0o644);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function holderIsGone(file: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return true; // vanished meanwhile
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Replaces a dead holder's lock; false when another process took it over first. */
function takeOver(file: string): boolean {
  try {
    unlinkSync(file);
  } catch {
    // another process removed it first; race for the new lock below
  }
  return tryLock(file);
}

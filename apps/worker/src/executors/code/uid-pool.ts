import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** First uid (and gid) of the per-execution pool when the worker runs as root. */
export const DEFAULT_UID_BASE = 2_000_000_000;
/** Default number of uids in a block: the most executions one worker runs at once. */
export const DEFAULT_UID_SLOTS = 1024;
/** Node (libuv) takes uids and gids as int32. */
export const MAX_UID = 2_147_483_647;

/**
 * Where the claims of uid blocks live: one folder for the whole machine, whatever a worker's
 * TMPDIR, so that two workers never claim the same block. `/run` is emptied at boot, as the claims
 * should be.
 */
export function uidLockDir(): string {
  if (!existsSync('/run')) return tmpdir();
  mkdirSync('/run/weft', { recursive: true, mode: 0o755 });
  return '/run/weft';
}

/** The uids executions run as when the worker is root: `base` … `base + size - 1` (gid = uid). */
export interface UidRange {
  base: number;
  size: number;
  /** The folder the block's previous holder (a dead worker) kept its executions in, to remove. */
  previousDir?: string;
}

/**
 * The uid range of this worker's executions, or undefined when it is not root (it cannot switch
 * users). Without an explicit `base`, a block is claimed for this process ({@link claimUidBlock}).
 *
 * @throws Error when the range leaves 1 … {@link MAX_UID}, or no block is free
 */
export function resolveUidRange(base: number | undefined, size = DEFAULT_UID_SLOTS, dirFor: (first: number) => string = () => ''): UidRange | undefined {
  const first = base ?? DEFAULT_UID_BASE;
  if (!Number.isSafeInteger(first) || first < 1 || !Number.isSafeInteger(size) || size < 1 || first + size - 1 > MAX_UID) {
    throw new Error(`CodeExecutor: uidBase ${first} / uidSlots ${size} must give a uid range within 1…${MAX_UID}`);
  }
  if (process.getuid?.() !== 0) return undefined;
  if (base !== undefined) return { base, size };
  const claim = claimUidBlock(DEFAULT_UID_BASE, size, MAX_UID, uidLockDir(), dirFor);
  return { base: claim.first, size, ...(claim.previousDir ? { previousDir: claim.previousDir } : {}) };
}

const atExit: Array<() => void> = [];

/**
 * Runs `cleanup` (synchronous, best effort) when the process exits. One 'exit' listener serves
 * every executor of the process, however many a test suite builds.
 */
export function onProcessExit(cleanup: () => void): void {
  if (atExit.length === 0) {
    process.once('exit', () => {
      for (const fn of atExit) {
        try {
          fn();
        } catch {
          // best effort: the next holder clears what is left
        }
      }
    });
  }
  atExit.push(cleanup);
}

/** A claimed uid block: its first uid, and the folder of the dead holder it was taken from. */
export interface UidClaim {
  first: number;
  previousDir?: string;
}

/**
 * Claims a block of `size` uids for this process's CODE executions, so that two worker processes
 * on one machine never run code as the same uid. Block k is uids `base + k·size` …
 * `base + (k+1)·size - 1`, claimed by creating `weft-code-uids-<base>-<size>-<k>.lock` (O_EXCL)
 * in `lockDir`, holding this pid and, on the next line, the folder `dirFor(first uid)` its
 * executions live in. A lock whose pid is no longer alive is taken over; whoever claims a block
 * must then clear what the previous holder left (its processes, that folder, its cgroups) before
 * the first execution. The claim is released when the process exits.
 *
 * @throws Error when every block up to `maxUid` is held by a live process
 */
export function claimUidBlock(base: number, size: number, maxUid: number, lockDir = uidLockDir(), dirFor: (first: number) => string = () => ''): UidClaim {
  const blocks = Math.floor((maxUid - base + 1) / size);
  for (let k = 0; k < blocks; k++) {
    const first = base + k * size;
    const file = join(lockDir, `weft-code-uids-${base}-${size}-${k}.lock`);
    const content = `${process.pid}\n${dirFor(first)}\n`;
    let previousDir: string | undefined;
    let claimed = tryLock(file, content);
    if (!claimed) {
      const holder = readHolder(file);
      if (holder.gone) {
        previousDir = holder.dir;
        claimed = takeOver(file, content);
      }
    }
    if (!claimed) continue;
    onProcessExit(() => {
      if (readFileSync(file, 'utf8').split('\n')[0] === String(process.pid)) unlinkSync(file);
    });
    return { first, ...(previousDir ? { previousDir } : {}) };
  }
  throw new Error(`no free block of ${size} uids from ${base} to ${maxUid}: every one is claimed by a live process (${lockDir}/weft-code-uids-*.lock)`);
}

function tryLock(file: string, content: string): boolean {
  try {
    const fd = openSync(file, 'wx', 0o644);
    writeSync(fd, content);
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Whether a lock's holder is gone, and the folder it named. */
function readHolder(file: string): { gone: boolean; dir?: string } {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n');
  } catch {
    return { gone: true }; // vanished meanwhile
  }
  const pid = Number(lines[0]?.trim());
  const dir = lines[1]?.trim() || undefined;
  if (!Number.isInteger(pid) || pid <= 0) return { gone: true, dir };
  if (pid === process.pid) return { gone: false };
  try {
    process.kill(pid, 0);
    return { gone: false };
  } catch (err) {
    return { gone: (err as NodeJS.ErrnoException).code === 'ESRCH', dir };
  }
}

/** Replaces a dead holder's lock; false when another process took it over first. */
function takeOver(file: string, content: string): boolean {
  try {
    unlinkSync(file);
  } catch {
    // another process removed it first; race for the new lock below
  }
  return tryLock(file, content);
}

/** Slot indexes 0 … size-1, each held by one execution at a time; the lowest free one is taken first. */
export class SlotPool {
  private readonly taken = new Set<number>();
  private readonly waiting: Array<(slot: number) => void> = [];

  constructor(private readonly size: number) {}

  take(): Promise<number> {
    for (let slot = 0; slot < this.size; slot++) {
      if (!this.taken.has(slot)) {
        this.taken.add(slot);
        return Promise.resolve(slot);
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(slot: number): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.taken.delete(slot);
  }
}

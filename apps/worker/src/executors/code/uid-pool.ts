import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
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
    let claimed = createLock(file, content);
    if (!claimed) {
      const holder = readHolder(file);
      if (holder.gone) {
        claimed = takeOver(file, holder.text, content);
        if (claimed) previousDir = holder.dir;
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

/**
 * Creates `file` holding `content`, atomically: the content is written to a private file first and
 * hard-linked into place, so no other claimer ever reads a lock without its pid. False when
 * `file` exists.
 */
function createLock(file: string, content: string): boolean {
  const staged = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(staged, content, { mode: 0o644, flag: 'wx' });
  try {
    linkSync(staged, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(staged);
  }
}

/** Whether a lock's holder is gone, the folder it named, and the lock's text. */
function readHolder(file: string): { gone: boolean; dir?: string; text?: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { gone: false }; // vanished meanwhile: someone is taking it over, leave it to them
  }
  const [pidLine, dirLine] = text.split('\n');
  const pid = Number(pidLine?.trim());
  const dir = dirLine?.trim() || undefined;
  if (!Number.isInteger(pid) || pid <= 0) return { gone: true, dir, text };
  if (pid === process.pid) return { gone: false };
  try {
    process.kill(pid, 0);
    return { gone: false };
  } catch (err) {
    return { gone: (err as NodeJS.ErrnoException).code === 'ESRCH', dir, text };
  }
}

/**
 * Replaces a dead holder's lock, one claimer at a time: the `<lock>.takeover` file (created
 * atomically, like a lock) admits one; it checks the lock still holds the dead holder's text,
 * swaps in its own and removes the takeover file. False when another claimer is taking over or
 * took over first. A claimer that dies inside this leaves the takeover file, and the block unused
 * until the next boot empties /run.
 */
function takeOver(file: string, deadText: string | undefined, content: string): boolean {
  const gate = `${file}.takeover`;
  if (!createLock(gate, content)) return false;
  try {
    let current: string | undefined;
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== undefined && current !== deadText) return false; // taken over meanwhile
    if (current !== undefined) unlinkSync(file);
    return createLock(file, content);
  } finally {
    unlinkSync(gate);
  }
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

import { readdir, readFile, readlink, stat } from 'node:fs/promises';

/** How long a sweep keeps killing before it gives up (processes stuck in the kernel). */
export const SWEEP_BOUND_MS = 2000;

/** A set of uids: `first` … `first + count - 1`. */
export interface UidSpan {
  first: number;
  count: number;
}

/**
 * SIGKILLs every process whose real uid is in `uids` (from `Uid:` in /proc/<pid>/status), pass
 * after pass, until a scan finds none (zombies run nothing and do not count) or `boundMs` has
 * passed. Resolves true when none is left; without /proc (not Linux) there is nothing to scan:
 * true.
 */
export async function killUids(uids: UidSpan, boundMs = SWEEP_BOUND_MS): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const pids = await processesOf(uids);
    if (pids.length === 0) return true;
    for (const pid of pids) killQuietly(pid);
    if (Date.now() >= deadline) return (await processesOf(uids)).length === 0;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Live (not zombie) processes, other than this one, whose real uid is in `uids`. */
export async function processesOf(uids: UidSpan): Promise<number[]> {
  const found = await Promise.all(
    (await procEntries()).map(async (pid) => {
      let status: string;
      try {
        status = await readFile(`/proc/${pid}/status`, 'utf8');
      } catch {
        return undefined; // gone meanwhile
      }
      const real = /^Uid:\s+(\d+)/m.exec(status);
      const uid = real ? Number(real[1]) : -1;
      if (uid < uids.first || uid >= uids.first + uids.count) return undefined;
      return /^State:\s+[ZX]/m.test(status) ? undefined : pid;
    }),
  );
  return found.filter((pid): pid is number => pid !== undefined);
}

/**
 * Without a uid of its own, an execution's processes share the worker's uid: SIGKILLs each one
 * whose initial environment carries `marker` (`NAME=value`) or whose working directory is `dir`.
 * Several passes catch processes forked while the previous one ran. A heuristic: code that scrubs
 * its environment and changes directory in a new session escapes it (which is why such a worker
 * refuses CODE unless told to run it unconfined).
 */
export async function killMarked(marker: string, dir: string): Promise<void> {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const needle = Buffer.from(`${marker}\0`);
  for (let pass = 0; pass < 3; pass++) {
    let killed = 0;
    for (const pid of await procEntries()) {
      try {
        if ((await stat(`/proc/${pid}`)).uid !== uid) continue;
        const ours =
          (await readFile(`/proc/${pid}/environ`)).includes(needle) ||
          (await readlink(`/proc/${pid}/cwd`).catch(() => '')).replace(/ \(deleted\)$/, '') === dir;
        if (!ours) continue;
        killQuietly(pid);
        killed++;
      } catch {
        // gone meanwhile, or not ours to inspect
      }
    }
    if (killed === 0) return;
  }
}

/** SIGKILL, ignoring a process already gone. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function procEntries(): Promise<number[]> {
  try {
    return (await readdir('/proc')).filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid).map(Number);
  } catch {
    return [];
  }
}

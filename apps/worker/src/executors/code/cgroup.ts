import { existsSync, readFileSync, rmdirSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killQuietly, SWEEP_BOUND_MS } from './processes.js';

const MIB = 1024 * 1024;

/** The limits a cgroup holds for all the processes of one execution together. */
export interface CgroupLimits {
  /** Memory (RSS, page cache, tmpfs pages), bytes; swap is not allowed beyond it. */
  memoryBytes: number;
  /** Processes and threads (`pids.max`). */
  maxProcesses: number;
}

/** One execution's cgroup (one directory per hierarchy on cgroup v1, one on v2). */
export interface ExecutionCgroup {
  /** The `cgroup.procs` files a process writes its pid into to join it, before it execs the sandbox. */
  readonly procsFiles: string[];
  /** Whether the kernel's OOM killer killed a process in it (its memory limit was reached). */
  oomKilled(): Promise<boolean>;
  /** SIGKILLs every process in it and removes it; false when processes outlived the sweep bound. */
  destroy(): Promise<boolean>;
}

/** Where the cgroup file systems are and where this process sits in them (both replaceable for tests). */
export interface CgroupPaths {
  /** The cgroup mount point (default `/sys/fs/cgroup`). */
  root: string;
  /** This process's `/proc/self/cgroup` text. */
  self: string;
}

/**
 * Creates per-execution cgroups under this worker's own cgroup, holding memory and process count
 * for every process of an execution together (a fork bomb or four forked children share one
 * budget). Supports cgroup v1 (the `memory` and `pids` hierarchies) and v2 (the unified hierarchy,
 * whose `memory` and `pids` controllers must be delegable to the worker's cgroup: when the worker's
 * cgroup holds processes, the worker moves itself into a `weft-worker` leaf first, as v2 forbids
 * processes in a cgroup that hands controllers to its children).
 */
export class Cgroups {
  private constructor(
    readonly version: 1 | 2,
    /** v1: [memory dir, pids dir]; v2: [the unified dir]. Each is the parent of the execution groups. */
    readonly parents: string[],
    /** The memory limit of all the execution groups together, bytes, when {@link nest} set one. */
    readonly totalMemoryBytes?: number,
  ) {}

  /**
   * The worker's cgroups, checked by creating, limiting and removing a probe group.
   *
   * @returns the cgroups, or a sentence saying why per-execution limits cannot be applied
   */
  static async detect(paths: CgroupPaths = systemPaths()): Promise<Cgroups | string> {
    let cgroups: Cgroups;
    try {
      cgroups = await Cgroups.locate(paths);
    } catch (err) {
      return (err as Error).message;
    }
    try {
      const probe = await cgroups.create(`weft-probe-${process.pid}`, { memoryBytes: 64 * 1024 * 1024, maxProcesses: 16 });
      await probe.destroy();
    } catch (err) {
      return `cannot create a cgroup with memory and pids limits under ${cgroups.parents.join(' and ')}: ${(err as Error).message}`;
    }
    return cgroups;
  }

  private static async locate(paths: CgroupPaths): Promise<Cgroups> {
    const lines = paths.self
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(':'));
    if (existsSync(join(paths.root, 'cgroup.controllers'))) {
      const own = lines.find(([hierarchy]) => hierarchy === '0')?.[2];
      if (own === undefined) throw new Error('no cgroup v2 entry in /proc/self/cgroup');
      const parent = join(paths.root, own);
      await delegateV2(parent);
      return new Cgroups(2, [parent]);
    }
    const parents = ['memory', 'pids'].map((controller) => {
      const own = lines.find(([, controllers]) => controllers?.split(',').includes(controller))?.[2];
      const dir = join(paths.root, controller);
      if (own === undefined || !existsSync(join(dir, 'cgroup.procs'))) {
        throw new Error(`no cgroup ${controller} controller is mounted (neither cgroup v2 at ${paths.root} nor v1 at ${dir})`);
      }
      return join(dir, own);
    });
    return new Cgroups(1, parents);
  }

  /**
   * A new, empty cgroup named `name` with `limits`.
   *
   * @throws Error (from the file system) when it cannot be created or limited; nothing is left behind
   */
  async create(name: string, limits: CgroupLimits): Promise<ExecutionCgroup> {
    const dirs = this.parents.map((parent) => join(parent, name));
    const group = new Group(this.version, dirs);
    try {
      for (const dir of dirs) await mkdir(dir);
      if (this.version === 2) {
        await writeFile(join(dirs[0], 'memory.max'), String(limits.memoryBytes));
        await writeFile(join(dirs[0], 'memory.swap.max'), '0').catch(() => undefined); // no swap accounting: nothing to cap
        await writeFile(join(dirs[0], 'pids.max'), String(limits.maxProcesses));
      } else {
        await writeFile(join(dirs[0], 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // memory + swap: only where swap accounting is on.
        if (existsSync(join(dirs[0], 'memory.memsw.limit_in_bytes'))) await writeFile(join(dirs[0], 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        await writeFile(join(dirs[1], 'pids.max'), String(limits.maxProcesses));
      }
    } catch (err) {
      await group.destroy();
      throw err;
    }
    return group;
  }

  /**
   * A group `name` under the worker's own one, whose memory limit is `memoryBytes` for every
   * execution group created through the returned Cgroups together: however many run at once,
   * they cannot take more of the host (on v1 `memory.limit_in_bytes`, with `memory.use_hierarchy`
   * so the children count toward it; on v2 `memory.max`, and the memory and pids controllers
   * handed on to the children). A group of that name that a dead worker left is reused, its
   * execution groups removed first.
   *
   * @throws Error (from the file system) when it cannot be created or limited
   */
  async nest(name: string, memoryBytes: number): Promise<Cgroups> {
    const dirs = this.parents.map((parent) => join(parent, name));
    for (const dir of dirs) {
      await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
    const nested = new Cgroups(this.version, dirs, memoryBytes);
    await nested.sweep('');
    if (this.version === 2) {
      await writeFile(join(dirs[0], 'memory.max'), String(memoryBytes));
      await writeFile(join(dirs[0], 'memory.swap.max'), '0').catch(() => undefined); // no swap accounting: nothing to cap
      await writeFile(join(dirs[0], 'cgroup.subtree_control'), '+memory +pids');
    } else {
      // Counting the children toward the parent is the only mode of recent kernels, a choice on old ones.
      await writeFile(join(dirs[0], 'memory.use_hierarchy'), '1').catch(() => undefined);
      const memsw = join(dirs[0], 'memory.memsw.limit_in_bytes');
      const swapAccounted = existsSync(memsw);
      // memory + swap may never be below memory: lift it before the memory limit moves.
      if (swapAccounted) await writeFile(memsw, '-1');
      await writeFile(join(dirs[0], 'memory.limit_in_bytes'), String(memoryBytes));
      if (swapAccounted) await writeFile(memsw, String(memoryBytes));
    }
    return nested;
  }

  /**
   * Kills the processes of, and removes, every execution group whose name starts with `prefix`
   * (those a dead worker left behind).
   */
  async sweep(prefix: string): Promise<void> {
    const names = new Set<string>();
    for (const parent of this.parents) {
      for (const entry of await readdir(parent, { withFileTypes: true }).catch(() => [])) {
        if (entry.isDirectory() && entry.name.startsWith(prefix)) names.add(entry.name);
      }
    }
    for (const name of names)
      await new Group(
        this.version,
        this.parents.map((parent) => join(parent, name)),
      ).destroy();
  }

  /** Removes this worker's groups when they are empty (synchronous, best effort: at process exit). */
  removeSync(): void {
    for (const dir of this.parents) {
      try {
        rmdirSync(dir);
      } catch {
        // not empty or already gone: the next holder of the name reuses it
      }
    }
  }

  /** Where execution groups are created: for the worker's start-up report. */
  describe(): string {
    const total = this.totalMemoryBytes === undefined ? '' : `, ${Math.round(this.totalMemoryBytes / MIB)} MiB for all executions together`;
    return `cgroup v${this.version} (${this.version === 1 ? 'memory and pids hierarchies' : 'memory and pids controllers'} under ${this.parents.join(', ')}${total})`;
  }
}

class Group implements ExecutionCgroup {
  readonly procsFiles: string[];

  constructor(
    private readonly version: 1 | 2,
    private readonly dirs: string[],
  ) {
    this.procsFiles = dirs.map((dir) => join(dir, 'cgroup.procs'));
  }

  async oomKilled(): Promise<boolean> {
    const file = join(this.dirs[0], this.version === 2 ? 'memory.events' : 'memory.oom_control');
    const text = await readFile(file, 'utf8').catch(() => '');
    const kills = /^oom_kill (\d+)/m.exec(text);
    if (kills) return Number(kills[1]) > 0;
    // Older v1 kernels count no kills: a limit hit is the best sign there is.
    return this.version === 1 && Number((await readFile(join(this.dirs[0], 'memory.failcnt'), 'utf8').catch(() => '0')).trim()) > 0;
  }

  async destroy(): Promise<boolean> {
    const deadline = Date.now() + SWEEP_BOUND_MS;
    if (this.version === 2) await writeFile(join(this.dirs[0], 'cgroup.kill'), '1').catch(() => undefined);
    for (;;) {
      for (const dir of this.dirs) for (const pid of await members(dir)) killQuietly(pid);
      // rmdir succeeds once the group is empty (a process that was just killed may still be exiting).
      const removed = await Promise.all(
        this.dirs.map((dir) =>
          rmdir(dir).then(
            () => true,
            (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
          ),
        ),
      );
      if (removed.every(Boolean)) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

async function members(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

/**
 * Makes `parent` hand its memory and pids controllers to child groups. On cgroup v2 a group that
 * holds processes cannot, so when enabling fails and this process sits in `parent`, it moves
 * itself into the leaf `parent/weft-worker` and tries again.
 */
async function delegateV2(parent: string): Promise<void> {
  const wanted = ['memory', 'pids'];
  const available = (await readFile(join(parent, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
  const missing = wanted.filter((c) => !available.includes(c));
  if (missing.length > 0) throw new Error(`cgroup v2 group ${parent} cannot use the ${missing.join(' and ')} controller (not delegated to it)`);
  const enabled = (): Promise<boolean> =>
    readFile(join(parent, 'cgroup.subtree_control'), 'utf8').then(
      (text) => wanted.every((c) => text.split(/\s+/).includes(c)),
      () => false,
    );
  if (await enabled()) return;
  const enable = (): Promise<void> => writeFile(join(parent, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
  try {
    await enable();
  } catch {
    const leaf = join(parent, 'weft-worker');
    await mkdir(leaf).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await writeFile(join(leaf, 'cgroup.procs'), String(process.pid));
    await enable();
  }
}

function systemPaths(): CgroupPaths {
  let self = '';
  try {
    self = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    // not Linux: locate() says there is no cgroup
  }
  return { root: '/sys/fs/cgroup', self };
}

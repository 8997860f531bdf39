import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { ExecutionError } from '../executor.js';
import { setLongTimeout } from '../long-timer.js';

/** How one execution's process ended. */
export interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The last `maxLogBytes` of its stderr. */
  stderr: string;
  /** The last `maxLogBytes` of its stdout and stderr together, in the order they arrived. */
  output: string;
  /** Bytes of stdout and stderr before {@link output} that were not kept. */
  outputCutBytes: number;
}

/** A command line to start: the file, its arguments, and the uid/gid to start it as (if any). */
export interface Launch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  uid?: number;
  gid?: number;
  /** A file to open and hand the command as fd 3 (bwrap's seccomp filter). */
  seccomp?: string;
}

/** How long past the deadline a child's exit is still awaited before the attempt times out. */
const DEADLINE_GRACE_MS = 100;
/** After the child exits, how long its pipes may stay open (held by a leftover process) before we stop reading. */
const PIPE_GRACE_MS = 250;

/**
 * Runs `launch` in a process group of its own, keeping the tail of stderr and the tail of both
 * streams together (each at most `maxLogBytes`; what comes before is counted, never held), until it
 * exits, `seconds` have passed or `signal` aborts. On the deadline or an abort the group is
 * SIGKILLed and the promise settles at once: it never waits for pipes that a leftover process
 * holds open (after a normal exit they get {@link PIPE_GRACE_MS}). Durations beyond Node's
 * 24.8-day timer maximum are waited out in chunks.
 *
 * @throws ExecutionError when the command cannot be started
 */
export function runProcess(launch: Launch, seconds: number, signal: AbortSignal | undefined, maxLogBytes: number): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    // A fresh descriptor each time: bwrap reads the filter to its end, moving the offset.
    const filter = launch.seccomp !== undefined ? openSync(launch.seccomp, 'r') : undefined;
    const child = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ['ignore', 'pipe', 'pipe', ...(filter !== undefined ? [filter] : [])],
      // Its own process group, so a kill also reaches anything it started outside a sandbox.
      detached: true,
      ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.gid } : {}),
    });
    if (filter !== undefined) closeSync(filter);
    const stderr = new LogTail(maxLogBytes);
    const output = new LogTail(maxLogBytes);
    let settled = false;
    let exitGrace: NodeJS.Timeout | undefined;
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const settle = (outcome: Omit<ProcessOutcome, 'stderr' | 'output' | 'outputCutBytes'>): void => {
      if (settled) return;
      settled = true;
      deadline.clear();
      clearTimeout(overdue);
      clearTimeout(exitGrace);
      signal?.removeEventListener('abort', onCancel);
      // A leftover process may hold the pipes open: stop reading instead of waiting for it.
      child.stdout!.destroy();
      child.stderr!.destroy();
      const kept = output.kept();
      resolve({ ...outcome, stderr: stderr.text(), output: kept.text, outputCutBytes: kept.cutBytes });
    };
    let exited = false;
    let overdue: NodeJS.Timeout | undefined;
    // A worker stopped (SIGSTOP, a stalled host) past the deadline wakes up to this timer and to
    // the exit of a child that finished in time, timers first: the exit gets DEADLINE_GRACE_MS to
    // be seen before the attempt counts as timed out.
    const deadline = setLongTimeout(() => {
      overdue = setTimeout(() => {
        if (exited) return;
        killGroup();
        settle({ exitCode: null, signal: 'SIGKILL', timedOut: true, cancelled: false });
      }, DEADLINE_GRACE_MS);
    }, seconds * 1000);
    const onCancel = (): void => {
      killGroup();
      settle({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: true });
    };
    signal?.addEventListener('abort', onCancel, { once: true });
    if (signal?.aborted) onCancel();

    // Both are drained (a full pipe would block the code); only stderr feeds error messages.
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      output.push(chunk);
    });
    child.on('exit', (exitCode, exitSignal) => {
      exited = true;
      killGroup();
      exitGrace = setTimeout(() => settle({ exitCode, signal: exitSignal, timedOut: false, cancelled: false }), PIPE_GRACE_MS);
    });
    child.on('error', (err) => {
      if (settled) return;
      settled = true;
      deadline.clear();
      clearTimeout(overdue);
      signal?.removeEventListener('abort', onCancel);
      killGroup();
      reject(new ExecutionError(`cannot start ${launch.file}: ${err.message}`));
    });
    child.on('close', (exitCode, exitSignal) => settle({ exitCode, signal: exitSignal, timedOut: false, cancelled: false }));
  });
}

/**
 * Keeps the last `limit` bytes of a stream, holding at most twice that (plus one chunk) whatever
 * the stream's length, and counts what it dropped.
 */
export class LogTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  /** The last byte dropped (-1 while none was): whether the kept bytes begin a line. */
  private lastDropped = -1;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > 2 * this.limit) {
      const all = Buffer.concat(this.chunks);
      // A copy: a view would keep the whole concatenation alive.
      this.chunks = [Buffer.from(all.subarray(all.length - this.limit))];
      this.lastDropped = all[all.length - this.limit - 1]!;
      this.dropped += all.length - this.limit;
      this.size = this.limit;
    }
  }

  text(): string {
    return this.kept().text;
  }

  /**
   * The kept tail as text and how many bytes of the stream came before it. A tail that was cut
   * starts at a line: the rest of a line cut in its middle goes with what came before, unless
   * nothing but that line is kept (one long line: its tail then starts at a character, UTF-8
   * continuation bytes at the cut dropped).
   */
  kept(): { text: string; cutBytes: number } {
    const all = Buffer.concat(this.chunks);
    const start = Math.max(0, all.length - this.limit);
    let from = start;
    if (this.dropped + start > 0) {
      const before = start > 0 ? all[start - 1]! : this.lastDropped;
      const newline = before === 0x0a ? -1 : all.indexOf(0x0a, start);
      if (newline >= 0 && newline < all.length - 1) from = newline + 1;
      else while (from < all.length && (all[from]! & 0xc0) === 0x80) from++;
    }
    return { text: all.subarray(from).toString('utf8'), cutBytes: this.dropped + from };
  }
}

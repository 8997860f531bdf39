import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { constants as osConstants, tmpdir, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { ExecutionError } from '../executor.js';
import type { ExecutionContext, TaskExecutor } from '../executor.js';
import { runProcess, type ProcessOutcome } from './child.js';
import { Cgroups, type ExecutionCgroup } from './cgroup.js';
import { detectIsolation, findOnPath, executableByAnyone, type CodeIsolation } from './isolation.js';
import { codeLimits, DEFAULT_MAX_PROCESSES, invalid, totalMemoryMb, type CodeLimits } from './limits.js';
import { MemoryBudget, ReservationAborted, type MemoryBudgetState } from './memory-budget.js';
import { setLongTimeout } from '../long-timer.js';
import { killMarked, killUids } from './processes.js';
import { parseEnvelope, readResultFile } from './result-file.js';
import { seccompFilter } from './seccomp.js';
import { createExecutionFiles, launchCommand, realpathOr, SANDBOX, type RunAsUser } from './sandbox.js';
import { onProcessExit, resolveUidRange, SlotPool, type UidRange } from './uid-pool.js';

export { DEFAULT_UID_BASE, type UidRange } from './uid-pool.js';
export type { CodeIsolation } from './isolation.js';
export type { RunAsUser } from './sandbox.js';
export type { MemoryBudgetState } from './memory-budget.js';

/** A change of an execution's share of the worker's CODE memory ({@link CodeExecutorOptions.onMemory}). */
export interface CodeMemoryEvent extends MemoryBudgetState {
  /**
   * `waiting`: its `memory_mb` does not fit in what is left, it waits; `abandoned`: its wait ended
   * without memory (cancelled, handed back, timed out); `reserved`: it may run; `released`: it ended.
   */
  type: 'waiting' | 'abandoned' | 'reserved' | 'released';
  taskId: string;
  attempt: number;
  /** The execution's `memory_mb`. */
  memoryMb: number;
}

export interface CodeExecutorOptions {
  /** Python interpreter, looked up on PATH (default `python3`; the first one any user may run). */
  python?: string;
  /** Node binary (default the worker's own, `process.execPath`). */
  node?: string;
  /** Directory under which executions get their folders (default `os.tmpdir()`). */
  tempDir?: string;
  /** Largest result read back, in bytes (default 10 MiB); a larger one fails the attempt (OUTPUT_TOO_LARGE). */
  maxResultBytes?: number;
  /**
   * Tail kept of stderr (for error messages) and, apart, of stdout and stderr together (the
   * attempt's logs, `ctx.log`), in bytes each (default 64 KiB); the rest is counted, not held.
   */
  maxLogBytes?: number;
  /**
   * When the worker runs as root, each execution runs as its own uid (gid the same number) from
   * [`uidBase`, `uidBase + uidSlots`), one slot per concurrent execution. Default: a block of
   * `uidSlots` uids from 2 000 000 000 up claimed for this process, so that worker processes on
   * one machine never share a uid. Nothing else on the machine may use these uids: every process
   * of the block is killed when a worker claims it, and a slot's when an execution ends.
   */
  uidBase?: number;
  /** Number of uids in the pool: the most executions that run at once (default 1024); more wait for a slot. */
  uidSlots?: number;
  /** The `prlimit` binary, or `false` for none. Default: `prlimit` on PATH. */
  prlimit?: string | false;
  /** The bubblewrap binary, or `false` to run without namespaces. Default: `bwrap` on PATH. */
  bwrap?: string | false;
  /** Whether executions get cgroups of their own (default true, when the worker may create them). */
  cgroups?: boolean;
  /**
   * Run CODE even when part of the isolation cannot be applied (default false: such a worker
   * fails every CODE attempt, saying what is missing). For local development only.
   */
  allowUnconfined?: boolean;
  /** Processes and threads an execution may hold at once (default 128). */
  maxProcesses?: number;
  /**
   * Memory all executions together may hold, MiB (`WEFT_CODE_MAX_TOTAL_MB`; default half the
   * host's memory, at least the largest `memory_mb`): the limit of the cgroup that holds every
   * execution's, and what executions reserve before they start (an execution that does not fit
   * waits, first come first served; one larger than the whole fails for good).
   */
  maxTotalMemoryMb?: number;
  /** Told of every execution that waits for, reserves or releases its memory (logs, metrics). */
  onMemory?: (event: CodeMemoryEvent) => void;
}

type Language = 'python' | 'js';

const DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_LOG_BYTES = 64 * 1024;
/** The runner kills itself this long after the deadline, should the worker die and leave it behind. */
const WATCHDOG_GRACE_SECONDS = 5;
/** RLIMIT_DATA of a Node child beyond memory_mb, where no cgroup holds its memory. */
const NODE_DATA_HEADROOM_MB = 128;
/** Environment variable marking an unconfined execution's processes (the worker's uid, no pid namespace). */
const EXECUTION_ENV = 'WEFT_EXECUTION_ID';
/** While a slot's uid still has processes after a sweep, it is swept again this often before reuse. */
const QUARANTINE_RETRY_MS = 5000;
const STDERR_EXCERPT_CHARS = 800;
/** RLIMIT_FSIZE beyond the largest result: a result just over it is still read and named OUTPUT_TOO_LARGE. */
const FILE_SIZE_HEADROOM = 1024 * 1024;

const RUNTIMES: Record<string, Language> = {
  python: 'python',
  py: 'python',
  python3: 'python',
  js: 'js',
  javascript: 'js',
  node: 'js',
  nodejs: 'js',
};

const RUNNERS_DIR = new URL('./runners/', import.meta.url);
/**
 * Per language: the runner's source (read once: real files beside this one, copied into each
 * execution), its file name, and the name the tenant's code is written under.
 */
const RUNNERS: Record<Language, { name: string; source: string; handler: string }> = {
  python: { name: 'runner.py', source: readFileSync(new URL('runner.py', RUNNERS_DIR), 'utf8'), handler: 'handler.py' },
  js: { name: 'runner.cjs', source: readFileSync(new URL('runner.cjs', RUNNERS_DIR), 'utf8'), handler: 'handler.js' },
};

/**
 * Executes `CODE` tasks: the code defines `handler(input)` — Python (may be `async def`) or
 * JavaScript (may be async; a classic script or an ES module exporting `handler`); the runtime
 * comes from `ctx.runtime` (`python`/`py`, `js`/`node`/`javascript`).
 *
 * Input: the resolved spec `{code, timeout_seconds? = 30, memory_mb? = 256, ...rest}`; the
 * handler receives `rest`. Both limits are checked here, after templates resolved, against the
 * bounds publishing applies to literals ({@link codeLimits}). Output: the handler's JSON return
 * value (`undefined`/`None` give `null`; NaN and ±Infinity fail the attempt in both runtimes).
 *
 * Isolation (what {@link isolation} reports at start): each execution runs under bubblewrap with
 * its own pid, mount, network, IPC and UTS namespaces and `--die-with-parent` — so nothing of it
 * outlives its attempt or the worker — in a cgroup of its own holding memory and process count for
 * all its processes, with RLIMIT_FSIZE/CPU/NPROC, as a uid of its own from the worker's block (as
 * root), in a fresh folder removed afterwards, with size-capped private `/tmp`, `/dev/shm` and
 * working directory, and without the worker's environment. When the worker claims its uid block,
 * it kills every process of those uids and removes what a previous holder left (folders and
 * cgroups) before the first execution. A worker that cannot apply all of it fails every CODE
 * attempt (not retryable) naming what is missing, unless `allowUnconfined`.
 *
 * The result travels through one file the worker reads with no-follow, non-blocking, size-capped
 * I/O ({@link readResultFile}), so anything the code prints cannot corrupt it and nothing it does
 * to the file can block or mislead the worker. What it prints (stdout and stderr, interleaved as
 * they arrive) goes to `ctx.log`: its last `maxLogBytes` (64 KiB), after a count of the bytes cut.
 *
 * Errors (`ExecutionError`): a malformed spec, a limit over its bound, an unknown runtime, a syntax
 * error, a missing handler and a worker that refuses CODE are not retryable; an exception
 * (type, message and where), a timeout, a non-JSON value, a bad result file, OUTPUT_TOO_LARGE, a
 * crash and running out of memory are.
 */
export class CodeExecutor implements TaskExecutor {
  private readonly python: string;
  private readonly node: string;
  private readonly tempDir: string;
  private readonly maxResultBytes: number;
  private readonly maxLogBytes: number;
  private readonly maxProcesses: number;
  /** The memory all executions together may hold, MiB. */
  readonly memory: MemoryBudget;
  /** The uids executions run as (root only); undefined: the worker's own user. */
  readonly uidRange: UidRange | undefined;
  private readonly pool: SlotPool | undefined;
  private readonly options: CodeExecutorOptions;
  private prepared: Promise<CodeIsolation> | undefined;
  private serial = 0;

  constructor(options: CodeExecutorOptions = {}) {
    this.options = options;
    this.python = findOnPath(options.python ?? 'python3', executableByAnyone) ?? options.python ?? 'python3';
    this.node = realpathOr(options.node ?? process.execPath);
    this.tempDir = options.tempDir ?? tmpdir();
    const maxResult = options.maxResultBytes;
    this.maxResultBytes = maxResult !== undefined && Number.isSafeInteger(maxResult) && maxResult > 0 ? maxResult : DEFAULT_MAX_RESULT_BYTES;
    this.maxLogBytes = options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES;
    this.maxProcesses = options.maxProcesses ?? DEFAULT_MAX_PROCESSES;
    this.memory = new MemoryBudget(totalMemoryMb(options.maxTotalMemoryMb, totalmem()));
    this.uidRange = resolveUidRange(options.uidBase, options.uidSlots, (first) => this.blockDirOf(first));
    this.pool = this.uidRange ? new SlotPool(this.uidRange.size) : undefined;
  }

  /** Whether this executor runs CODE when part of its isolation is missing. */
  get allowsUnconfined(): boolean {
    return this.options.allowUnconfined ?? false;
  }

  /**
   * What isolation this worker's executions get, found once: clears what a previous holder of the
   * uid block left, then checks each part by use (a probe execution in the sandbox).
   */
  isolation(): Promise<CodeIsolation> {
    return (this.prepared ??= this.prepare());
  }

  async execute(input: unknown, ctx: ExecutionContext): Promise<unknown> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('spec must be an object');
    const { code, timeout_seconds, memory_mb, ...handlerInput } = input as Record<string, unknown>;
    if (typeof code !== 'string' || code.trim() === '') throw invalid('spec.code is required');
    const language = RUNTIMES[(ctx.runtime ?? '').trim().toLowerCase()];
    if (!language) {
      throw new ExecutionError(
        ctx.runtime ? `unsupported runtime ${JSON.stringify(ctx.runtime)} (python or js)` : 'a CODE task needs a runtime (python or js)',
        false,
      );
    }
    const limits = codeLimits({ timeout_seconds, memory_mb }, { maxProcesses: this.maxProcesses, maxFileBytes: this.maxResultBytes + FILE_SIZE_HEADROOM });
    let inputJson: string;
    try {
      inputJson = JSON.stringify(handlerInput);
    } catch (err) {
      throw invalid(`the input is not JSON: ${(err as Error).message}`);
    }
    const isolation = await this.isolation();
    if (!isolation.confined && !this.options.allowUnconfined) {
      throw new ExecutionError(`this worker does not run CODE: ${isolation.missing.join('; ')}. ${isolation.remedy}`, false, 'unavailable');
    }

    if (limits.memoryMb > this.memory.totalMb) {
      throw new ExecutionError(
        `spec.memory_mb ${limits.memoryMb} is over the ${this.memory.totalMb} MB that all CODE executions of this worker may hold together (WEFT_CODE_MAX_TOTAL_MB): it can never run here; lower memory_mb or raise WEFT_CODE_MAX_TOTAL_MB`,
        false,
        'invalid_spec',
      );
    }
    // timeout_seconds is the wall-clock time of the whole attempt, the wait for memory included.
    const deadline = Date.now() + limits.seconds * 1000;
    const releaseMemory = await this.reserveMemory(limits, ctx);
    const slot = this.pool ? await this.pool.take() : undefined;
    const runAs: RunAsUser | undefined = slot === undefined ? undefined : { uid: this.uidRange!.base + slot, gid: this.uidRange!.base + slot };
    // The sweep after the process ended, before the result is read; the slot's release reuses it.
    let swept: boolean | undefined;
    const sweep = async (): Promise<void> => {
      if (runAs) swept = await killUids({ first: runAs.uid, count: 1 });
    };
    try {
      return await this.executeAs(isolation, runAs, slot, language, code, inputJson, limits, deadline, ctx, sweep);
    } finally {
      // The execution's cgroup is gone: its processes hold no memory any more.
      releaseMemory();
      if (slot !== undefined) await this.releaseSlot(slot, runAs!.uid, swept);
    }
  }

  /**
   * Reserves the execution's `memory_mb` in the worker's budget, waiting (first come, first served)
   * while it does not fit, for at most `timeout_seconds`, until the attempt is cancelled (its
   * signal: a lost lease, a cancelled run, a drain handing it back). Resolves to its release.
   *
   * @throws ExecutionError `cancelled` or `timeout` (retryable) when the wait ends without memory
   */
  private async reserveMemory(limits: CodeLimits, ctx: ExecutionContext): Promise<() => void> {
    const tell = (type: CodeMemoryEvent['type']): void =>
      this.options.onMemory?.({ type, taskId: ctx.taskId, attempt: ctx.attempt, memoryMb: limits.memoryMb, ...this.memory.state });
    const ended = new AbortController();
    const cancel = (): void => ended.abort();
    ctx.signal?.addEventListener('abort', cancel, { once: true });
    if (ctx.signal?.aborted) cancel();
    const timer = setLongTimeout(cancel, limits.seconds * 1000);
    try {
      return await this.memory.reserve(limits.memoryMb, ended.signal, {
        waiting: () => tell('waiting'),
        abandoned: () => tell('abandoned'),
        reserved: () => tell('reserved'),
        released: () => tell('released'),
      });
    } catch (err) {
      if (!(err instanceof ReservationAborted)) throw err;
      if (ctx.signal?.aborted) throw new ExecutionError('execution was cancelled', true, 'cancelled');
      const { reservedMb, totalMb } = this.memory.state;
      throw new ExecutionError(
        `timed out after ${limits.seconds}s waiting for ${limits.memoryMb} MB of CODE memory: running executions hold ${reservedMb} of the ${totalMb} MB this worker allows (WEFT_CODE_MAX_TOTAL_MB)`,
        true,
        'timeout',
      );
    } finally {
      timer.clear();
      ctx.signal?.removeEventListener('abort', cancel);
    }
  }

  private async executeAs(
    isolation: CodeIsolation,
    runAs: RunAsUser | undefined,
    slot: number | undefined,
    language: Language,
    code: string,
    inputJson: string,
    limits: CodeLimits,
    deadline: number,
    { signal, log }: ExecutionContext,
    sweep: () => Promise<void>,
  ): Promise<unknown> {
    const { name, source, handler } = RUNNERS[language];
    const files = await createExecutionFiles(isolation.blockDir, runAs, { [name]: source, [handler]: code, 'input.json': inputJson });
    const executionId = randomBytes(12).toString('hex');
    let cgroup: ExecutionCgroup | undefined;
    try {
      if (isolation.cgroups) {
        cgroup = await isolation.cgroups.create(`${this.cgroupPrefix()}${slot ?? 'u'}-${++this.serial}`, {
          memoryBytes: limits.memoryMb * 1024 * 1024,
          maxProcesses: limits.maxProcesses,
        });
      }
      const sandboxed = isolation.tools.bwrap !== undefined;
      const at = sandboxed ? { in: SANDBOX.in, result: SANDBOX.result } : { in: files.inDir, result: files.resultFile };
      const watchdogSeconds = Math.ceil(limits.seconds) + WATCHDOG_GRACE_SECONDS;
      const runner = join(at.in, name);
      const codeFile = join(at.in, handler);
      const inputFile = join(at.in, 'input.json');
      const [command, env]: [string[], Record<string, string>] =
        language === 'python'
          ? [
              [this.python, runner, codeFile, inputFile, at.result, String(limits.memoryMb), String(watchdogSeconds)],
              { PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8', PYTHONUNBUFFERED: '1' },
            ]
          : [[this.node, `--max-old-space-size=${limits.memoryMb}`, runner, codeFile, inputFile, at.result, String(watchdogSeconds * 1000)], {}];
      if (!sandboxed && !runAs) env[EXECUTION_ENV] = executionId;
      const effective = cgroup || language !== 'js' ? limits : { ...limits, dataBytes: (limits.memoryMb + NODE_DATA_HEADROOM_MB) * 1024 * 1024 };
      const launch = launchCommand(isolation.tools, command, env, files, effective, runAs, cgroup?.procsFiles ?? []);

      let outcome: ProcessOutcome;
      let outOfMemory = false;
      try {
        outcome = await runProcess(launch, Math.max(0, deadline - Date.now()) / 1000, signal, this.maxLogBytes);
      } finally {
        // Before the result is read: nothing of this execution may write it any more.
        outOfMemory = (await cgroup?.oomKilled()) ?? false;
        await cgroup?.destroy();
        cgroup = undefined;
        if (runAs) await sweep();
        else if (!sandboxed) await killMarked(`${EXECUTION_ENV}=${executionId}`, await realpath(files.workDir).catch(() => files.workDir));
      }
      log?.output(outcome.output, outcome.outputCutBytes);
      if (outcome.timedOut) throw new ExecutionError(`timed out after ${limits.seconds}s`, true, 'timeout');
      if (outcome.cancelled) throw new ExecutionError('execution was cancelled', true, 'cancelled');
      const text = await readResultFile(files.resultFile, { ownerUid: runAs?.uid ?? process.getuid?.(), maxBytes: this.maxResultBytes });
      const envelope = parseEnvelope(text === '' ? undefined : text, outcome.exitCode === 0);
      if (!envelope) throw crashed(language, sandboxed ? unwrapSignal(outcome) : outcome, limits, outOfMemory);
      if (envelope.ok) return envelope.result;
      switch (envelope.kind) {
        case 'no_handler':
        case 'syntax':
          throw new ExecutionError(envelope.message, false, 'code_exception');
        case 'exception':
          if (envelope.retryable === false) throw new ExecutionError(`${envelope.message} (non-retryable error, not retried)`, false, 'code_exception');
          throw new ExecutionError(explainException(envelope.message, limits), true, 'code_exception');
        case 'not_json':
          throw new ExecutionError(envelope.message, true, 'code_exception');
      }
    } finally {
      await cgroup?.destroy();
      // A leftover folder must not turn a finished execution into a failure.
      await rm(files.dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The folder executions of the uid block starting at `first` live in. */
  private blockDirOf(first: number): string {
    return join(this.tempDir, `weft-code-${first}`);
  }

  private cgroupPrefix(): string {
    return `weft-${this.uidRange ? this.uidRange.base : `p${process.pid}`}-`;
  }

  private async prepare(): Promise<CodeIsolation> {
    const blockDir = this.uidRange ? this.blockDirOf(this.uidRange.base) : join(this.tempDir, `weft-code-p${process.pid}`);
    // Whatever a previous holder of the block left: its processes, its folders (here, and where it
    // kept them when its TMPDIR was another), its cgroups.
    if (this.uidRange) await killUids({ first: this.uidRange.base, count: this.uidRange.size });
    const previous = this.uidRange?.previousDir;
    if (previous && basename(previous) === basename(blockDir)) await rm(previous, { recursive: true, force: true });
    await rm(blockDir, { recursive: true, force: true });
    await mkdir(blockDir, { mode: 0o711 });
    onProcessExit(() => rmSync(blockDir, { recursive: true, force: true }));
    const filter = seccompFilter();
    const seccomp = filter ? join(blockDir, 'seccomp.bpf') : undefined;
    if (filter && seccomp) await writeFile(seccomp, filter, { mode: 0o600 });
    let cgroups = this.options.cgroups === false ? 'cgroups are turned off in the worker options' : await Cgroups.detect();
    if (cgroups instanceof Cgroups) {
      await cgroups.sweep(this.cgroupPrefix());
      cgroups = await this.holdAll(cgroups);
    }
    return detectIsolation({
      blockDir,
      uidRange: this.uidRange,
      cgroups,
      bwrap: this.options.bwrap === false ? undefined : (this.options.bwrap ?? findOnPath('bwrap')),
      prlimit: this.options.prlimit === false ? undefined : (this.options.prlimit ?? findOnPath('prlimit')),
      setpriv: findOnPath('setpriv'),
      node: this.node,
      seccomp,
    });
  }

  /**
   * The group every execution's cgroup is created in, limited to the memory all of them may hold
   * together; removed at exit when empty. A sentence saying why when it cannot be made.
   */
  private async holdAll(cgroups: Cgroups): Promise<Cgroups | string> {
    const name = `weft-code-${this.uidRange ? this.uidRange.base : `p${process.pid}`}`;
    try {
      const all = await cgroups.nest(name, this.memory.totalMb * 1024 * 1024);
      onProcessExit(() => all.removeSync());
      return all;
    } catch (err) {
      return `cannot create the cgroup ${name} holding all executions (${this.memory.totalMb} MB together, WEFT_CODE_MAX_TOTAL_MB) under ${cgroups.parents.join(' and ')}: ${(err as Error).message}`;
    }
  }

  /**
   * Frees a pool slot once no process of its uid is left (`swept`: what the execution's own sweep
   * found, when it ran); until then (processes that outlived the sweep, stuck in the kernel) it
   * stays taken and is swept again in the background.
   */
  private async releaseSlot(slot: number, uid: number, swept: boolean | undefined): Promise<void> {
    if (swept ?? (await killUids({ first: uid, count: 1 }))) {
      this.pool!.release(slot);
      return;
    }
    const retry = (): void => {
      setTimeout(() => {
        void killUids({ first: uid, count: 1 }).then((clean) => (clean ? this.pool!.release(slot) : retry()), retry);
      }, QUARANTINE_RETRY_MS).unref();
    };
    retry();
  }
}

function crashed(language: Language, outcome: ProcessOutcome, limits: CodeLimits, outOfMemory: boolean): ExecutionError {
  const how = outcome.exitCode !== null ? `code ${outcome.exitCode}` : `signal ${outcome.signal}`;
  const memory = outOfMemory || /heap out of memory|Reached heap limit|MemoryError/.test(outcome.stderr) || (language === 'js' && outcome.signal === 'SIGABRT');
  const why = memory
    ? ` (out of memory: limit ${limits.memoryMb} MB for all its processes)`
    : outcome.signal === 'SIGXFSZ'
      ? ` (wrote a file over the limit of ${limits.maxFileBytes} bytes)`
      : outcome.signal === 'SIGXCPU'
        ? ` (used more than ${limits.cpuSeconds}s of CPU)`
        : '';
  const excerpt = outcome.stderr.trim().slice(-STDERR_EXCERPT_CHARS);
  return new ExecutionError(
    `${language === 'python' ? 'python' : 'node'} exited with ${how} without a result${why}${excerpt ? `: ${excerpt}` : ''}`,
    true,
    'code_exception',
  );
}

/**
 * bubblewrap exits with 128 + N when the process it ran was killed by signal N: report the signal,
 * as for a process run directly.
 */
function unwrapSignal(outcome: ProcessOutcome): ProcessOutcome {
  const code = outcome.exitCode;
  if (code === null || code <= 128) return outcome;
  const name = Object.entries(osConstants.signals).find(([, n]) => n === code - 128)?.[0] as NodeJS.Signals | undefined;
  return name ? { ...outcome, exitCode: null, signal: name } : outcome;
}

/** An exception's message, with the limit it ran into when that is what happened. */
function explainException(message: string, limits: CodeLimits): string {
  if (message.startsWith('MemoryError') || message.includes('Array buffer allocation failed')) return `${message} (memory limit ${limits.memoryMb} MB)`;
  if (/EFBIG|File too large/.test(message)) return `${message} (file size limit ${limits.maxFileBytes} bytes; OUTPUT_TOO_LARGE when it was the result)`;
  return message;
}

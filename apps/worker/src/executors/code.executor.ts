import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, realpathSync, statSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, readdir, readlink, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { ExecutionError } from './executor.js';
import type { ExecutionContext, TaskExecutor } from './executor.js';
import { claimUidBlock } from './uid-block.js';

export interface CodeExecutorOptions {
  /** Python interpreter, looked up on PATH (default `python3`). */
  python?: string;
  /** Node binary (default the worker's own, `process.execPath`). */
  node?: string;
  /** Directory under which each execution gets a fresh temp dir (default `os.tmpdir()`). */
  tempDir?: string;
  /** Largest result read back, in bytes (default 10 MiB); a larger one fails the attempt (OUTPUT_TOO_LARGE). */
  maxResultBytes?: number;
  /** Tail of stdout and stderr kept for error messages, in bytes each (default 64 KiB). */
  maxLogBytes?: number;
  /**
   * When the worker runs as root, each execution runs as its own uid (gid the same number) taken
   * from the range [`uidBase`, `uidBase + uidSlots`), one slot per concurrent execution. Default:
   * a block of `uidSlots` uids from 2 000 000 000 up (far above any ids a distribution hands out;
   * no /etc/passwd entry needed) claimed for this process ({@link claimUidBlock}), so that
   * several worker processes on one machine never share a uid. The range must hold ids nothing
   * else on the machine uses: every process of a slot's uid is killed when an execution ends.
   * The last id must not exceed 2 147 483 647. Ignored when not root.
   */
  uidBase?: number;
  /** Number of uids in the pool: the most executions that run at once (default 1024); more wait for a slot. */
  uidSlots?: number;
  /**
   * The `prlimit` binary that caps a Node child's data segment (RLIMIT_DATA), or `false` for no
   * such cap. Default: `prlimit` found on PATH when the executor is built.
   */
  prlimit?: string | false;
  /**
   * Run each execution in a network namespace of its own (nothing but a down loopback: no
   * PostgreSQL, Redis, cloud metadata or internet, and no abstract Unix sockets), through
   * `unshare --net`, and — when `setpriv` is on PATH too — in a mount namespace of its own
   * whose `/run` (and so `/var/run`) is an empty tmpfs, hiding the local services' Unix sockets
   * (PostgreSQL's, MariaDB's, Docker's). Default: on when the worker runs as root and `unshare`
   * is on PATH; otherwise code has the worker's network and sockets.
   */
  isolateNetwork?: boolean;
}

/** The uid/gid code runs as. */
export interface RunAsUser {
  uid: number;
  gid: number;
}

/** The uids executions run as when the worker is root: `base` … `base + size - 1` (gid = uid). */
export interface UidRange {
  base: number;
  size: number;
}

type Language = 'python' | 'js';

/** What the runner writes to the result file: the result, or why there is none. */
type Envelope =
  | { ok: true; result: unknown }
  | { ok: false; kind: 'no_handler' | 'syntax' | 'exception' | 'not_json'; message: string };

interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  stderr: string;
}

const DEFAULT_TIMEOUT_SECONDS = 30;
const DEFAULT_MEMORY_MB = 256;
const DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_LOG_BYTES = 64 * 1024;
/** The runner kills itself this long after the deadline, should the worker die and leave it behind. */
const WATCHDOG_GRACE_SECONDS = 5;
/** After the child exits, how long its pipes may stay open (held by a leftover process) before we stop reading. */
const PIPE_GRACE_MS = 250;
/** RLIMIT_DATA of a Node child beyond memory_mb: the runtime's own allocations and the watchdog thread. */
const NODE_DATA_HEADROOM_MB = 128;
/** Environment variable carrying an execution's id; every process the code starts inherits it. */
const EXECUTION_ENV = 'WEFT_EXECUTION_ID';
/** First uid (and gid) of the per-execution pool when running as root. */
export const DEFAULT_UID_BASE = 2_000_000_000;
const DEFAULT_UID_SLOTS = 1024;
/** Node (libuv) takes uids and gids as int32. */
const MAX_UID = 2_147_483_647;
/** How long the sweep of a slot's uid keeps killing before it gives up (and keeps the slot out of use). */
const SWEEP_BOUND_MS = 2000;
/** While a slot's uid still has processes after a sweep, it is swept again this often before reuse. */
const QUARANTINE_RETRY_MS = 5000;
const STDERR_EXCERPT_CHARS = 800;

const RUNTIMES: Record<string, Language> = {
  python: 'python',
  py: 'python',
  python3: 'python',
  js: 'js',
  javascript: 'js',
  node: 'js',
  nodejs: 'js',
};

/**
 * Python runner: `runner.py <code file> <input file> <result file> <memory MB> <watchdog s>`.
 * Limits its address space, runs the code, calls `handler(input)` (awaiting a coroutine) and
 * writes an envelope (see `Envelope`) to the result file, so that prints cannot corrupt it.
 */
const PYTHON_RUNNER = String.raw`
import json, os, signal, sys, traceback

code_path, input_path, result_path = sys.argv[1], sys.argv[2], sys.argv[3]
memory_bytes, watchdog_seconds = int(sys.argv[4]) * 1024 * 1024, int(sys.argv[5])
name = os.path.basename(code_path)

def finish(text):
    with open(result_path, 'w', encoding='utf-8') as f:
        f.write(text)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no waiting for threads the code may have left behind

def fail(kind, message):
    finish(json.dumps({'ok': False, 'kind': kind, 'message': message}))

def describe(e):
    text = type(e).__name__ + (': ' + str(e) if str(e) else '')
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == name]
    if frames:
        f = frames[-1]
        text += ' (%s, line %d, in %s%s)' % (name, f.lineno, f.name, ': ' + f.line if f.line else '')
    return text

signal.alarm(watchdog_seconds)
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
except (ImportError, ValueError, OSError):
    pass

with open(input_path, encoding='utf-8') as f:
    data = json.load(f)
with open(code_path, encoding='utf-8') as f:
    source = f.read()

try:
    compiled = compile(source, name, 'exec')
except SyntaxError as e:
    fail('syntax', '%s: %s (%s, line %s)' % (type(e).__name__, e.msg, name, e.lineno))

namespace = {'__name__': '__weft_handler__', '__file__': name}
try:
    exec(compiled, namespace)
    handler = namespace.get('handler')
    if not callable(handler):
        fail('no_handler', 'code must define handler(input)')
    result = handler(data)
    import inspect
    if inspect.iscoroutine(result):
        import asyncio
        result = asyncio.run(result)
except BaseException as e:
    fail('exception', describe(e))

try:
    payload = json.dumps(result, allow_nan=False)
except (TypeError, ValueError, RecursionError) as e:
    fail('not_json', 'handler returned a value that is not JSON-serializable: %s' % e)
finish('{"ok":true,"result":' + payload + '}')
`;

/**
 * JavaScript runner (CommonJS): `runner.cjs <code file> <input file> <result file> <watchdog ms>`.
 * Runs the code as a classic script (top-level `handler` function, `module.exports`) or,
 * when that does not parse, as an ES module (`export function handler`); awaits the
 * handler and writes an envelope to the result file.
 */
const JS_RUNNER = String.raw`
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { Worker } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');

const [codePath, inputPath, resultPath, watchdogMs] = process.argv.slice(2);
// A busy loop blocks the main thread; a thread outside it can still end the process.
new Worker('setTimeout(() => process.kill(process.pid, "SIGKILL"), ' + Number(watchdogMs) + ')', { eval: true }).unref();

function finish(text) {
  fs.writeFileSync(resultPath, text);
  process.exit(0);
}
function fail(kind, message) {
  finish(JSON.stringify({ ok: false, kind, message }));
}
function describe(err) {
  if (err === null || typeof err !== 'object' || typeof err.message !== 'string') {
    let text;
    try { text = typeof err === 'string' ? err : JSON.stringify(err); } catch { text = String(err); }
    return 'Error: thrown value ' + text;
  }
  let text = (err.name || 'Error') + (err.message ? ': ' + err.message : '');
  const where = /handler\.m?js:\d+:\d+/.exec(String(err.stack || ''));
  if (where) text += ' (' + where[0] + ')';
  return text;
}
function describeSyntax(err, file) {
  const line = new RegExp(file.replace('.', '\\.') + ':(\\d+)').exec(String(err.stack || ''));
  return 'SyntaxError: ' + err.message + (line ? ' (' + file + ', line ' + line[1] + ')' : '');
}
// JSON.stringify, except that NaN and ±Infinity fail (as Python's json.dumps(allow_nan=False)
// does) instead of silently becoming null; the message names where they are.
function toJson(value) {
  const paths = new WeakMap();
  return JSON.stringify(value, function (key, v) {
    const parent = paths.get(this);
    const at = parent === undefined ? '$' : Array.isArray(this) ? parent + '[' + key + ']' : /^[A-Za-z_$][\w$]*$/.test(key) ? parent + '.' + key : parent + '[' + JSON.stringify(key) + ']';
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(v + ' at ' + at + ' is not a JSON number');
    if (v !== null && typeof v === 'object') paths.set(v, at);
    return v;
  });
}
process.on('uncaughtException', (err) => fail('exception', describe(err)));
process.on('unhandledRejection', (err) => fail('exception', describe(err)));

async function loadScript(source) {
  const script = new vm.Script(source, { filename: 'handler.js' });
  const cjsModule = { exports: {} };
  globalThis.require = createRequire(path.join(process.cwd(), 'handler.js'));
  globalThis.module = cjsModule;
  globalThis.exports = cjsModule.exports;
  script.runInThisContext();
  // Top-level const/let live in the global lexical scope, visible to a later script.
  const named = vm.runInThisContext('typeof handler === "function" ? handler : undefined');
  const exported = cjsModule.exports;
  return named || (typeof exported === 'function' ? exported : exported && exported.handler);
}

async function loadModule(source) {
  const file = path.join(path.dirname(codePath), 'handler.mjs');
  fs.writeFileSync(file, source);
  let ns;
  try {
    ns = await import(pathToFileURL(file).href);
  } catch (err) {
    // A parse error has no frame in the code itself; an error thrown while evaluating it has.
    if (err instanceof SyntaxError && !/at .*handler\.mjs:\d+:\d+/.test(String(err.stack))) {
      fail('syntax', describeSyntax(err, 'handler.mjs'));
    }
    throw err;
  }
  if (typeof ns.handler === 'function') return ns.handler;
  if (typeof ns.default === 'function') return ns.default;
  return ns.default && ns.default.handler;
}

(async () => {
  const input = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
  const source = fs.readFileSync(codePath, 'utf8');
  let handler;
  try {
    let script = true;
    try {
      new vm.Script(source, { filename: 'handler.js' });
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      // Only module syntax (import, export, top-level await) sends the code down the ES module path.
      if (!/\bimport\b|'export'|\bmodules?\b/.test(err.message)) fail('syntax', describeSyntax(err, 'handler.js'));
      script = false;
    }
    handler = script ? await loadScript(source) : await loadModule(source);
  } catch (err) {
    fail('exception', describe(err));
  }
  if (typeof handler !== 'function') fail('no_handler', 'code must define handler(input)');
  let result;
  try {
    result = await handler(input);
  } catch (err) {
    fail('exception', describe(err));
  }
  const notJson = 'handler returned a value that is not JSON-serializable: ';
  if (typeof result === 'function' || typeof result === 'symbol') fail('not_json', notJson + 'a ' + typeof result);
  let json;
  try {
    json = result === undefined ? 'null' : toJson(result);
  } catch (err) {
    fail('not_json', notJson + (err instanceof RangeError ? 'nested too deeply (' + err.message + ')' : err.message));
  }
  finish('{"ok":true,"result":' + json + '}');
})();
`;

/**
 * Executes `CODE` tasks (DESIGN §2): the code defines `handler(input)` — Python (`python3`,
 * may be `async def`) or JavaScript (`node`, may be async; a classic script or an ES module
 * exporting `handler`). The runtime comes from `ctx.runtime` (`python`/`py`, `js`/`node`/
 * `javascript`).
 *
 * Input: the resolved spec `{code, timeout_seconds? = 30, memory_mb? = 256, ...rest}`; the
 * handler receives `rest` (the spec without `code`, `timeout_seconds`, `memory_mb`).
 * Output: the handler's return value, which must be JSON (`undefined`/`None` give `null`; NaN and
 * ±Infinity fail the attempt in both runtimes rather than silently becoming `null` in one).
 *
 * Isolation: a child process (no shell) in its own process group, in a fresh temp dir that is
 * removed afterwards, with an environment holding only PATH and the execution's id
 * (`WEFT_EXECUTION_ID`, plus Python's encoding and no-bytecode variables) — none of the worker's
 * variables or credentials.
 *
 * As root (the setup for untrusted code), every execution runs as a uid of its own: slot `i` of
 * a pool is uid = gid = `uidBase + i` (default 2 000 000 000 …, `uidSlots` of them; supplementary
 * groups dropped), held by at most one execution at a time. Its temp dir is owned by that uid
 * with mode 0700, so neither the worker's `/proc/<pid>/environ` (DATABASE_URL…), memory and files
 * nor another execution's processes, inputs and handler files are reachable. When the execution
 * ends (result, error, timeout or cancel), every process whose real uid is the slot's is
 * SIGKILLed (a /proc scan, repeated until none is left) before the slot is used again — exact,
 * whatever the code did (`setsid`, `chdir('/')`, an empty environment, a double fork). Should
 * processes survive {@link SWEEP_BOUND_MS} of that (stuck in the kernel), the slot stays out of
 * use and is swept again until it is clean. Not covered: files the code leaves in world-writable
 * places outside its temp dir (/tmp, /dev/shm), which a later execution on the same uid could read.
 * The interpreter must be executable by those uids (not under /root, say): checked once per
 * runtime, at first use, by running it as the slot's uid.
 *
 * Not root: the code runs as the worker's own user (it cannot switch users), so isolation is only
 * the empty environment and the limits below — the code can read what the worker can read.
 * Leftovers are then found by heuristics: each process of the worker's uid that carries this
 * execution's `WEFT_EXECUTION_ID` in its initial environment or whose working directory is the
 * execution's temp dir is killed; code that scrubs its environment *and* changes directory in a
 * new session escapes that sweep.
 *
 * Time: on the wall-clock deadline (or `ctx.signal`) the process group is killed with SIGKILL and
 * the attempt ends at once — it never waits for pipes that a leftover process holds open; after a
 * normal exit, pipes get {@link PIPE_GRACE_MS}. Leftover processes are then swept as above.
 *
 * Memory: Python gets RLIMIT_AS = memory_mb (set by the runner). Node gets
 * `--max-old-space-size` = memory_mb for the V8 heap, and — when `prlimit` is available —
 * RLIMIT_DATA = memory_mb + 128 MiB for the whole process (heap, Buffers, ArrayBuffers, native
 * allocations; Linux ≥ 4.7 counts private writable mappings), so Buffers cannot take more than
 * about memory_mb + 128 MiB either. Without `prlimit`, only the V8 heap is limited and Buffers are
 * bounded by nothing but the machine.
 * The result travels through a file, so anything the code prints cannot corrupt it.
 *
 * Errors (`ExecutionError`): a malformed spec, an unknown runtime, a syntax error and a
 * missing handler are not retryable; an exception (message: type, message and where in the
 * code), a timeout ("timed out after Ns"), a non-JSON return value ("handler returned a value
 * that is not JSON-serializable: …"), a result file the code overwrote with something that is not
 * JSON, a result over `maxResultBytes` (OUTPUT_TOO_LARGE), a crash or an out-of-memory exit are
 * retryable.
 */
export class CodeExecutor implements TaskExecutor {
  private readonly python: string;
  private readonly node: string;
  private readonly tempDir: string;
  private readonly maxResultBytes: number;
  private readonly maxLogBytes: number;
  /** The uids executions run as (root only); undefined: the worker's own user. */
  readonly uidRange: UidRange | undefined;
  private readonly prlimit: string | undefined;
  /** The `unshare` binary when executions get their own network namespace. */
  readonly unshare: string | undefined;
  /** The `setpriv` binary when executions also get a mount namespace hiding `/run`. */
  readonly setpriv: string | undefined;
  private readonly pool: SlotPool | undefined;
  /** Runtimes whose interpreter was seen to start as a pool uid. */
  private readonly runnable = new Set<Language>();
  /** Interpreter commands resolved to a path any user may run (for `setpriv`). */
  private readonly runnableByAnyone = new Map<string, string>();

  constructor(options: CodeExecutorOptions = {}) {
    this.python = options.python ?? 'python3';
    this.node = options.node ?? process.execPath;
    this.tempDir = options.tempDir ?? tmpdir();
    this.maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.maxLogBytes = options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES;
    this.uidRange = resolveUidRange(options.uidBase, options.uidSlots);
    this.pool = this.uidRange ? new SlotPool(this.uidRange.size) : undefined;
    this.prlimit = options.prlimit === false ? undefined : (options.prlimit ?? findOnPath('prlimit'));
    const isolate = options.isolateNetwork ?? this.uidRange !== undefined;
    this.unshare = isolate && this.uidRange ? findOnPath('unshare') : undefined;
    this.setpriv = this.unshare ? findOnPath('setpriv') : undefined;
    if (options.isolateNetwork && !this.unshare) {
      throw new Error('CodeExecutor: isolateNetwork needs the worker to run as root with `unshare` (util-linux) on PATH');
    }
  }

  async execute(input: unknown, ctx: ExecutionContext): Promise<unknown> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw invalid('spec must be an object');
    }
    const { code, timeout_seconds, memory_mb, ...handlerInput } = input as Record<string, unknown>;
    if (typeof code !== 'string' || code.trim() === '') throw invalid('spec.code is required');
    const language = RUNTIMES[(ctx.runtime ?? '').trim().toLowerCase()];
    if (!language) {
      throw new ExecutionError(
        ctx.runtime
          ? `unsupported runtime ${JSON.stringify(ctx.runtime)} (python or js)`
          : 'a CODE task needs a runtime (python or js)',
        false,
      );
    }
    const seconds = positiveNumber(timeout_seconds, DEFAULT_TIMEOUT_SECONDS, 'spec.timeout_seconds');
    const memoryMb = Math.ceil(positiveNumber(memory_mb, DEFAULT_MEMORY_MB, 'spec.memory_mb'));
    let inputJson: string;
    try {
      inputJson = JSON.stringify(handlerInput);
    } catch (err) {
      throw invalid(`the input is not JSON: ${(err as Error).message}`);
    }

    const slot = this.pool ? await this.pool.take() : undefined;
    const runAs: RunAsUser | undefined =
      slot === undefined ? undefined : { uid: this.uidRange!.base + slot, gid: this.uidRange!.base + slot };
    try {
      return await this.executeAs(runAs, language, code, inputJson, seconds, memoryMb, ctx.signal);
    } finally {
      if (slot !== undefined) await this.releaseSlot(slot, runAs!.uid);
    }
  }

  private async executeAs(
    runAs: RunAsUser | undefined,
    language: Language,
    code: string,
    inputJson: string,
    seconds: number,
    memoryMb: number,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const dir = await mkdtemp(join(this.tempDir, 'weft-code-'));
    const executionId = randomBytes(12).toString('hex');
    try {
      // The child writes its result (and, for ES modules, handler.mjs) here; no other uid can enter it.
      if (runAs) {
        await chown(dir, runAs.uid, runAs.gid);
        await chmod(dir, 0o700);
      }
      const codeFile = join(dir, language === 'python' ? 'handler.py' : 'handler.js');
      const inputFile = join(dir, 'input.json');
      const resultFile = join(dir, 'result.json');
      const runner = join(dir, language === 'python' ? 'runner.py' : 'runner.cjs');
      const watchdogSeconds = Math.ceil(seconds) + WATCHDOG_GRACE_SECONDS;
      await Promise.all([
        writeFile(runner, language === 'python' ? PYTHON_RUNNER : JS_RUNNER),
        writeFile(codeFile, code),
        writeFile(inputFile, inputJson),
      ]);
      // Readable by the child whatever the worker's umask.
      if (runAs) await Promise.all([runner, codeFile, inputFile].map((f) => chown(f, runAs.uid, runAs.gid)));
      const base = { ...childPath(), [EXECUTION_ENV]: executionId };
      const nodeArgs = [`--max-old-space-size=${memoryMb}`, runner, codeFile, inputFile, resultFile, String(watchdogSeconds * 1000)];
      const [command, args, env] =
        language === 'python'
          ? [
              this.python,
              [runner, codeFile, inputFile, resultFile, String(memoryMb), String(watchdogSeconds)],
              { ...base, PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
            ]
          : this.prlimit
            ? [this.prlimit, [`--data=${(memoryMb + NODE_DATA_HEADROOM_MB) * 1024 * 1024}`, '--', this.node, ...nodeArgs], base]
            : [this.node, nodeArgs, base];
      let outcome: ProcessOutcome;
      try {
        if (runAs) await this.checkRunnable(language, runAs, dir);
        outcome = await this.run(command, args, env, dir, seconds, signal, runAs);
      } finally {
        // Before the result is read: nothing of this execution may write it any more.
        if (runAs) await killUid(runAs.uid);
        else await this.killLeftovers(executionId, await realpath(dir).catch(() => dir));
      }
      if (outcome.timedOut) throw new ExecutionError(`timed out after ${seconds}s`);
      if (outcome.cancelled) throw new ExecutionError('execution was cancelled');
      const envelope = await this.readEnvelope(resultFile, outcome.exitCode === 0);
      if (!envelope) throw crashed(language, outcome, memoryMb);
      if (envelope.ok) return envelope.result;
      switch (envelope.kind) {
        case 'no_handler':
        case 'syntax':
          throw new ExecutionError(envelope.message, false);
        case 'exception':
          throw new ExecutionError(
            envelope.message.startsWith('MemoryError') || envelope.message.includes('Array buffer allocation failed')
              ? `${envelope.message} (memory limit ${memoryMb} MB)`
              : envelope.message,
          );
        case 'not_json':
          throw new ExecutionError(envelope.message);
      }
    } finally {
      // A leftover temp dir must not turn a finished execution into a failure.
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /**
   * The command line of one execution. As root with `unshare`: a network namespace of its own
   * and, with `setpriv`, a mount namespace whose `/run` is an empty tmpfs; then the slot's uid
   * and gid with no supplementary groups, and an exec of the command (same pid, same process
   * group). Otherwise the command itself, run as the slot's uid when there is one.
   */
  private sandboxed(command: string, args: string[], runAs: RunAsUser | undefined): [string, string[], { uid?: number; gid?: number }] {
    if (!runAs || !this.unshare) return [command, args, runAs ? { uid: runAs.uid, gid: runAs.gid } : {}];
    // setpriv gives up on the first PATH entry the uid may not run (a shim under /root, say):
    // hand it the first one any user may run instead (looked up once per command).
    let resolved = this.runnableByAnyone.get(command);
    if (resolved === undefined) this.runnableByAnyone.set(command, (resolved = findOnPath(command, executableByAnyone) ?? command));
    command = resolved;
    if (!this.setpriv) return [this.unshare, ['--net', `--setgid=${runAs.gid}`, `--setuid=${runAs.uid}`, '--', command, ...args], {}];
    const script =
      'mount -t tmpfs -o size=64k,mode=755,nosuid,nodev,noexec weft-run /run || exit 126; ' +
      'unset PWD OLDPWD; u=$1; g=$2; p=$3; shift 3; exec "$p" --reuid="$u" --regid="$g" --clear-groups -- "$@"';
    const argv = ['--net', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', script, 'weft-sandbox'];
    return [this.unshare, [...argv, String(runAs.uid), String(runAs.gid), this.setpriv, command, ...args], {}];
  }

  /**
   * Frees a pool slot once no process of its uid is left; until then (processes that outlived
   * {@link SWEEP_BOUND_MS} of SIGKILLs) it stays taken and is swept again in the background.
   */
  private async releaseSlot(slot: number, uid: number): Promise<void> {
    if (await killUid(uid)) {
      this.pool!.release(slot);
      return;
    }
    const retry = (): void => {
      setTimeout(() => {
        void killUid(uid).then((clean) => (clean ? this.pool!.release(slot) : retry()), retry);
      }, QUARANTINE_RETRY_MS).unref();
    };
    retry();
  }

  /**
   * Whether the interpreter starts as a pool uid (it may live where only root can reach, e.g. a
   * version manager under /root); checked once per runtime, with the PATH the code gets.
   */
  private async checkRunnable(language: Language, runAs: RunAsUser, cwd: string): Promise<void> {
    if (this.runnable.has(language)) return;
    const [command, args]: [string, string[]] =
      language === 'python'
        ? [this.python, ['-c', '']]
        : this.prlimit
          ? [this.prlimit, ['--', this.node, '-e', '']]
          : [this.node, ['-e', '']];
    const problem = await new Promise<string | undefined>((resolve) => {
      const child = spawn(command, args, { cwd, env: childPath(), stdio: ['ignore', 'ignore', 'pipe'], uid: runAs.uid, gid: runAs.gid });
      const stderr = new LogTail(STDERR_EXCERPT_CHARS);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.on('error', (err) => {
        clearTimeout(timer);
        resolve(err.message);
      });
      child.on('close', (exitCode, exitSignal) => {
        clearTimeout(timer);
        const text = stderr.text().trim();
        resolve(exitCode === 0 ? undefined : `exited with ${exitCode !== null ? `code ${exitCode}` : `signal ${exitSignal}`}${text ? `: ${text}` : ''}`);
      });
    });
    if (problem !== undefined) {
      throw new ExecutionError(
        `${command} cannot be run by the sandbox uid ${runAs.uid} (${problem}); install the interpreter where every user may execute it, or point the executor at one`,
      );
    }
    this.runnable.add(language);
  }

  private run(
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    cwd: string,
    seconds: number,
    signal: AbortSignal | undefined,
    runAs: RunAsUser | undefined,
  ): Promise<ProcessOutcome> {
    return new Promise((resolve, reject) => {
      // In its own network namespace, unshare (as root) drops to the slot's uid and gid (and no
      // supplementary groups) itself, then execs the command: same pid, same process group.
      const [file, argv, user] = this.sandboxed(command, args, runAs);
      // detached: its own process group, so a kill also reaches anything the code spawned.
      const child = spawn(file, argv, {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        ...user,
      });
      const stdout = new LogTail(this.maxLogBytes);
      const stderr = new LogTail(this.maxLogBytes);
      let settled = false;
      let exitGrace: NodeJS.Timeout | undefined;
      const killGroup = (): void => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const settle = (outcome: Omit<ProcessOutcome, 'stderr'>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(exitGrace);
        signal?.removeEventListener('abort', onCancel);
        // A leftover process may hold the pipes open: stop reading instead of waiting for it.
        child.stdout.destroy();
        child.stderr.destroy();
        resolve({ ...outcome, stderr: stderr.text() });
      };
      // On the deadline or a cancel, the attempt ends now: the kill is sent, nothing is awaited.
      const timer = setTimeout(() => {
        killGroup();
        settle({ exitCode: null, signal: 'SIGKILL', timedOut: true, cancelled: false });
      }, seconds * 1000);
      const onCancel = (): void => {
        killGroup();
        settle({ exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: true });
      };
      signal?.addEventListener('abort', onCancel, { once: true });
      if (signal?.aborted) onCancel();

      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.on('exit', (exitCode, exitSignal) => {
        // Leftover grandchildren in the group would hold the pipes open and delay 'close'; one
        // that left the group gets PIPE_GRACE_MS, then is the sweep's business.
        killGroup();
        exitGrace = setTimeout(() => settle({ exitCode, signal: exitSignal, timedOut: false, cancelled: false }), PIPE_GRACE_MS);
      });
      child.on('error', (err) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onCancel);
        killGroup();
        reject(new ExecutionError(`cannot start ${command}: ${err.message}`));
      });
      child.on('close', (exitCode, exitSignal) => settle({ exitCode, signal: exitSignal, timedOut: false, cancelled: false }));
    });
  }

  /**
   * Not root: SIGKILLs every process of the worker's user that this execution started and that is
   * still alive: its initial environment carries `WEFT_EXECUTION_ID=<id>`, or its working
   * directory is `dir`. Several passes, so processes forked while the previous pass ran are caught
   * too. Reads /proc (Linux); elsewhere, or for processes it may not inspect, it does nothing.
   */
  private async killLeftovers(executionId: string, dir: string): Promise<void> {
    const uid = process.getuid?.();
    if (uid === undefined) return;
    const marker = Buffer.from(`${EXECUTION_ENV}=${executionId}\0`);
    for (let pass = 0; pass < 3; pass++) {
      let pids: string[];
      try {
        pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
      } catch {
        return;
      }
      let killed = 0;
      for (const pid of pids) {
        try {
          if ((await stat(`/proc/${pid}`)).uid !== uid) continue;
          const ours =
            (await readFile(`/proc/${pid}/environ`)).includes(marker) ||
            (await readlink(`/proc/${pid}/cwd`).catch(() => '')).replace(/ \(deleted\)$/, '') === dir;
          if (!ours) continue;
          process.kill(Number(pid), 'SIGKILL');
          killed++;
        } catch {
          // Gone meanwhile, or not ours to inspect.
        }
      }
      if (killed === 0) return;
    }
  }

  /**
   * The runner's envelope, or null when there is none (no file, or — after an unclean exit — a
   * partly written one: the caller reports the crash). A file over `maxResultBytes` is
   * OUTPUT_TOO_LARGE; after a clean exit a file that is not JSON can only be the code's doing.
   */
  private async readEnvelope(file: string, cleanExit: boolean): Promise<Envelope | null> {
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return null;
    }
    if (size > this.maxResultBytes) {
      throw new ExecutionError(`the result exceeds ${this.maxResultBytes} bytes (OUTPUT_TOO_LARGE)`);
    }
    let envelope: unknown;
    try {
      envelope = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      if (!cleanExit) return null;
      throw new ExecutionError(`the result is not valid JSON: ${(err as Error).message}`);
    }
    return typeof envelope === 'object' && envelope !== null && 'ok' in envelope ? (envelope as Envelope) : null;
  }
}

/** Keeps the last `limit` bytes of a stream. */
class LogTail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > 2 * this.limit) {
      const all = Buffer.concat(this.chunks);
      this.chunks = [all.subarray(all.length - this.limit)];
      this.size = this.limit;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }
}

/** The per-execution uid pool: none unless the worker is root. */
function resolveUidRange(base: number | undefined, size = DEFAULT_UID_SLOTS): UidRange | undefined {
  const first = base ?? DEFAULT_UID_BASE;
  if (!Number.isSafeInteger(first) || first < 1 || !Number.isSafeInteger(size) || size < 1 || first + size - 1 > MAX_UID) {
    throw new Error(`CodeExecutor: uidBase ${first} / uidSlots ${size} must give a uid range within 1…${MAX_UID}`);
  }
  if (process.getuid?.() !== 0) return undefined;
  return { base: base ?? claimUidBlock(DEFAULT_UID_BASE, size, MAX_UID), size };
}

/** Slot indexes 0 … size-1, each held by one execution at a time; the lowest free one is taken first. */
class SlotPool {
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

/**
 * SIGKILLs every process whose real uid is `uid` (from `Uid:` in /proc/<pid>/status), pass after
 * pass, until a scan finds none (zombies do not count: they run nothing) or {@link SWEEP_BOUND_MS}
 * has passed. True when none is left. Without /proc (not Linux), there is nothing to scan: true.
 */
async function killUid(uid: number): Promise<boolean> {
  const deadline = Date.now() + SWEEP_BOUND_MS;
  for (;;) {
    const pids = await processesOf(uid);
    if (pids.length === 0) return true;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    if (Date.now() >= deadline) return (await processesOf(uid)).length === 0;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Live (not zombie) processes whose real uid is `uid`. */
async function processesOf(uid: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found = await Promise.all(
    entries
      .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
      .map(async (p) => {
        let status: string;
        try {
          status = await readFile(`/proc/${p}/status`, 'utf8');
        } catch {
          return undefined; // Gone meanwhile.
        }
        const real = /^Uid:\s+(\d+)/m.exec(status);
        if (!real || Number(real[1]) !== uid) return undefined;
        return /^State:\s+[ZX]/m.test(status) ? undefined : Number(p);
      }),
  );
  return found.filter((pid): pid is number => pid !== undefined);
}

/**
 * The first `name` on PATH (or `name` itself when it holds a slash) that `usable` accepts —
 * by default one this process may execute — as `usable` returns it; undefined when none does.
 */
function findOnPath(name: string, usable: (file: string) => string | undefined = executable): string | undefined {
  const candidates = name.includes('/') ? [name] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  for (const candidate of candidates) {
    const file = usable(candidate);
    if (file) return file;
  }
  return undefined;
}

/** `file` when this process may execute it. */
function executable(file: string): string | undefined {
  try {
    accessSync(file, fsConstants.X_OK);
    return file;
  } catch {
    return undefined; // not here
  }
}

/**
 * The real path of `file` when any user may execute it: the others-execute bit on the file and
 * the others-search bit on every directory above it (a shim under /root fails this).
 */
function executableByAnyone(file: string): string | undefined {
  try {
    const real = realpathSync(file);
    if ((statSync(real).mode & 0o001) === 0) return undefined;
    for (let dir = dirname(real); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return undefined;
      if (dirname(dir) === dir) return real;
    }
  } catch {
    return undefined; // not there
  }
}

/** The only variable the child inherits: PATH, to find interpreters and tools. */
function childPath(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
}

function crashed(language: Language, outcome: ProcessOutcome, memoryMb: number): ExecutionError {
  const how = outcome.exitCode !== null ? `code ${outcome.exitCode}` : `signal ${outcome.signal}`;
  const outOfMemory =
    /heap out of memory|Reached heap limit|MemoryError/.test(outcome.stderr) ||
    (language === 'js' && outcome.signal === 'SIGABRT');
  const excerpt = outcome.stderr.trim().slice(-STDERR_EXCERPT_CHARS);
  return new ExecutionError(
    `${language === 'python' ? 'python' : 'node'} exited with ${how} without a result` +
      (outOfMemory ? ` (out of memory: limit ${memoryMb} MB)` : '') +
      (excerpt ? `: ${excerpt}` : ''),
  );
}

function positiveNumber(value: unknown, fallback: number, name: string): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) throw invalid(`${name} must be a positive number`);
  return n;
}

function invalid(message: string): ExecutionError {
  return new ExecutionError(`invalid CODE spec: ${message}`, false);
}

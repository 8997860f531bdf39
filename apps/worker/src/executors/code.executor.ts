import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import { chown, mkdtemp, readFile, readdir, readlink, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ExecutionError } from './executor.js';
import type { ExecutionContext, TaskExecutor } from './executor.js';

export interface CodeExecutorOptions {
  /** Python interpreter, looked up on PATH (default `python3`). */
  python?: string;
  /** Node binary (default the worker's own, `process.execPath`). */
  node?: string;
  /** Directory under which each execution gets a fresh temp dir (default `os.tmpdir()`). */
  tempDir?: string;
  /** Largest result read back, in bytes (default 10 MiB); a larger one fails the attempt. */
  maxResultBytes?: number;
  /** Tail of stdout and stderr kept for error messages, in bytes each (default 64 KiB). */
  maxLogBytes?: number;
  /**
   * The user the code runs as when the worker runs as root: a uid/gid, or `false` to keep root
   * (never do this with untrusted code). Default: `nobody` from /etc/passwd, else 65534:65534.
   * Ignored when the worker is not root (it cannot switch users; the code runs as the worker's
   * user). Resolved once, when the executor is built.
   */
  runAsUser?: { uid: number; gid: number } | false;
  /**
   * The `prlimit` binary that caps a Node child's data segment (RLIMIT_DATA), or `false` for no
   * such cap. Default: `prlimit` found on PATH when the executor is built.
   */
  prlimit?: string | false;
}

/** The uid/gid code runs as. */
export interface RunAsUser {
  uid: number;
  gid: number;
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
/** The fallback uid/gid of `nobody`. */
const NOBODY = { uid: 65534, gid: 65534 } as const;
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
    json = result === undefined ? 'null' : JSON.stringify(result);
  } catch (err) {
    fail('not_json', notJson + err.message);
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
 * Output: the handler's return value, which must be JSON (`undefined`/`None` give `null`).
 *
 * Isolation: a child process (no shell) in its own process group, in a fresh temp dir that is
 * removed afterwards, with an environment holding only PATH and the execution's id
 * (`WEFT_EXECUTION_ID`, plus Python's encoding and no-bytecode variables) — none of the worker's
 * variables or credentials. When the worker runs as root, the child runs as an unprivileged user
 * (`runAsUser`, default `nobody`; supplementary groups dropped) that owns only its temp dir, so
 * it cannot read the worker's `/proc/<pid>/environ` (DATABASE_URL…), memory or files. All
 * executions share that user: concurrent executions of different tenants could still see each
 * other's processes and temp dirs; a uid per slot would close that and is not done here.
 *
 * Time: on the wall-clock deadline (or `ctx.signal`) the process group is killed with SIGKILL and
 * the attempt ends at once — it never waits for pipes that a leftover process holds open; after a
 * normal exit, pipes get {@link PIPE_GRACE_MS}. Leftovers: after every execution, each process of
 * the child's uid that carries this execution's `WEFT_EXECUTION_ID` in its initial environment or
 * whose working directory is the execution's temp dir is killed, which catches processes that
 * left the group (`setsid`, daemons). Code that scrubs its environment *and* changes directory in
 * a new session escapes that sweep (it would need a cgroup or a uid per execution to catch).
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
 * code), a timeout ("timed out after Ns"), a non-JSON return value, a crash or an
 * out-of-memory exit are retryable.
 */
export class CodeExecutor implements TaskExecutor {
  private readonly python: string;
  private readonly node: string;
  private readonly tempDir: string;
  private readonly maxResultBytes: number;
  private readonly maxLogBytes: number;
  /** The user children run as; undefined: the worker's own user. */
  readonly runAs: RunAsUser | undefined;
  private readonly prlimit: string | undefined;

  constructor(options: CodeExecutorOptions = {}) {
    this.python = options.python ?? 'python3';
    this.node = options.node ?? process.execPath;
    this.tempDir = options.tempDir ?? tmpdir();
    this.maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.maxLogBytes = options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES;
    this.runAs = resolveRunAs(options.runAsUser);
    this.prlimit = options.prlimit === false ? undefined : (options.prlimit ?? findOnPath('prlimit'));
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

    const dir = await mkdtemp(join(this.tempDir, 'weft-code-'));
    const executionId = randomBytes(12).toString('hex');
    try {
      // The child writes its result (and, for ES modules, handler.mjs) here; nobody else can read it.
      if (this.runAs) await chown(dir, this.runAs.uid, this.runAs.gid);
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
      if (this.runAs) await Promise.all([runner, codeFile, inputFile].map((f) => chown(f, this.runAs!.uid, this.runAs!.gid)));
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
        outcome = await this.run(command, args, env, dir, seconds, ctx.signal);
      } finally {
        await this.killLeftovers(executionId, await realpath(dir).catch(() => dir));
      }
      if (outcome.timedOut) throw new ExecutionError(`timed out after ${seconds}s`);
      if (outcome.cancelled) throw new ExecutionError('execution was cancelled');
      const envelope = await this.readEnvelope(resultFile);
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

  private run(
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    cwd: string,
    seconds: number,
    signal: AbortSignal | undefined,
  ): Promise<ProcessOutcome> {
    return new Promise((resolve, reject) => {
      // detached: its own process group, so a kill also reaches anything the code spawned.
      const child = spawn(command, args, {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        ...(this.runAs ? { uid: this.runAs.uid, gid: this.runAs.gid } : {}),
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
   * SIGKILLs every process of the child's user that this execution started and that is still
   * alive: its initial environment carries `WEFT_EXECUTION_ID=<id>`, or its working directory is
   * `dir`. Several passes, so processes forked while the previous pass ran are caught too. Reads
   * /proc (Linux); elsewhere, or for processes it may not inspect, it does nothing.
   */
  private async killLeftovers(executionId: string, dir: string): Promise<void> {
    const uid = this.runAs?.uid ?? process.getuid?.();
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

  private async readEnvelope(file: string): Promise<Envelope | null> {
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return null;
    }
    if (size > this.maxResultBytes) {
      throw new ExecutionError(`the result exceeds ${this.maxResultBytes} bytes`);
    }
    try {
      const envelope = JSON.parse(await readFile(file, 'utf8')) as Envelope;
      return typeof envelope === 'object' && envelope !== null && 'ok' in envelope ? envelope : null;
    } catch {
      return null;
    }
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

/**
 * The user children run as: none unless the worker is root; then `runAsUser`, or `nobody` from
 * /etc/passwd, or 65534:65534.
 */
function resolveRunAs(option: CodeExecutorOptions['runAsUser']): RunAsUser | undefined {
  if (process.getuid?.() !== 0 || option === false) return undefined;
  if (option) return { uid: option.uid, gid: option.gid };
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , uid, gid] = line.split(':');
      if (name === 'nobody' && uid && gid && /^\d+$/.test(uid) && /^\d+$/.test(gid)) return { uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // No /etc/passwd: the conventional ids.
  }
  return { ...NOBODY };
}

/** The first executable `name` on PATH, or undefined. */
function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, fsConstants.X_OK);
      return file;
    } catch {
      // Not here.
    }
  }
  return undefined;
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

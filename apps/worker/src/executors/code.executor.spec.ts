import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor, DEFAULT_UID_BASE } from './code.executor.js';
import { failure } from './execution-failure.testing.js';

const py = { taskId: 't001', nodeId: 'score', attempt: 1, runtime: 'python' };
const js = { taskId: 't002', nodeId: 'score', attempt: 1, runtime: 'js' };


/** Whether `pid` runs (a zombie waiting for a reaper counts as dead). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

describe('CodeExecutor', () => {
  let tempDir: string;
  let code: CodeExecutor;

  beforeAll(async () => {
    tempDir = await mkdtemp(join(tmpdir(), 'weft-code-spec-'));
    // Like /tmp: as root the code runs as a pool uid, which must reach its temp dir (and the pid files below).
    await chmod(tempDir, 0o1777);
    code = new CodeExecutor({ tempDir });
    process.env.WEFT_SECRET = 'hunter2';
  });

  afterAll(async () => {
    delete process.env.WEFT_SECRET;
    await rm(tempDir, { recursive: true, force: true });
  });

  describe('python', () => {
    it('returns the object the handler returns, given the spec without code and limits', async () => {
      const out = await code.execute(
        {
          code: 'def handler(input):\n    return {"total": input["price"] * input["qty"], "keys": sorted(input)}\n',
          price: 2.5,
          qty: 4,
          timeout_seconds: 10,
          memory_mb: 128,
        },
        py,
      );
      expect(out).toEqual({ total: 10, keys: ['price', 'qty'] });
    });

    it('accepts the py runtime alias and an async handler', async () => {
      const out = await code.execute(
        { code: 'import asyncio\nasync def handler(input):\n    await asyncio.sleep(0)\n    return [1, None, "x"]\n' },
        { ...py, runtime: 'py' },
      );
      expect(out).toEqual([1, null, 'x']);
    });

    it('keeps print() output out of the result', async () => {
      const out = await code.execute(
        { code: 'import sys\ndef handler(input):\n    print("noise", {"a": 1})\n    print("err", file=sys.stderr)\n    return 42\n' },
        py,
      );
      expect(out).toBe(42);
    });

    it("surfaces the exception's type, message and line", async () => {
      const err = await failure(
        code.execute({ code: 'def handler(input):\n    x = 1\n    raise ValueError("bad order " + str(x))\n' }, py),
      );
      expect(err.retryable).toBe(true);
      expect(err.message).toBe(
        'ValueError: bad order 1 (handler.py, line 3, in handler: raise ValueError("bad order " + str(x)))',
      );
    });

    it('does not leak the worker environment', async () => {
      // The real interpreter: a version-manager shim (pyenv) would add variables of its own.
      // Asked as the user the code runs as (as root: a pool uid, which may not reach a root-only pyenv).
      const asPoolUid = code.uidRange ? { uid: code.uidRange.base, gid: code.uidRange.base } : {};
      const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8', ...asPoolUid }).trim();
      const out = (await new CodeExecutor({ tempDir, python: real }).execute(
        { code: 'import os\ndef handler(input):\n    return {"secret": os.environ.get("WEFT_SECRET"), "keys": sorted(os.environ)}\n' },
        py,
      )) as { secret: unknown; keys: string[] };
      expect(out.secret).toBeNull();
      expect(out.keys.filter((k) => !['PATH', 'WEFT_EXECUTION_ID', 'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING', 'LC_CTYPE'].includes(k))).toEqual([]);
    });

    it('runs in a fresh temp dir that is removed afterwards', async () => {
      const cwd = (await code.execute({ code: 'import os\ndef handler(input):\n    return os.getcwd()\n' }, py)) as string;
      expect(cwd.startsWith(join(tempDir, 'weft-code-'))).toBe(true);
      expect(await readdir(tempDir)).toEqual([]);
    });

    it('kills the process on timeout', async () => {
      const started = Date.now();
      const err = await failure(
        code.execute({ code: 'def handler(input):\n    while True:\n        pass\n', timeout_seconds: 1 }, py),
      );
      expect(err.retryable).toBe(true);
      expect(err.message).toBe('timed out after 1s');
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('kills processes the code leaves behind, on return and on timeout', async () => {
      const spawner = (loop: boolean): string =>
        'import subprocess\n' +
        'def handler(input):\n' +
        '    p = subprocess.Popen(["sleep", "30"])\n' +
        '    with open(input["pidfile"], "w") as f:\n' +
        '        f.write(str(p.pid))\n' +
        (loop ? '    while True:\n        pass\n' : '    return "started"\n');
      for (const loop of [false, true]) {
        const pidfile = join(tempDir, `sleep-${loop}.pid`);
        const started = Date.now();
        // Room for a slow interpreter start before the loop; the returning case must not wait for sleep.
        const run = code.execute({ code: spawner(loop), pidfile, timeout_seconds: loop ? 2 : 10 }, py);
        if (loop) expect((await failure(run)).message).toBe('timed out after 2s');
        else expect(await run).toBe('started');
        expect(Date.now() - started).toBeLessThan(6000);
        const pid = Number(await readFile(pidfile, 'utf8'));
        await rm(pidfile);
        await new Promise((r) => setTimeout(r, 100));
        expect(isAlive(pid)).toBe(false);
      }
    });

    it('rejects a return value that is not JSON', async () => {
      const err = await failure(code.execute({ code: 'def handler(input):\n    return {1, 2}\n' }, py));
      expect(err.message).toBe('handler returned a value that is not JSON-serializable: Object of type set is not JSON serializable');
    });

    it('rejects NaN, infinities and circular values, and a result the code overwrote with garbage', async () => {
      const nan = await failure(code.execute({ code: 'def handler(input):\n    return {"x": float("nan")}\n' }, py));
      expect(nan.retryable).toBe(true);
      expect(nan.message).toMatch(/^handler returned a value that is not JSON-serializable: Out of range float values are not JSON compliant/);
      const circular = await failure(code.execute({ code: 'def handler(input):\n    a = []\n    a.append(a)\n    return a\n' }, py));
      expect(circular.message).toBe('handler returned a value that is not JSON-serializable: Circular reference detected');
      const garbage = await failure(
        code.execute({ code: 'import sys, os\ndef handler(input):\n    open(sys.argv[3], "w").write("{not json")\n    os._exit(0)\n' }, py),
      );
      expect(garbage.message).toMatch(/^the result is not valid JSON: /);
    });

    it('fails for good without a handler or with a syntax error', async () => {
      const missing = await failure(code.execute({ code: 'def main(input):\n    return 1\n' }, py));
      expect(missing.retryable).toBe(false);
      expect(missing.message).toBe('code must define handler(input)');
      const syntax = await failure(code.execute({ code: 'def handler(input)\n    return 1\n' }, py));
      expect(syntax.retryable).toBe(false);
      expect(syntax.message).toMatch(/^SyntaxError: .* \(handler\.py, line 1\)$/);
    });

    it('enforces the memory limit', async () => {
      const err = await failure(
        code.execute({ code: 'def handler(input):\n    return len(bytearray(400 * 1024 * 1024))\n', memory_mb: 100 }, py),
      );
      expect(err.message).toMatch(/^MemoryError.*\(memory limit 100 MB\)$/);
    });
  });

  describe('javascript', () => {
    it('returns the object a plain handler returns', async () => {
      const out = await code.execute(
        { code: 'function handler(input) {\n  return { total: input.price * input.qty, keys: Object.keys(input).sort() };\n}\n', price: 2.5, qty: 4, timeout_seconds: 5 },
        js,
      );
      expect(out).toEqual({ total: 10, keys: ['price', 'qty'] });
    });

    it('awaits an async handler (node runtime alias, const arrow function)', async () => {
      const out = await code.execute(
        { code: 'const handler = async (input) => {\n  await new Promise((r) => setTimeout(r, 20));\n  return { doubled: input.n * 2 };\n};\n', n: 21 },
        { ...js, runtime: 'node' },
      );
      expect(out).toEqual({ doubled: 42 });
    });

    it('loads an ES module exporting handler (javascript runtime alias)', async () => {
      const out = await code.execute(
        { code: "import { createHash } from 'node:crypto';\nexport async function handler(input) {\n  return createHash('sha256').update(input.s).digest('hex').slice(0, 8);\n}\n", s: 'abc' },
        { ...js, runtime: 'javascript' },
      );
      expect(out).toBe('ba7816bf');
    });

    it('keeps console.log output out of the result', async () => {
      const out = await code.execute(
        { code: 'function handler() {\n  console.log("noise", { a: 1 });\n  console.error("err");\n  process.stdout.write("{\\"ok\\":false}\\n");\n  return "fine";\n}\n' },
        js,
      );
      expect(out).toBe('fine');
    });

    it("surfaces the exception's type, message and location", async () => {
      const err = await failure(
        code.execute({ code: 'async function handler(input) {\n  throw new TypeError("no sku on line " + input.line);\n}\n', line: 3 }, js),
      );
      expect(err.retryable).toBe(true);
      expect(err.message).toBe('TypeError: no sku on line 3 (handler.js:2:9)');
    });

    it('does not leak the worker environment', async () => {
      const out = await code.execute(
        { code: 'function handler() {\n  return { secret: process.env.WEFT_SECRET ?? null, keys: Object.keys(process.env) };\n}\n' },
        js,
      );
      expect(out).toEqual({ secret: null, keys: ['PATH', 'WEFT_EXECUTION_ID'] });
    });

    it('kills the process on timeout', async () => {
      const started = Date.now();
      const err = await failure(code.execute({ code: 'function handler() {\n  for (;;) {}\n}\n', timeout_seconds: 1 }, js));
      expect(err.retryable).toBe(true);
      expect(err.message).toBe('timed out after 1s');
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('rejects a return value that is not JSON', async () => {
      const err = await failure(code.execute({ code: 'function handler() {\n  return { n: 10n };\n}\n' }, js));
      expect(err.message).toBe('handler returned a value that is not JSON-serializable: Do not know how to serialize a BigInt');
      const fn = await failure(code.execute({ code: 'function handler() {\n  return () => 1;\n}\n' }, js));
      expect(fn.message).toBe('handler returned a value that is not JSON-serializable: a function');
    });

    it('rejects NaN and infinities as Python does, naming where they are, and circular values', async () => {
      const nan = await failure(code.execute({ code: 'function handler() {\n  return { a: [1, { b: NaN }] };\n}\n' }, js));
      expect(nan.retryable).toBe(true);
      expect(nan.message).toBe('handler returned a value that is not JSON-serializable: NaN at $.a[1].b is not a JSON number');
      const inf = await failure(code.execute({ code: 'function handler() {\n  return { "two words": -Infinity };\n}\n' }, js));
      expect(inf.message).toBe('handler returned a value that is not JSON-serializable: -Infinity at $["two words"] is not a JSON number');
      const top = await failure(code.execute({ code: 'function handler() {\n  return 0 / 0;\n}\n' }, js));
      expect(top.message).toBe('handler returned a value that is not JSON-serializable: NaN at $ is not a JSON number');
      const deep = await failure(code.execute({ code: 'function handler() {\n  let v = [];\n  for (let i = 0; i < 100000; i++) v = [v];\n  return v;\n}\n' }, js));
      expect(deep.message).toBe('handler returned a value that is not JSON-serializable: nested too deeply (Maximum call stack size exceeded)');
      const circular = await failure(code.execute({ code: 'function handler() {\n  const o = {};\n  o.self = o;\n  return o;\n}\n' }, js));
      expect(circular.message).toMatch(/^handler returned a value that is not JSON-serializable: Converting circular structure to JSON/);
      // undefined stays null (a handler that returns nothing), inside objects it is left out, as JSON.stringify does.
      expect(await code.execute({ code: 'function handler() {\n  return { a: undefined, b: [undefined], n: 1.5e300 };\n}\n' }, js)).toEqual({ b: [null], n: 1.5e300 });
    });

    it('fails when the code overwrites its result with something that is not JSON, or returns too much', async () => {
      const garbage = await failure(
        code.execute({ code: 'function handler() {\n  require("fs").writeFileSync(process.argv[4], "{not json");\n  process.exit(0);\n}\n' }, js),
      );
      expect(garbage.retryable).toBe(true);
      expect(garbage.message).toMatch(/^the result is not valid JSON: /);
      const small = new CodeExecutor({ tempDir, maxResultBytes: 1000 });
      const big = await failure(small.execute({ code: 'function handler() {\n  return "x".repeat(2000);\n}\n' }, js));
      expect(big.message).toBe('the result exceeds 1000 bytes (OUTPUT_TOO_LARGE)');
    });

    it('fails for good without a handler or with a syntax error', async () => {
      const missing = await failure(code.execute({ code: 'function main() { return 1; }\n' }, js));
      expect(missing.retryable).toBe(false);
      expect(missing.message).toBe('code must define handler(input)');
      const syntax = await failure(code.execute({ code: 'function handler() {\n  return 1 +;\n}\n' }, js));
      expect(syntax.retryable).toBe(false);
      expect(syntax.message).toBe("SyntaxError: Unexpected token ';' (handler.js, line 2)");
      const moduleSyntax = await failure(code.execute({ code: 'export function handler() {\n  return 1 +;\n}\n' }, js));
      expect(moduleSyntax.retryable).toBe(false);
      expect(moduleSyntax.message).toMatch(/^SyntaxError: Unexpected token ';'/);
    });

    it('reports running out of the memory limit', async () => {
      const err = await failure(
        code.execute({ code: 'function handler() {\n  const a = [];\n  for (;;) a.push({ i: a.length, s: "x".repeat(64) + a.length });\n}\n', memory_mb: 64, timeout_seconds: 20 }, js),
      );
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/out of memory: limit 64 MB/);
    });
  });

  describe('containment', () => {
    const asRoot = process.getuid?.() === 0;
    // Only root can switch users: run the suite as root to cover it (a non-root worker shares its uid).
    const rootOnly = asRoot ? it : it.skip;
    if (!asRoot) console.warn('CodeExecutor containment: not running as root, skipping the per-execution uid tests (only root can switch users)');

    rootOnly('runs the code as a pool uid, which cannot read the worker environment through /proc/<ppid>/environ', async () => {
      // A block of 1024 uids claimed for this process from DEFAULT_UID_BASE up.
      const base = code.uidRange!.base;
      expect(code.uidRange!.size).toBe(1024);
      expect((base - DEFAULT_UID_BASE) % 1024).toBe(0);
      const out = await code.execute(
        {
          code:
            'const fs = require("fs");\n' +
            'function handler() {\n' +
            '  let environ;\n' +
            '  try { environ = fs.readFileSync(`/proc/${process.ppid}/environ`, "utf8"); } catch (e) { environ = "denied: " + e.code; }\n' +
            '  return { uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(), environ };\n' +
            '}\n',
        },
        js,
      );
      const { uid, gid, groups, environ } = out as { uid: number; gid: number; groups: number[]; environ: string };
      expect(uid).toBeGreaterThanOrEqual(base);
      expect(uid).toBeLessThan(base + 1024);
      expect({ gid, groups, environ }).toEqual({ gid: uid, groups: [uid], environ: 'denied: EACCES' });
      const py_ = await code.execute(
        {
          code:
            'import os\n' +
            'def handler(input):\n' +
            '    try:\n' +
            '        return open("/proc/%d/environ" % os.getppid(), "rb").read().decode("latin-1")\n' +
            '    except OSError as e:\n' +
            '        return "denied: " + type(e).__name__\n',
        },
        py,
      );
      expect(py_).toBe('denied: PermissionError');
    });

    rootOnly('runs the code without network: the database and Redis on loopback are unreachable', async () => {
      expect(code.unshare).toBeDefined();
      const probe = (port: number) =>
        code.execute(
          {
            code:
              'import socket\n' +
              'def handler(input):\n' +
              '    try:\n' +
              '        socket.create_connection(("127.0.0.1", input["port"]), 2).close()\n' +
              '        return "connected"\n' +
              '    except OSError as e:\n' +
              '        return "refused: " + type(e).__name__\n',
            port,
          },
          py,
        );
      expect(await probe(5432)).toMatch(/^refused: /);
      expect(await probe(6379)).toMatch(/^refused: /);
      // Nor the local services' Unix sockets: /run (and /var/run) is empty inside.
      const sockets = await code.execute(
        {
          code:
            'import os, socket\n' +
            'def handler(input):\n' +
            '    s = socket.socket(socket.AF_UNIX)\n' +
            '    try:\n' +
            '        s.connect("/var/run/postgresql/.s.PGSQL.5432")\n' +
            '        reached = "connected"\n' +
            '    except OSError as e:\n' +
            '        reached = "refused: " + type(e).__name__\n' +
            '    return {"run": sorted(os.listdir("/run")), "postgres": reached}\n',
        },
        py,
      );
      expect(sockets).toEqual({ run: [], postgres: 'refused: FileNotFoundError' });
      // The worker itself reaches the database: the isolation is the code's, not the machine's.
      await new Promise<void>((resolve, reject) => {
        const s = connect(5432, '127.0.0.1', () => {
          s.end();
          resolve();
        });
        s.on('error', reject);
      });
    });

    rootOnly('gives two executors (two worker processes) disjoint uids, so one ending never kills the other\'s code', async () => {
      const other = new CodeExecutor({ tempDir });
      const [a, b] = [code.uidRange!, other.uidRange!];
      expect(a.base + a.size <= b.base || b.base + b.size <= a.base).toBe(true);
      const slow = code.execute({ code: 'function handler() { const t = Date.now(); while (Date.now() - t < 1500) {} return "slow done"; }' }, js);
      await new Promise((r) => setTimeout(r, 300));
      expect(await other.execute({ code: 'function handler() { return "quick"; }' }, js)).toBe('quick');
      expect(await slow).toBe('slow done');
    });

    it('ends the attempt at the deadline even when a process outside the group holds the pipes, and kills it', async () => {
      // A new session (setsid) leaves the process group; the inherited stdout keeps the pipe open.
      for (const mode of ['return', 'loop'] as const) {
        const pidfile = join(tempDir, `escapee-${mode}.pid`);
        const started = Date.now();
        const run = code.execute(
          {
            code:
              'import subprocess\n' +
              'def handler(input):\n' +
              '    p = subprocess.Popen(["sleep", "30"], start_new_session=True)\n' +
              '    with open(input["pidfile"], "w") as f:\n' +
              '        f.write(str(p.pid))\n' +
              (mode === 'loop' ? '    while True:\n        pass\n' : '    return "started"\n'),
            pidfile,
            timeout_seconds: mode === 'loop' ? 2 : 10,
          },
          py,
        );
        if (mode === 'loop') expect((await failure(run)).message).toBe('timed out after 2s');
        else expect(await run).toBe('started');
        expect(Date.now() - started).toBeLessThan(mode === 'loop' ? 4000 : 3000);
        const pid = Number(await readFile(pidfile, 'utf8'));
        await rm(pidfile);
        await new Promise((r) => setTimeout(r, 100));
        expect(isAlive(pid)).toBe(false);
      }
    });

    it('kills a daemon that left the session and the directory, or scrubbed its environment', async () => {
      // Classic daemon: new session + chdir("/") (caught by the inherited WEFT_EXECUTION_ID);
      // empty environment but the same directory (caught by the working directory).
      const pidfile = join(tempDir, 'daemons.pid');
      const out = await code.execute(
        {
          code:
            'import os, subprocess\n' +
            'def handler(input):\n' +
            '    a = subprocess.Popen(["sleep", "30"], start_new_session=True, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n' +
            '    b = subprocess.Popen(["/bin/sleep", "30"], start_new_session=True, env={}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n' +
            '    with open(input["pidfile"], "w") as f:\n' +
            '        f.write("%d %d" % (a.pid, b.pid))\n' +
            '    return "ok"\n',
          pidfile,
        },
        py,
      );
      expect(out).toBe('ok');
      const pids = (await readFile(pidfile, 'utf8')).split(' ').map(Number);
      await rm(pidfile);
      await new Promise((r) => setTimeout(r, 100));
      expect(pids.map(isAlive)).toEqual([false, false]);
    });

    rootOnly('kills a double-forked daemon that left the session, went to / and emptied its environment', async () => {
      const pidfile = join(tempDir, 'escaped.pid');
      const out = await code.execute(
        {
          code:
            'import os\n' +
            'def handler(input):\n' +
            '    r, w = os.pipe()\n' +
            '    if os.fork() == 0:\n' +
            '        os.setsid()\n' +
            '        if os.fork() == 0:\n' +
            '            os.chdir("/")\n' +
            '            os.close(r)\n' +
            '            os.write(w, str(os.getpid()).encode())\n' +
            '            os.close(w)\n' +
            '            devnull = os.open("/dev/null", os.O_RDWR)\n' +
            '            for fd in (0, 1, 2):\n' +
            '                os.dup2(devnull, fd)\n' +
            '            os.execve("/bin/sleep", ["sleep", "30"], {})\n' +
            '        os._exit(0)\n' +
            '    os.close(w)\n' +
            '    pid = int(os.read(r, 32))\n' +
            '    with open(input["pidfile"], "w") as f:\n' +
            '        f.write(str(pid))\n' +
            '    return "ok"\n',
          pidfile,
        },
        py,
      );
      expect(out).toBe('ok');
      const pid = Number(await readFile(pidfile, 'utf8'));
      await rm(pidfile);
      expect(pid).toBeGreaterThan(0);
      expect(isAlive(pid)).toBe(false);
    });

    rootOnly('gives concurrent executions different uids', async () => {
      const whoami = { code: 'async function handler() {\n  await new Promise((r) => setTimeout(r, 300));\n  return process.getuid();\n}\n' };
      const uids = (await Promise.all([code.execute(whoami, js), code.execute(whoami, js)])) as number[];
      expect(uids[0]).not.toBe(uids[1]);
      for (const uid of uids) expect(uid).toBeGreaterThanOrEqual(DEFAULT_UID_BASE);
    });

    rootOnly("keeps an execution out of another's temp dir", async () => {
      const dirfile = join(tempDir, 'first.dir');
      const first = code.execute(
        {
          code:
            'const fs = require("fs");\n' +
            'async function handler(input) {\n' +
            '  fs.writeFileSync(input.dirfile + ".tmp", process.cwd());\n' +
            '  fs.renameSync(input.dirfile + ".tmp", input.dirfile);\n' +
            '  await new Promise((r) => setTimeout(r, 1000));\n' +
            '  return "first";\n' +
            '}\n',
          dirfile,
        },
        js,
      );
      let dir = '';
      for (let i = 0; i < 100 && !dir; i++) {
        dir = await readFile(dirfile, 'utf8').catch(() => '');
        if (!dir) await new Promise((r) => setTimeout(r, 20));
      }
      expect(dir.startsWith(join(tempDir, 'weft-code-'))).toBe(true);
      const second = await code.execute(
        {
          code:
            'const fs = require("fs");\n' +
            'const path = require("path");\n' +
            'function attempt(f) {\n  try { f(); return "allowed"; } catch (e) { return e.code; }\n}\n' +
            'function handler(input) {\n' +
            '  return {\n' +
            '    list: attempt(() => fs.readdirSync(input.dir)),\n' +
            '    read: attempt(() => fs.readFileSync(path.join(input.dir, "input.json"))),\n' +
            '    write: attempt(() => fs.writeFileSync(path.join(input.dir, "handler.js"), "forged")),\n' +
            '  };\n' +
            '}\n',
          dir,
        },
        js,
      );
      expect(second).toEqual({ list: 'EACCES', read: 'EACCES', write: 'EACCES' });
      expect(await first).toBe('first');
      await rm(dirfile);
    });

    const hasPrlimit = (() => {
      try {
        execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    if (!hasPrlimit) console.warn('CodeExecutor containment: no prlimit on PATH, Node Buffers are not limited; skipping that test');
    (hasPrlimit ? it : it.skip)('limits Node Buffers, not only the V8 heap (RLIMIT_DATA through prlimit)', async () => {
      const err = await failure(
        code.execute({ code: 'function handler() {\n  return Buffer.alloc(1024 * 1024 * 1024, 1).length;\n}\n', memory_mb: 64 }, js),
      );
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/Array buffer allocation failed.*\(memory limit 64 MB\)$/);
      // Within the limit, Buffers work.
      expect(await code.execute({ code: 'function handler() {\n  return Buffer.alloc(32 * 1024 * 1024, 1).length;\n}\n', memory_mb: 64 }, js)).toBe(32 * 1024 * 1024);
    });
  });

  it('rejects specs that can never work as non-retryable', async () => {
    const cases: Array<[unknown, { runtime?: string }, RegExp]> = [
      [{ code: 'def handler(i): return 1' }, { runtime: 'ruby' }, /^unsupported runtime "ruby"/],
      [{ code: 'def handler(i): return 1' }, {}, /needs a runtime/],
      [{}, { runtime: 'python' }, /^invalid CODE spec: spec.code is required/],
      [{ code: 'x', timeout_seconds: -1 }, { runtime: 'python' }, /timeout_seconds must be a positive number/],
    ];
    for (const [input, extra, message] of cases) {
      const err = await failure(code.execute(input, { taskId: 't', nodeId: 'n', attempt: 1, ...extra }));
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(message);
    }
  });
});

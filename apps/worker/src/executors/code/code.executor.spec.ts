import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeExecutor } from './code.executor.js';
import { processesOf } from './processes.js';
import { failure } from '../execution-failure.testing.js';

const py = { taskId: 't001', nodeId: 'score', attempt: 1, runtime: 'python' };
const js = { taskId: 't002', nodeId: 'score', attempt: 1, runtime: 'js' };

/** The sandbox's uid pool and cgroups need root; CI runs as root. */
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('CodeExecutor: not running as root, skipping (a worker that is not root refuses CODE)');

(asRoot ? describe : describe.skip)('CodeExecutor', () => {
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
      const err = await failure(code.execute({ code: 'def handler(input):\n    x = 1\n    raise ValueError("bad order " + str(x))\n' }, py));
      expect(err.retryable).toBe(true);
      expect(err.message).toBe('ValueError: bad order 1 (handler.py, line 3, in handler: raise ValueError("bad order " + str(x)))');
    });

    it('fails for good when the code raises NonRetryableError, saying it was not retried', async () => {
      const err = await failure(code.execute({ code: 'def handler(input):\n    raise NonRetryableError("card declined")\n' }, py));
      expect([err.retryable, err.kind]).toEqual([false, 'code_exception']);
      expect(err.message).toMatch(/^NonRetryableError: card declined \(handler\.py, line 2, .*\) \(non-retryable error, not retried\)$/);
    });

    it('does not leak the worker environment', async () => {
      // The real interpreter: a version-manager shim (pyenv) would add variables of its own.
      // Asked as the user the code runs as (as root: a pool uid, which may not reach a root-only pyenv).
      const out = (await code.execute(
        { code: 'import os\ndef handler(input):\n    return {"secret": os.environ.get("WEFT_SECRET"), "keys": sorted(os.environ)}\n' },
        py,
      )) as { secret: unknown; keys: string[] };
      expect(out.secret).toBeNull();
      expect(
        out.keys.filter((k) => !['PATH', 'HOME', 'LANG', 'PWD', 'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING', 'PYTHONUNBUFFERED', 'LC_CTYPE'].includes(k)),
      ).toEqual([]);
    });

    it('runs in a fresh, empty working directory, and leaves no folder behind', async () => {
      const first = await code.execute(
        { code: 'import os\ndef handler(input):\n    open("scratch", "w").write("x")\n    return [os.getcwd(), os.listdir(".")]\n' },
        py,
      );
      const second = await code.execute({ code: 'import os\ndef handler(input):\n    return [os.getcwd(), os.listdir(".")]\n' }, py);
      expect(first).toEqual(['/weft/work', ['scratch']]);
      expect(second).toEqual(['/weft/work', []]);
      const [block] = await readdir(tempDir);
      // Only the worker's own seccomp filter stays there, no execution folder.
      expect(await readdir(join(tempDir, block))).toEqual(['seccomp.bpf']);
    });

    it('kills the process on timeout', async () => {
      // The loop never ends: the execution settles only because the timeout killed it.
      const err = await failure(code.execute({ code: 'def handler(input):\n    while True:\n        pass\n', timeout_seconds: 1 }, py));
      expect(err.retryable).toBe(true);
      expect(err.message).toBe('timed out after 1s');
    });

    it('kills processes the code leaves behind, on return and on timeout', async () => {
      const spawner = (loop: boolean): string =>
        'import subprocess\n' +
        'def handler(input):\n' +
        '    subprocess.Popen(["sleep", "600"], start_new_session=True)\n' +
        (loop ? '    while True:\n        pass\n' : '    return "started"\n');
      for (const loop of [false, true]) {
        // The returning case does not wait for the sleep: waiting for it would outlast the test's timeout.
        const run = code.execute({ code: spawner(loop), timeout_seconds: loop ? 2 : 10 }, py);
        if (loop) expect((await failure(run)).message).toBe('timed out after 2s');
        else expect(await run).toBe('started');
        expect(await processesOf({ first: code.uidRange!.base, count: code.uidRange!.size })).toEqual([]);
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
      const err = await failure(code.execute({ code: 'def handler(input):\n    return len(bytearray(400 * 1024 * 1024))\n', memory_mb: 100 }, py));
      expect(err.message).toMatch(/^MemoryError.*\(memory limit 100 MB\)$/);
    });
  });

  describe('javascript', () => {
    it('returns the object a plain handler returns', async () => {
      const out = await code.execute(
        {
          code: 'function handler(input) {\n  return { total: input.price * input.qty, keys: Object.keys(input).sort() };\n}\n',
          price: 2.5,
          qty: 4,
          timeout_seconds: 5,
        },
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
        {
          code: "import { createHash } from 'node:crypto';\nexport async function handler(input) {\n  return createHash('sha256').update(input.s).digest('hex').slice(0, 8);\n}\n",
          s: 'abc',
        },
        { ...js, runtime: 'javascript' },
      );
      expect(out).toBe('ba7816bf');
    });

    it('keeps console.log output out of the result', async () => {
      const out = await code.execute(
        {
          code: 'function handler() {\n  console.log("noise", { a: 1 });\n  console.error("err");\n  process.stdout.write("{\\"ok\\":false}\\n");\n  return "fine";\n}\n',
        },
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

    it('fails for good when the code throws NonRetryableError, saying it was not retried', async () => {
      const err = await failure(code.execute({ code: 'function handler() {\n  throw new NonRetryableError("card declined");\n}\n' }, js));
      expect([err.retryable, err.message]).toEqual([false, 'NonRetryableError: card declined (handler.js:2:9) (non-retryable error, not retried)']);
    });

    it('does not leak the worker environment', async () => {
      const out = await code.execute(
        { code: 'function handler() {\n  return { secret: process.env.WEFT_SECRET ?? null, keys: Object.keys(process.env) };\n}\n' },
        js,
      );
      expect(out).toEqual({ secret: null, keys: ['PATH', 'HOME', 'LANG', 'PWD'] });
    });

    it('kills the process on timeout', async () => {
      // The loop never ends: the execution settles only because the timeout killed it.
      const err = await failure(code.execute({ code: 'function handler() {\n  for (;;) {}\n}\n', timeout_seconds: 1 }, js));
      expect(err.retryable).toBe(true);
      expect(err.message).toBe('timed out after 1s');
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
      const deep = await failure(
        code.execute({ code: 'function handler() {\n  let v = [];\n  for (let i = 0; i < 100000; i++) v = [v];\n  return v;\n}\n' }, js),
      );
      expect(deep.message).toBe('handler returned a value that is not JSON-serializable: nested too deeply (Maximum call stack size exceeded)');
      const circular = await failure(code.execute({ code: 'function handler() {\n  const o = {};\n  o.self = o;\n  return o;\n}\n' }, js));
      expect(circular.message).toMatch(/^handler returned a value that is not JSON-serializable: Converting circular structure to JSON/);
      // undefined stays null (a handler that returns nothing), inside objects it is left out, as JSON.stringify does.
      expect(await code.execute({ code: 'function handler() {\n  return { a: undefined, b: [undefined], n: 1.5e300 };\n}\n' }, js)).toEqual({
        b: [null],
        n: 1.5e300,
      });
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
        code.execute(
          {
            code: 'function handler() {\n  const a = [];\n  for (;;) a.push({ i: a.length, s: "x".repeat(64) + a.length });\n}\n',
            memory_mb: 64,
            timeout_seconds: 20,
          },
          js,
        ),
      );
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/out of memory: limit 64 MB/);
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

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The runners on their own, without the executor or a sandbox: handler in, envelope out. */
const here = fileURLToPath(new URL('.', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-runner-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(language: 'python' | 'js', code: string, input: unknown = {}): Promise<unknown> {
  const handler = join(dir, language === 'python' ? 'handler.py' : 'handler.js');
  const result = join(dir, 'result.json');
  await writeFile(handler, code);
  await writeFile(join(dir, 'input.json'), JSON.stringify(input));
  await rm(result, { force: true });
  const [command, args] =
    language === 'python'
      ? ['python3', [join(here, 'runner.py'), handler, join(dir, 'input.json'), result, '256', '30']]
      : [process.execPath, [join(here, 'runner.cjs'), handler, join(dir, 'input.json'), result, '30000']];
  const child = spawnSync(command, args, { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH } });
  expect(child.status).toBe(0);
  return JSON.parse(await readFile(result, 'utf8'));
}

describe('runner.py', () => {
  it('compiles', () => {
    execFileSync('python3', ['-m', 'py_compile', join(here, 'runner.py')], {
      env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1', PYTHONPYCACHEPREFIX: dir },
    });
  });

  it('writes the result, awaiting a coroutine, and keeps prints out of it', async () => {
    expect(await run('python', 'def handler(input):\n    print("noise")\n    return input["n"] + 1\n', { n: 1 })).toEqual({ ok: true, result: 2 });
    expect(await run('python', 'async def handler(input):\n    return [1]\n')).toEqual({ ok: true, result: [1] });
  });

  it('names the kind of failure: no handler, syntax, exception with its line, not JSON', async () => {
    expect(await run('python', 'x = 1\n')).toEqual({ ok: false, kind: 'no_handler', message: 'code must define handler(input)' });
    expect(await run('python', 'def handler(input)\n')).toMatchObject({
      ok: false,
      kind: 'syntax',
      message: expect.stringMatching(/\(handler\.py, line 1\)$/),
    });
    expect(await run('python', 'def handler(input):\n    raise ValueError("bad")\n')).toEqual({
      ok: false,
      kind: 'exception',
      message: 'ValueError: bad (handler.py, line 2, in handler: raise ValueError("bad"))',
    });
    expect(await run('python', 'def handler(input):\n    return float("nan")\n')).toMatchObject({ ok: false, kind: 'not_json' });
  });

  it('marks a NonRetryableError not retryable: the one given, one of its own, a flagged one; others stay retryable', async () => {
    expect(await run('python', 'def handler(input):\n    raise NonRetryableError("card declined")\n')).toEqual({
      ok: false,
      kind: 'exception',
      message: 'NonRetryableError: card declined (handler.py, line 2, in handler: raise NonRetryableError("card declined"))',
      retryable: false,
    });
    const own = 'class NonRetryableError(Exception):\n    pass\nclass Declined(NonRetryableError):\n    pass\ndef handler(input):\n    raise Declined("no")\n';
    expect(await run('python', own)).toMatchObject({ ok: false, retryable: false });
    const flagged = 'class Gone(Exception):\n    non_retryable = True\nasync def handler(input):\n    raise Gone("gone")\n';
    expect(await run('python', flagged)).toMatchObject({ ok: false, retryable: false });
    expect(await run('python', 'def handler(input):\n    raise ValueError("again")\n')).not.toHaveProperty('retryable');
  });
});

describe('runner.cjs', () => {
  it('runs a classic script and an ES module, writing handler.mjs in the working directory', async () => {
    expect(await run('js', 'function handler(input) { console.log("noise"); return input.n * 2; }', { n: 2 })).toEqual({ ok: true, result: 4 });
    expect(await run('js', 'export const handler = async () => ({ esm: true });')).toEqual({ ok: true, result: { esm: true } });
    expect(await readFile(join(dir, 'handler.mjs'), 'utf8')).toContain('esm: true');
  });

  it('names the kind of failure, and where NaN is', async () => {
    expect(await run('js', 'const x = 1;')).toEqual({ ok: false, kind: 'no_handler', message: 'code must define handler(input)' });
    expect(await run('js', 'function handler() {\n  throw new TypeError("bad");\n}\n')).toEqual({
      ok: false,
      kind: 'exception',
      message: 'TypeError: bad (handler.js:2:9)',
    });
    expect(await run('js', 'function handler() { return { a: [1, NaN] }; }')).toEqual({
      ok: false,
      kind: 'not_json',
      message: 'handler returned a value that is not JSON-serializable: NaN at $.a[1] is not a JSON number',
    });
  });

  it('marks a NonRetryableError not retryable, in a script and an ES module, and an error flagged nonRetryable', async () => {
    expect(await run('js', 'function handler() {\n  throw new NonRetryableError("card declined");\n}\n')).toEqual({
      ok: false,
      kind: 'exception',
      message: 'NonRetryableError: card declined (handler.js:2:9)',
      retryable: false,
    });
    expect(await run('js', 'export async function handler() { throw new NonRetryableError("esm"); }')).toMatchObject({ retryable: false });
    expect(await run('js', 'async function handler() { throw Object.assign(new Error("gone"), { nonRetryable: true }); }')).toMatchObject({
      message: 'Error: gone (handler.js:1:48)',
      retryable: false,
    });
    expect(await run('js', 'function handler() { throw new Error("again"); }')).not.toHaveProperty('retryable');
  });
});

describe('the watchdog', () => {
  it('does not fire at once for a deadline beyond one Node timer (24.8 days)', async () => {
    // 40 days: a plain setTimeout would overflow to 1 ms and kill the runner before it answers.
    const handler = join(dir, 'handler.js');
    await writeFile(handler, 'async function handler() { await new Promise((r) => setTimeout(r, 300)); return "alive"; }');
    await writeFile(join(dir, 'input.json'), '{}');
    await rm(join(dir, 'result.json'), { force: true });
    const child = spawnSync(process.execPath, [join(here, 'runner.cjs'), handler, join(dir, 'input.json'), join(dir, 'result.json'), String(40 * 86_400_000)], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(child.signal).toBeNull();
    expect(JSON.parse(await readFile(join(dir, 'result.json'), 'utf8'))).toEqual({ ok: true, result: 'alive' });
  });
});

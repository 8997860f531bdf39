import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttemptLog } from '../attempt-log.js';
import { CodeExecutor } from './code.executor.js';
import { LogTail } from './child.js';
import { failure } from '../execution-failure.testing.js';

/** 65,536 lines of 16 bytes: 1 MiB of stdout, of which the last 64 KiB (4,096 lines) are kept. */
const PY_MIB = 'import sys\ndef handler(input):\n    for i in range(65536):\n        sys.stdout.write("line %010d\\n" % i)\n    return {"ok": 1}\n';
const JS_MIB = 'exports.handler = () => {\n  for (let i = 0; i < 65536; i++) console.log(`line ${String(i).padStart(10, "0")}`);\n  return { ok: 1 };\n};\n';

const asRoot = process.getuid?.() === 0;

(asRoot ? describe : describe.skip)('CODE output kept as the attempt logs', () => {
  let tempDir: string;
  let code: CodeExecutor;

  beforeAll(async () => {
    tempDir = await mkdtemp(join(tmpdir(), 'weft-code-logs-'));
    await chmod(tempDir, 0o1777);
    code = new CodeExecutor({ tempDir });
  });

  afterAll(async () => {
    await rm(tempDir, { recursive: true, force: true });
  });

  for (const [runtime, source] of [
    ['python', PY_MIB],
    ['js', JS_MIB],
  ] as const) {
    it(`keeps the last 64 KiB of 1 MiB printed in ${runtime}, after a marker, and the result whole`, async () => {
      const log = new AttemptLog();
      const out = await code.execute({ code: source }, { taskId: 't001', nodeId: 'noisy', attempt: 0, runtime, log });
      expect(out).toEqual({ ok: 1 });
      const text = log.render();
      const [marker, ...lines] = text.split('\n');
      expect(marker).toBe('… 983,040 bytes cut …');
      expect(Buffer.byteLength(text) - Buffer.byteLength(`${marker}\n`)).toBe(64 * 1024);
      expect(lines[0]).toBe('line 0000061440');
      expect(lines.at(-2)).toBe('line 0000065535');
      expect(text).not.toContain('line 0000061439');
    });
  }

  it('keeps stdout and stderr together, in order, when the code fails', async () => {
    const log = new AttemptLog();
    const err = await failure(
      code.execute(
        {
          code: 'import sys\ndef handler(input):\n    print("first", flush=True)\n    print("second", file=sys.stderr, flush=True)\n    raise ValueError("nope")\n',
        },
        { taskId: 't002', nodeId: 'bad', attempt: 0, runtime: 'python', log },
      ),
    );
    expect(err.message).toContain('nope');
    expect(log.render()).toBe('first\nsecond\n');
  });

  it('keeps what code printed before it timed out', async () => {
    for (const [runtime, source] of [
      ['python', 'import time\ndef handler(input):\n    print("before the wait")\n    time.sleep(30)\n'],
      ['js', 'exports.handler = async () => { console.log("before the wait"); await new Promise((r) => setTimeout(r, 30000)); };\n'],
    ] as const) {
      const log = new AttemptLog();
      const err = await failure(code.execute({ code: source, timeout_seconds: 1 }, { taskId: 't004', nodeId: 'slow', attempt: 0, runtime, log }));
      expect({ runtime, kind: err.kind, logs: log.render() }).toEqual({ runtime, kind: 'timeout', logs: 'before the wait\n' });
    }
  });

  it('records nothing for code that prints nothing', async () => {
    const log = new AttemptLog();
    await code.execute({ code: 'def handler(input):\n    return 1\n' }, { taskId: 't003', nodeId: 'quiet', attempt: 0, runtime: 'python', log });
    expect(log.empty).toBe(true);
  });
});

describe('LogTail', () => {
  it('holds at most twice its limit however much is pushed, and counts what it dropped', () => {
    const tail = new LogTail(1024);
    const chunk = Buffer.alloc(100, 'a');
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      tail.push(chunk);
      most = Math.max(most, (tail as unknown as { size: number }).size);
    }
    expect(most).toBeLessThanOrEqual(2 * 1024 + 100);
    tail.push(Buffer.from('END'));
    const kept = tail.kept();
    expect(kept.text).toHaveLength(1024);
    expect(kept.text.endsWith('aaEND')).toBe(true);
    expect(kept.cutBytes).toBe(1_000_003 - 1024);
  });

  it('starts the kept text at a character, counting the bytes of one split at the cut as cut', () => {
    const tail = new LogTail(3);
    // "é" is two bytes: the last 3 bytes of "aéé" begin inside the first é.
    tail.push(Buffer.from('aéé'));
    expect(tail.kept()).toEqual({ text: 'é', cutBytes: 3 });
  });

  it('starts the kept text at a line when the cut fell inside one, and keeps a tail that begins one', () => {
    const mid = new LogTail(10);
    mid.push(Buffer.from('first\nsecond\nthird\n'));
    // The last 10 bytes are "ond\nthird\n": the rest of "second" goes with what was cut.
    expect(mid.kept()).toEqual({ text: 'third\n', cutBytes: 13 });

    const aligned = new LogTail(6);
    aligned.push(Buffer.from('12345\n'));
    aligned.push(Buffer.from('abcde\n'));
    aligned.push(Buffer.from('vwxyz\n'));
    // Trimmed on push (over twice the limit): the byte before the tail, a newline, was dropped.
    expect(aligned.kept()).toEqual({ text: 'vwxyz\n', cutBytes: 12 });

    const trimmed = new LogTail(6);
    for (const chunk of ['aaaa\nbb', 'bbbbbb', 'bbbbbb', 'b\nccc\n']) trimmed.push(Buffer.from(chunk));
    // 25 bytes; the tail "b\nccc\n" after a trim that dropped a "b": its "b" ends a line cut in its middle.
    expect(trimmed.kept()).toEqual({ text: 'ccc\n', cutBytes: 21 });
  });
});

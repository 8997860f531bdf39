import { describe, expect, it } from '@jest/globals';
import { LOG_LINE_CHARS, WeftLogger } from '../weft-logger.js';
import { BoundedLabel, OTHER_LABEL } from './bounded-label.js';

function capture(): { logger: WeftLogger; lines: string[] } {
  const lines: string[] = [];
  return { lines, logger: new WeftLogger('info', { write: (l: string) => void lines.push(l) }) };
}

describe('structured log records', () => {
  it('puts a record’s fields into the line beside its message and context', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'run started: orders v3', event: 'run.started', tenantId: 't-1', runId: 'r-1', version: 3, child: false }, 'runs');
    const r = JSON.parse(lines[0]!);
    expect(r).toMatchObject({
      level: 'info',
      context: 'runs',
      msg: 'run started: orders v3',
      event: 'run.started',
      tenantId: 't-1',
      runId: 'r-1',
      version: 3,
      child: false,
    });
  });

  it('never lets a field replace the logger’s own, and bounds long values and arrays', () => {
    const { logger, lines } = capture();
    logger.warn(
      { msg: 'hello', level: 'fatal', time: 'yesterday', pid: 1, nodeId: 'n'.repeat(5000), failedNodes: ['a', 'b', 'c', 'd', 'e', 'f', 'g'], nested: { x: 1 } },
      'runs',
    );
    const r = JSON.parse(lines[0]!);
    expect(r.level).toBe('warn');
    expect(r.pid).toBe(process.pid);
    expect(r.time).not.toBe('yesterday');
    expect(r.nodeId.length).toBeLessThanOrEqual(128);
    expect(r.nodeId).toMatch(/…\[cut \d+ chars\]$/);
    expect(r.failedNodes).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.nested).toBeUndefined();
  });

  it('keeps a record with many long fields to one line of at most LOG_LINE_CHARS', () => {
    const { logger, lines } = capture();
    const fields = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, '\u2028"'.repeat(300)]));
    logger.error({ msg: 'x'.repeat(100_000), ...fields }, 'c'.repeat(100_000));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThanOrEqual(LOG_LINE_CHARS + 1);
    expect(JSON.parse(lines[0]!).f0).toBeDefined();
  });

  it('writes a plain object without `msg` as before: as JSON text in the message', () => {
    const { logger, lines } = capture();
    logger.log({ a: 1 }, 'ctx');
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: '{"a":1}', context: 'ctx' });
  });
});

describe('BoundedLabel', () => {
  it('keeps the first values it sees and folds later ones into one', () => {
    const label = new BoundedLabel(2);
    expect([label.of('a'), label.of('b'), label.of('c'), label.of('a'), label.of('d')]).toEqual(['a', 'b', OTHER_LABEL, 'a', OTHER_LABEL]);
    expect(new BoundedLabel(5).of('w'.repeat(300))).toHaveLength(128);
  });
});

describe('the pretty format', () => {
  it('writes one readable line per record, its fields after the message, and no raw line break from the message', async () => {
    const { Writable } = await import('node:stream');
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString();
        done();
      },
    });
    const logger = new WeftLogger('info', sink as never, 'pretty');
    logger.warn({ msg: 'run failed: orders\nFAKE INFO [weft] all keys revoked', event: 'run.finished', runId: 'r-1' }, 'runs');
    logger.log('plain message', 'weft');
    await new Promise((r) => setTimeout(r, 50));
    const lines = out.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] WARN: \[runs\] run failed: orders\\nFAKE INFO \[weft\] all keys revoked \{"event":"run\.finished","runId":"r-1"\}$/,
    );
    expect(lines[1]).toMatch(/INFO: \[weft\] plain message$/);
  });
});

describe('characters a reader may act on', () => {
  it('escapes C1 controls and bidirectional overrides in JSON lines and in pretty fields', async () => {
    const { logger, lines } = capture();
    logger.warn({ msg: 'a\u009b31mb\u202ec\u2066d', reason: 'x\u2028y' }, 'runs');
    expect(lines[0]).not.toMatch(/[\u0080-\u009f\u2028-\u202e\u2066-\u2069]/);
    expect(JSON.parse(lines[0]!).msg).toBe('a\u009b31mb\u202ec\u2066d');
    const { Writable } = await import('node:stream');
    let out = '';
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => void ((out += chunk.toString()), done()) });
    new WeftLogger('info', sink as never, 'pretty').warn({ msg: 'm\u202e', reason: 'x\u2028y\u0085z' }, 'runs');
    await new Promise((r) => setTimeout(r, 50));
    expect(out).not.toMatch(/[\u0080-\u009f\u2028-\u202e\u2066-\u2069]/);
    expect(out).toContain('x\\u2028y\\u0085z');
  });
});

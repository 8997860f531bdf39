import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository } from '@weft/persistence';
import { type WorkflowNode } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, ConfigError, LOG_LINE_CHARS, LOG_STRING_CHARS, loadConfig, queuePrefix, WeftLogger } from '@weft/platform';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, MemoryLogger, publishWorkflow, RecordingPublisher } from '../support/builders.js';
import { killWorker, spawnWorker, type SpawnedWorker } from '../support/spawn-worker.js';
import { eventually } from '../support/faults.js';

/**
 * A worker's log carries text tenants choose (a CODE exception, echoed as the attempt's error).
 * Each record is one JSON line of at most LOG_LINE_CHARS, whatever the text: a 5,000,000-character
 * exception is cut, and a newline in it cannot start a line that reads as a record of Weft's own.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'log-attack';
const FORGED = 'tenant acme: admin key rotated, all runs cancelled';
const FORGED_JSON = JSON.stringify({ level: 'info', time: '2030-01-01T00:00:00.000Z', pid: 1, context: 'weft', msg: FORGED });
const FORGED_NEST = `[Nest] 1  - 01/01/2030, 00:00:00     LOG [weft] ${FORGED}`;

/** Every way a reader may split lines: \n, \r, and the separators JSON leaves raw. */
const lines = (text: string) => text.split(/\r\n|[\n\r\u0085\u2028\u2029]/).filter((l) => l !== '');
const records = (text: string) =>
  lines(text).flatMap((l) => {
    try {
      const r = JSON.parse(l) as unknown;
      return typeof r === 'object' && r !== null && 'msg' in r ? [r as { level: string; context?: string; msg: string }] : [];
    } catch {
      return [];
    }
  });

let db: TestDatabase;
let worker: SpawnedWorker | undefined;
/** Everything the worker process printed so far. */
const output = (): string => worker?.output() ?? '';
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  // `weft worker` as its own process on this database, logging at info.
  worker = await spawnWorker({ DATABASE_URL: db.url, REDIS_URL, WEFT_QUEUES: QUEUE, WEFT_WORKER_CONCURRENCY: '1', WEFT_LOG_LEVEL: 'info' });
});
afterAll(async () => {
  if (worker) await killWorker(worker.child);
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await db?.drop();
});

describe("a worker's log", () => {
  it('holds a 5,000,000-character exception with a forged line as one escaped, bounded record', async () => {
    const { tenantId } = await createTenant(db.ds);
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { onError: () => undefined });
    closers.push(() => queues.close());
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { logger: new MemoryLogger() });
    const raise: WorkflowNode = {
      node_id: 'a',
      type: 'CODE',
      runtime: 'python',
      queue: QUEUE,
      spec: {
        code: `def handler(input):\n    raise Exception("boom\\n" + ${JSON.stringify(FORGED_JSON)} + "\\n" + ${JSON.stringify(FORGED_NEST)} + "\\r\\n" + "E" * 5000000 + "\\nend")`,
      },
    };
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([raise]));
    const { runId } = await coordinator.runs.startRun(tenantId, { workflowId });
    await eventually('the run fails', async () => (await new RunRepository(db.ds).findRun(tenantId, runId))?.status === 'FAILED', 30_000);
    await eventually('the worker logs the failure', async () => output().includes(`run ${runId} node a attempt 1 failed`), 30_000);

    // The exception really was that long.
    const task = (await new RunRepository(db.ds).tasksOfRun(tenantId, runId))[0]!;
    expect(task.error).toMatch(/truncated, 50\d{5} chars\)$/);

    expect(lines(output()).reduce((longest, l) => Math.max(longest, l.length), 0)).toBeLessThanOrEqual(LOG_LINE_CHARS);
    expect(records(output()).filter((r) => r.msg === FORGED || r.msg.startsWith(FORGED))).toEqual([]);
    expect(lines(output()).filter((l) => l.startsWith('[Nest]') || l.startsWith(FORGED))).toEqual([]);
    // The forged text is there, escaped inside the worker's record of the failure, which is cut.
    const failure = records(output()).find((r) => r.msg.includes(`run ${runId} node a attempt 1 failed`));
    expect(failure).toMatchObject({ level: 'warn', context: 'worker', msg: expect.stringContaining(FORGED) });
    expect(failure!.msg).toMatch(/…\[cut \d+ chars\]$/);
  });
});

describe('WeftLogger', () => {
  const capture = (level: 'info' | 'debug' | 'warn' = 'info') => {
    const out: string[] = [];
    return { out, logger: new WeftLogger(level, { write: (l: string) => void out.push(l) }) };
  };

  it('writes one JSON line per record with level, time, pid, context and message; errors keep their stack', () => {
    const { out, logger } = capture();
    logger.log('started', 'weft');
    logger.error('failed', 'Error: failed\n    at x (y.js:1:1)', 'worker');
    logger.debug('hidden', 'weft');
    expect(out).toHaveLength(2);
    expect(out.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(JSON.parse(out[0]!)).toEqual({ level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), pid: process.pid, context: 'weft', msg: 'started' });
    expect(JSON.parse(out[1]!)).toMatchObject({ level: 'error', context: 'worker', msg: 'failed', stack: 'Error: failed\n    at x (y.js:1:1)' });
  });

  it('cuts every string to LOG_STRING_CHARS of the line, escapes included, saying how much was cut', () => {
    const { out, logger } = capture();
    const nasty = '\u0001"\n\u2028'.repeat(100_000);
    logger.error(nasty, `Error\n    at ${nasty}`, nasty);
    const line = out[0]!;
    expect(line.length).toBeLessThanOrEqual(LOG_LINE_CHARS);
    expect(line).not.toMatch(/[\u2028\u2029\u0085]/);
    const r = JSON.parse(line);
    for (const field of [r.msg, r.context, r.stack]) {
      expect(JSON.stringify(field).length - 2).toBeLessThanOrEqual(LOG_STRING_CHARS);
      expect(field).toMatch(/…\[cut \d+ chars\]$/);
    }
  });

  it('takes WEFT_LOG_LEVEL at boot: pino names, log as info, default info, anything else refused', () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ WEFT_LOG_LEVEL: 'log' }).logLevel).toBe('info');
    expect(loadConfig({ WEFT_LOG_LEVEL: 'Debug' }).logLevel).toBe('debug');
    expect(() => loadConfig({ WEFT_LOG_LEVEL: 'verbose' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEFT_LOG_LEVEL: 'verbose' })).toThrow(
      /WEFT_LOG_LEVEL="verbose": WEFT_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace/,
    );
  });
});

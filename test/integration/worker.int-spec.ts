import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { RunRepository, type TaskEntity } from '@weft/persistence';
import { type JsonValue, type TaskJob, type WorkflowDefinition, type WorkflowNode } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import type { BullTaskQueues, WeftConfig } from '@weft/platform';
import { TaskProcessor } from '@weft/worker';
import type { CodeExecutor } from '../../apps/worker/src/executors/code/code.executor.js';
import { processesOf } from '../../apps/worker/src/executors/code/processes.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { eventually } from '../support/faults.js';

/**
 * The worker's TaskProcessor with the real executors, the real coordinator and PostgreSQL: what a
 * hostile CODE node can make a worker report, how refused reports end, and how a cancelled run's
 * in-flight work stops.
 */

let db: TestDatabase;
let slowServer: Server;
let slowUrl: string;
/** Requests the never-answering server received. */
let slowRequests = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  // Test-only triggers: a completion whose output has key `poison` is refused with a permanent,
  // non-data error (each refusal counted in poison_hits); one with key `flaky` fails with a
  // serialization failure (transient) 7 times.
  await db.owner.query(`
    CREATE SEQUENCE flaky_hits;
    GRANT USAGE ON SEQUENCE flaky_hits TO weft_app;
    CREATE SEQUENCE poison_hits;
    GRANT USAGE ON SEQUENCE poison_hits TO weft_app;
    CREATE FUNCTION refuse_some_outputs() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'COMPLETED' AND NEW.output ? 'poison' THEN
        PERFORM nextval('poison_hits');
        RAISE EXCEPTION 'poisoned output' USING ERRCODE = 'P0001';
      END IF;
      IF NEW.status = 'COMPLETED' AND NEW.output ? 'flaky' AND nextval('flaky_hits') <= 7 THEN
        RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_some_outputs BEFORE UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION refuse_some_outputs();
  `);
  slowServer = createServer(() => void slowRequests++); // never answers
  await new Promise<void>((r) => slowServer.listen(0, '127.0.0.1', r));
  slowUrl = `http://127.0.0.1:${(slowServer.address() as AddressInfo).port}/slow`;
});
afterAll(async () => {
  slowServer?.closeAllConnections();
  await new Promise((r) => slowServer?.close(r));
  await db?.drop();
});

const config = { queues: [], workerConcurrency: 1, httpAllowPrivate: true, httpAllowHosts: [] } as unknown as WeftConfig;

async function setup() {
  const { tenantId } = await createTenant(db.ds);
  const dispatcher = new RecordingDispatcher();
  const logger = new MemoryLogger();
  const coordinator = new RunCoordinator(db.ds, dispatcher, new RecordingPublisher(), { logger });
  const processor = new TaskProcessor(coordinator, {} as BullTaskQueues, config, { currentCheckMs: 200, reportBackoffMs: 20 });
  const runs = new RunRepository(db.ds);
  const h = {
    tenantId,
    coordinator,
    processor,
    async start(definition: WorkflowDefinition) {
      const { workflowId } = await publishWorkflow(db.ds, tenantId, definition);
      return (await coordinator.runs.startRun(tenantId, { workflowId })).runId;
    },
    job(nodeId: string): TaskJob {
      return dispatcher.last(nodeId);
    },
    async run(runId: string) {
      return (await runs.findRun(tenantId, runId))!;
    },
    async task(runId: string, nodeId: string): Promise<TaskEntity> {
      return (await runs.tasksOfRun(tenantId, runId)).find((t) => t.nodeId === nodeId)!;
    },
    async events(runId: string) {
      return (await runs.eventsOfRun(tenantId, runId)).map((e) => e.type);
    },
    /** Processes the node's current job. */
    async process(nodeId: string): Promise<void> {
      await processor.process(dispatcher.last(nodeId));
    },
  };
  return h;
}

/** Whether `pid` runs (a zombie waiting for its reaper counts as dead). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

const codeNode = (id: string, runtime: 'js' | 'python', source: string, extra: Record<string, JsonValue> = {}): WorkflowNode => ({
  node_id: id,
  type: 'CODE',
  runtime,
  spec: { code: source, ...extra },
});

describe('what a CODE node returns or throws that PostgreSQL cannot store', () => {
  it.each([
    [
      'js',
      'a NUL character in a string',
      codeNode('c', 'js', 'function handler() { return { s: "a\\u0000b" }; }'),
      'output is not storable: NUL character at $.s',
    ],
    ['js', 'a lone surrogate', codeNode('c', 'js', 'function handler() { return { s: "\\ud800" }; }'), 'output is not storable: lone surrogate U+D800 at $.s'],
    [
      'python',
      'a NUL character in a key',
      codeNode('c', 'python', 'def handler(input):\n    return {"k\\x00": 1}\n'),
      'output is not storable: NUL character in key at $["k\\u0000"]',
    ],
  ])('%s returning %s fails the task and ends the run', async (_runtime, _what, node, reason) => {
    const h = await setup();
    const runId = await h.start(def([node]));
    await h.process('c');
    expect(await h.task(runId, 'c')).toMatchObject({ status: 'FAILED', error: reason });
    expect((await h.run(runId)).status).toBe('FAILED');
  });

  it('stores a thrown error message with NUL characters and lone surrogates sanitized', async () => {
    const h = await setup();
    const runId = await h.start(def([codeNode('c', 'js', 'function handler() {\n  throw new Error("bad\\u0000byte \\udc00");\n}\n')]));
    await h.process('c');
    expect(await h.task(runId, 'c')).toMatchObject({ status: 'FAILED', error: 'Error: bad\ufffdbyte \ufffd (handler.js:2:9)' });
    expect((await h.run(runId)).status).toBe('FAILED');
  });
});

describe('a report the coordinator refuses', () => {
  it('is reported as a failure of the attempt at once, not retried eight times', async () => {
    const h = await setup();
    const runId = await h.start(def([codeNode('c', 'js', 'function handler() { return { poison: 1 }; }')]));
    await h.process('c');
    expect(await h.task(runId, 'c')).toMatchObject({ status: 'FAILED', error: 'the result could not be reported: poisoned output' });
    expect((await h.run(runId)).status).toBe('FAILED');
    // The completion met the refusal once on the locking path, after at most one try by the step
    // committer's statement (made when the run's state the claim read is still at hand, which a
    // loaded machine may not keep): it was not retried.
    const [{ n }] = await db.owner.query(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM poison_hits`);
    expect([1, 2]).toContain(Number(n));
  });

  it('is retried while the failure is transient, and then stored as it was', async () => {
    const h = await setup();
    const runId = await h.start(def([codeNode('c', 'js', 'function handler() { return { flaky: 1 }; }')]));
    await h.process('c');
    expect(await h.task(runId, 'c')).toMatchObject({ status: 'COMPLETED', output: { flaky: 1 } });
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });
});

describe('cancelling a run with work in flight', () => {
  /**
   * Starts processing, cancels once the task is RUNNING and `started()` holds (default: 300 ms
   * later); resolves with ms from cancel to the end of processing.
   */
  async function cancelWhileRunning(
    h: Awaited<ReturnType<typeof setup>>,
    runId: string,
    nodeId: string,
    started: () => boolean | Promise<boolean>,
  ): Promise<void> {
    const processing = h.processor.process(h.job(nodeId));
    await eventually('the task to run', async () => (await h.task(runId, nodeId)).status === 'RUNNING', 45_000);
    await eventually('the work to start', async () => started(), 45_000);
    await h.coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'stop' });
    // The work runs for 10 minutes unless aborted: only the abort ends it within the test's timeout.
    await processing;
  }

  it('aborts a running CODE task (the child is killed) and reports nothing', async () => {
    const h = await setup();
    const source = 'async function handler(input) {\n  await new Promise((r) => setTimeout(r, 600000));\n  return 1;\n}\n';
    const runId = await h.start(def([codeNode('c', 'js', source, { timeout_seconds: 600 })]));
    // The sandboxed runner: a process of one of this worker's execution uids (its own block: other
    // processes on the machine run code under blocks of their own) running runner.cjs.
    const range = (h.processor as unknown as { code: CodeExecutor }).code.uidRange;
    if (!range) throw new Error('the worker has no uid block: CODE tests run as root');
    const runners = async (): Promise<number[]> => {
      const pids = await processesOf({ first: range.base, count: range.size });
      return pids.filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('runner.cjs');
        } catch {
          return false;
        }
      });
    };
    let running: number[] = [];
    await cancelWhileRunning(h, runId, 'c', async () => (running = await runners()).length > 0);
    // SIGKILL was sent before the attempt ended; the kernel and libuv's reaping take a moment.
    await eventually('the killed runner to be gone', async () => !running.some(isAlive), 30_000);
    expect(await h.task(runId, 'c')).toMatchObject({ status: 'CANCELLED', error: 'stop' });
    expect(await h.events(runId)).toEqual(['RunStarted', 'RunCancelled']);
  });

  it('aborts a running HTTP request', async () => {
    const h = await setup();
    const runId = await h.start(def([http('h', { url: slowUrl, timeout_seconds: 600 })]));
    const before = slowRequests;
    await cancelWhileRunning(h, runId, 'h', () => slowRequests > before); // the server never answers
    expect(await h.events(runId)).toEqual(['RunStarted', 'RunCancelled']);
  });

  it('checks all in-flight attempts in one heartbeat and keeps the current ones', async () => {
    const h = await setup();
    const a = await h.start(def([http('a')]));
    const b = await h.start(def([http('b')]));
    const ja = h.job('a');
    const jb = h.job('b');
    const ta = (await h.coordinator.leases.markRunning(h.tenantId, ja.taskId, ja.attempt))!;
    const tb = (await h.coordinator.leases.markRunning(h.tenantId, jb.taskId, jb.attempt))!;
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: b });
    const stale = '00000000-0000-4000-8000-000000000000';
    const lost = await h.coordinator.leases.heartbeat([
      { ...ja, leaseToken: ta },
      { ...jb, leaseToken: tb },
      { ...ja, attempt: 1, leaseToken: stale },
      { tenantId: 'x', taskId: 'y', attempt: 0, leaseToken: 'z' },
    ]);
    expect([...lost].sort()).toEqual([tb, stale, 'z'].sort());
    expect((await h.run(a)).status).toBe('RUNNING');
  });
});

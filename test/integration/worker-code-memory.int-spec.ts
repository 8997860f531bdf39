import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { TaskJob } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { RunRepository, sql, withTenant } from '@weft/persistence';
import { BullTaskQueues, queuePrefix, WeftMetrics, type WeftConfig } from '@weft/platform';
import { TaskProcessor } from '@weft/worker';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { killWorker, spawnWorker } from '../support/spawn-worker.js';
import { eventually } from '../support/faults.js';

/**
 * A worker's CODE executions share one memory total (WEFT_CODE_MAX_TOTAL_MB). With a total of
 * 256 MB and two executions of memory_mb 200, the second waits for the first. These tests hold
 * both there with a gate: each handler loops until a file `go` appears in its read-only input
 * folder (`/weft/in` in the sandbox, a folder under the worker's TMPDIR outside it), which the
 * test writes when it wants that execution to end. So every step is a state the test waits for,
 * never a time:
 *
 * - a worker stopped with SIGTERM hands the waiting execution back at once (its attempt released,
 *   not failed), another worker completes it while the first one's execution still runs, and that
 *   one finishes within the drain window and is reported by its own worker;
 * - the gauges weft_code_memory_reserved_bytes and weft_code_memory_waiting follow both.
 *
 * CODE needs root and bubblewrap (a worker that is not root refuses it).
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TOTAL_MB = 256;
const MEMORY_MB = 200;
const MIB = 1024 * 1024;
const RUN_LEASE_MS = 15_000;
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('worker CODE memory: not root, skipped (a worker that is not root refuses CODE)');
const suite = asRoot ? describe : describe.skip;

let db: TestDatabase;
let scratch: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  // The workers' TMPDIR: their execution folders, and so the gates, are under it.
  scratch = await mkdtemp(join(tmpdir(), 'weft-code-memory-'));
  await chmod(scratch, 0o1777);
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
  await db?.drop();
});

/** Python that returns `input.name` once the file `go` is in its input folder; `gate` marks its handler file. */
function gated(gate: string): string {
  return `import os, time\nGATE = ${JSON.stringify(gate)}\ndef handler(input):\n    while not os.path.exists("/weft/in/go"):\n        time.sleep(0.05)\n    return input["name"]\n`;
}

/** One CODE node `node` of memory_mb 200, held by the gate `gate`. */
function gatedNode(node: string, gate: string, queue: string) {
  return def([
    {
      node_id: node,
      type: 'CODE',
      runtime: 'python',
      queue,
      retry: { max_attempts: 3 },
      spec: { code: gated(gate), memory_mb: MEMORY_MB, timeout_seconds: 300, name: node },
    },
  ]);
}

/** The input folders under the workers' TMPDIR of the executions started with `gate`: one per execution that got its memory. */
async function started(gate: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(scratch, { recursive: true }).catch(() => [] as string[])) {
    if (basename(entry) !== 'handler.py') continue;
    const text = await readFile(join(scratch, entry), 'utf8').catch(() => '');
    if (text.includes(JSON.stringify(gate))) found.push(dirname(join(scratch, entry)));
  }
  return found;
}

/** Lets the execution started with `gate` (waits for it to start) return. */
async function open(gate: string): Promise<void> {
  const [dir] = await eventually(
    `the execution of ${gate} starts`,
    async () => {
      const dirs = await started(gate);
      return dirs.length > 0 && dirs;
    },
    60_000,
  );
  await writeFile(join(dir!, 'go'), '');
}

/** The two CODE memory gauges of `metrics`, as the exposition reads them. */
async function gauges(metrics: WeftMetrics): Promise<{ reservedBytes: number; waiting: number }> {
  const text = await metrics.text();
  const read = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  return { reservedBytes: read('weft_code_memory_reserved_bytes'), waiting: read('weft_code_memory_waiting') };
}

suite('a worker stopped with SIGTERM while a CODE execution waits for memory', () => {
  it('hands the waiting one back at once for another worker, and finishes the running one itself', async () => {
    const QUEUE = 'code-memory-drain';
    const { tenantId } = await createTenant(db.ds);
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: RUN_LEASE_MS, onError: () => undefined });
    closers.push(async () => {
      await queues
        .queue(QUEUE)
        .obliterate({ force: true })
        .catch(() => undefined);
      await queues.close();
    });
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { logger: new MemoryLogger(), runLeaseMs: RUN_LEASE_MS });
    const runs = new RunRepository(db.ds);

    const { child, output } = await spawnWorker({
      TMPDIR: scratch,
      DATABASE_URL: db.url,
      DATABASE_OWNER_URL: db.ownerUrl,
      REDIS_URL,
      WEFT_QUEUES: QUEUE,
      WEFT_WORKER_CONCURRENCY: '2',
      WEFT_CODE_MAX_TOTAL_MB: String(TOTAL_MB),
      // Long enough that only the gate ends the running execution: nothing is handed back at the deadline.
      WEFT_DRAIN_SECONDS: '240',
      WEFT_RUN_LEASE_MS: String(RUN_LEASE_MS),
      WEFT_LOG_LEVEL: 'info',
    });
    closers.push(() => killWorker(child));
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));

    const first = await publishWorkflow(db.ds, tenantId, gatedNode('first', 'drain-first', QUEUE), { workflowId: 'drain-first' });
    const second = await publishWorkflow(db.ds, tenantId, gatedNode('second', 'drain-second', QUEUE), { workflowId: 'drain-second' });
    const runIds = [
      (await coordinator.runs.startRun(tenantId, { workflowId: first.workflowId })).runId,
      (await coordinator.runs.startRun(tenantId, { workflowId: second.workflowId })).runId,
    ];
    const taskOf = async (runId: string) => (await runs.tasksOfRun(tenantId, runId))[0]!;

    // One execution got its memory and runs; the other's task is the one the worker logs waiting.
    const waitingTaskId = await eventually(
      'one execution waits for CODE memory',
      async () => /"event":"code\.memory_wait".*?"taskId":"([^"]+)"/.exec(output())?.[1],
      60_000,
    );
    const tasks = await Promise.all(runIds.map(taskOf));
    const waitingAt = tasks.findIndex((t) => t.id === waitingTaskId);
    expect(waitingAt).toBeGreaterThanOrEqual(0);
    const runningAt = 1 - waitingAt;
    const gates = ['drain-first', 'drain-second'];
    expect(await started(gates[runningAt]!)).toHaveLength(1);
    expect(await started(gates[waitingAt]!)).toEqual([]);
    expect(tasks.map((t) => [t.status, t.attempt])).toEqual([
      ['RUNNING', 0],
      ['RUNNING', 0],
    ]);

    child.kill('SIGTERM');
    // The waiting attempt's lease is released before the running one ended: it is PENDING again, at the same attempt.
    await eventually(
      'the waiting attempt is handed back',
      async () => {
        const t = await taskOf(runIds[waitingAt]!);
        return t.status === 'PENDING' && t.leaseToken === null && t;
      },
      60_000,
    );
    expect(await started(gates[waitingAt]!)).toEqual([]);
    expect((await taskOf(runIds[runningAt]!)).status).toBe('RUNNING');

    // Another worker, in this process, records what it claims; it completes the handed-back attempt
    // while the first worker's execution still runs.
    const otherQueues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: RUN_LEASE_MS, onError: () => undefined });
    closers.push(() => otherQueues.close());
    const other = new RunCoordinator(db.ds, otherQueues, new RecordingPublisher(), { logger: new MemoryLogger(), runLeaseMs: RUN_LEASE_MS });
    const byOther = new Set<string>();
    const claim = other.leases.claim.bind(other.leases);
    other.leases.claim = async (tenant, taskId, attempt, queue) => {
      const c = await claim(tenant, taskId, attempt, queue);
      if (c) byOther.add(taskId);
      return c;
    };
    const config = {
      queues: [QUEUE],
      workerConcurrency: 2,
      codeMaxTotalMb: TOTAL_MB,
      runLeaseMs: RUN_LEASE_MS,
      drainSeconds: 1,
      httpAllowHosts: [],
    } as unknown as WeftConfig;
    const otherWorker = new TaskProcessor(other, otherQueues, config, { heartbeatMs: 1_000, code: { tempDir: scratch } });
    closers.push(() => otherWorker.beforeApplicationShutdown());
    void otherWorker.start([QUEUE]);
    await open(gates[waitingAt]!);
    await eventually('the handed-back run ends', async () => (await runs.findRun(tenantId, runIds[waitingAt]!))!.status !== 'RUNNING', 120_000);
    expect(byOther.has(waitingTaskId)).toBe(true);
    expect((await taskOf(runIds[runningAt]!)).status).toBe('RUNNING');
    expect(child.exitCode === null && child.signalCode === null).toBe(true);

    // The running execution finishes within the drain window, reported by the first worker.
    await open(gates[runningAt]!);
    const gone = await exited;
    expect(gone.signal === 'SIGTERM' || gone.code === 0).toBe(true);
    for (const [at, runId] of runIds.entries()) {
      const run = (await runs.findRun(tenantId, runId))!;
      expect({ at, status: run.status }).toEqual({ at, status: 'SUCCEEDED' });
      // Released, never failed: the one attempt completed, no failure recorded.
      const task = await taskOf(runId);
      expect([task.status, task.attempt]).toEqual(['COMPLETED', 0]);
      const events = (await runs.eventsOfRun(tenantId, runId)).map((e) => e.type);
      expect(events.filter((type) => type === 'NodeFailed')).toEqual([]);
    }
    expect(byOther.has(tasks[runningAt]!.id)).toBe(false);
    expect(output()).toMatch(/handed back: waiting for CODE memory when the drain began/);
    expect(output()).toMatch(/drained in \d+ ms: 1 finished, 1 handed back/);
    expect(await started(gates[waitingAt]!)).toHaveLength(0); // its folder, on the other worker, is gone too
  }, 240_000);
});

suite('the CODE memory gauges of a worker', () => {
  const QUEUE = 'code-memory-gauges';

  async function worker() {
    const { tenantId } = await createTenant(db.ds, `gauges-${Math.random().toString(36).slice(2, 8)}`);
    const dispatcher = new RecordingDispatcher();
    const coordinator = new RunCoordinator(db.ds, dispatcher, new RecordingPublisher(), { logger: new MemoryLogger(), runLeaseMs: RUN_LEASE_MS });
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { onError: () => undefined });
    closers.push(() => queues.close());
    const metrics = new WeftMetrics({ processMetrics: false });
    const config = { queues: [QUEUE], workerConcurrency: 2, codeMaxTotalMb: TOTAL_MB, runLeaseMs: RUN_LEASE_MS, httpAllowHosts: [] } as unknown as WeftConfig;
    const processor = new TaskProcessor(coordinator, queues, config, { heartbeatMs: 1_000, drainMs: 240_000, code: { tempDir: scratch } }, metrics);
    const job = async (node: string, gate: string): Promise<TaskJob> => {
      const { workflowId } = await publishWorkflow(db.ds, tenantId, gatedNode(node, gate, QUEUE), { workflowId: gate });
      await coordinator.runs.startRun(tenantId, { workflowId });
      return dispatcher.last(node);
    };
    const row = async (taskId: string) =>
      (
        await withTenant(db.ds, tenantId, (m) =>
          sql<{ status: string; attempt: number; lease_token: string | null }>(
            m,
            `SELECT status, attempt, lease_token FROM tasks WHERE tenant_id = $1 AND id = $2`,
            [tenantId, taskId],
          ),
        )
      ).rows[0]!;
    return { processor, metrics, job, row };
  }

  it("count the running execution's reservation and the waiting one, then nothing once both ended", async () => {
    const { processor, metrics, job } = await worker();
    expect(await gauges(metrics)).toEqual({ reservedBytes: 0, waiting: 0 });
    const running = processor.process(await job('a', 'gauges-a'), { dueAt: Date.now(), queue: QUEUE });
    await eventually('a runs', async () => (await started('gauges-a')).length === 1, 60_000);
    const waiting = processor.process(await job('b', 'gauges-b'), { dueAt: Date.now(), queue: QUEUE });
    await eventually('b waits', async () => (await gauges(metrics)).waiting === 1, 60_000);
    expect(await gauges(metrics)).toEqual({ reservedBytes: MEMORY_MB * MIB, waiting: 1 });
    expect(await started('gauges-b')).toEqual([]);

    await open('gauges-a');
    await running;
    await eventually('b runs', async () => (await started('gauges-b')).length === 1, 60_000);
    expect(await gauges(metrics)).toEqual({ reservedBytes: MEMORY_MB * MIB, waiting: 0 });
    await open('gauges-b');
    await waiting;
    expect(await gauges(metrics)).toEqual({ reservedBytes: 0, waiting: 0 });
  }, 180_000);

  it('stop counting a waiting execution a drain handed back, while the running one still counts', async () => {
    const { processor, metrics, job, row } = await worker();
    await processor.start([QUEUE]);
    const a = await job('a', 'drain-gauges-a');
    const running = processor.process(a, { dueAt: Date.now(), queue: QUEUE });
    await eventually('a runs', async () => (await started('drain-gauges-a')).length === 1, 60_000);
    const b = await job('b', 'drain-gauges-b');
    const waiting = processor.process(b, { dueAt: Date.now(), queue: QUEUE });
    await eventually('b waits', async () => (await gauges(metrics)).waiting === 1, 60_000);
    expect(await gauges(metrics)).toEqual({ reservedBytes: MEMORY_MB * MIB, waiting: 1 });

    const stopping = processor.beforeApplicationShutdown();
    expect(await waiting).toEqual({ handBack: b });
    expect(await row(b.taskId)).toEqual({ status: 'PENDING', attempt: 0, lease_token: null });
    expect(await row(a.taskId)).toMatchObject({ status: 'RUNNING' });
    expect(await gauges(metrics)).toEqual({ reservedBytes: MEMORY_MB * MIB, waiting: 0 });

    await open('drain-gauges-a');
    await running;
    await stopping;
    expect(await row(a.taskId)).toMatchObject({ status: 'COMPLETED', attempt: 0 });
    expect(await gauges(metrics)).toEqual({ reservedBytes: 0, waiting: 0 });
  }, 180_000);
});

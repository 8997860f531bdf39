import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunRepository, sql, withTenant } from '@weft/persistence';
import { jobId, type TaskJob } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, queuePrefix, type WeftConfig } from '@weft/platform';
import { TaskProcessor } from '@weft/worker';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { spawnWorker } from '../support/spawn-worker.js';
import { act, eventually, installFault, sleep } from '../support/faults.js';

/**
 * Workers that die or cannot write: a worker process SIGKILLed mid-task
 * has its job redelivered by Bull's stalled-job handling and the task completes once; the late
 * report of a superseded execution is ignored and visible in the history; a worker whose report
 * cannot be written retries the report — not the task — while it holds the lease. Real
 * PostgreSQL, real Redis (under this database's own key prefix), a local HTTP service.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Short Bull locks and leases so a crash is noticed within a few seconds. */
const LOCK_MS = 1_500;
const RUN_LEASE_MS = 1_500;

let db: TestDatabase;
let service: Awaited<ReturnType<typeof heldService>>;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  service = await heldService();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await service?.close();
  await db?.drop();
});

/**
 * An HTTP service whose answers the test gives: every request to a path waits in `pending` until
 * `answer(path, body)` (the oldest first), or `answerAll` answers it as it arrives.
 */
async function heldService() {
  const pending: { path: string; res: ServerResponse }[] = [];
  const hits: string[] = [];
  const auto = new Map<string, unknown>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    req.resume();
    if (auto.has(path)) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(auto.get(path)));
    pending.push({ path, res });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    count: (path: string) => hits.filter((h) => h === path).length,
    waiting: (path: string) => pending.filter((p) => p.path === path && !p.res.destroyed && !p.res.writableEnded).length,
    answer(path: string, body: unknown) {
      const i = pending.findIndex((p) => p.path === path && !p.res.writableEnded);
      if (i < 0) throw new Error(`no request to ${path} waits`);
      const [p] = pending.splice(i, 1);
      p!.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    },
    answerAll(path: string, body: unknown) {
      auto.set(path, body);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const workerConfig = (queues: string[]) =>
  ({ queues, workerConcurrency: 1, httpAllowPrivate: true, httpAllowHosts: [], runLeaseMs: RUN_LEASE_MS }) as unknown as WeftConfig;

async function setup(opts: { maxEventRetries?: number } = {}) {
  const { tenantId } = await createTenant(db.ds);
  const logger = new MemoryLogger();
  const runs = new RunRepository(db.ds);
  const h = {
    tenantId,
    logger,
    async run(runId: string) {
      return (await runs.findRun(tenantId, runId))!;
    },
    async task(runId: string) {
      const r = await withTenant(db.ds, tenantId, (m) =>
        sql<{ id: string; status: string; attempt: number; output: unknown; lease_token: string | null; lease_expires_at: Date | null; db_now: Date }>(
          m,
          `SELECT id, status, attempt, output, lease_token, lease_expires_at, clock_timestamp() AS db_now FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = 'a'`,
          [tenantId, runId],
        ),
      );
      return r.rows[0]!;
    },
    async history(runId: string) {
      return (await runs.eventsOfRun(tenantId, runId)).map((e) => ({ type: e.type, attempt: e.attempt, ignored: e.ignored }));
    },
    coordinatorOn(dispatcher: BullTaskQueues | RecordingDispatcher) {
      return new RunCoordinator(db.ds, dispatcher, new RecordingPublisher(), { logger, runLeaseMs: RUN_LEASE_MS, ...opts });
    },
  };
  return h;
}

/** Spawns a worker process straight from the sources; resolves once it consumes. */
async function startWorker(queue: string): Promise<ChildProcess> {
  const { child } = await spawnWorker({
    DATABASE_URL: db.url,
    DATABASE_OWNER_URL: db.ownerUrl,
    REDIS_URL,
    WEFT_QUEUES: queue,
    WEFT_WORKER_CONCURRENCY: '1',
    WEFT_JOB_LOCK_MS: String(LOCK_MS),
    WEFT_RUN_LEASE_MS: String(RUN_LEASE_MS),
    WEFT_HTTP_ALLOW_PRIVATE: '1',
    WEFT_LOG_LEVEL: 'warn',
  });
  return child;
}

describe('a worker killed mid-task', () => {
  it("has its job redelivered by Bull's stalled-job check to another worker; the task completes once", async () => {
    const h = await setup();
    const queue = 'crash';
    const prefix = queuePrefix(db.url);
    const queues = new BullTaskQueues(REDIS_URL, prefix, { jobLockMs: LOCK_MS });
    closers.push(() => queues.close());
    const coordinator = h.coordinatorOn(queues);
    const { workflowId } = await publishWorkflow(db.ds, h.tenantId, def([http('a', { url: `${service.base}/crash` }, { queue })]));

    const first = await startWorker(queue);
    closers.push(async () => first.kill('SIGKILL'));
    const { runId } = await coordinator.runs.startRun(h.tenantId, { workflowId });
    await eventually('the first worker executes the task', async () => service.waiting('/crash') === 1 && (await h.task(runId)).status === 'RUNNING', 30_000);
    const claimedBy = (await h.task(runId)).lease_token;
    expect(claimedBy).not.toBeNull();

    const exited = new Promise((r) => first.once('exit', (_code, signal) => r(signal)));
    first.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    // Its job is still active in Redis, locked until the lock lapses.
    expect(
      await queues
        .queue(queue)
        .getJob(jobId((await h.task(runId)).id, 0))
        .then((j) => j?.getState()),
    ).toBe('active');

    // Another worker: its stalled-job check finds the job whose lock lapsed and runs it again.
    service.answerAll('/crash', { done: 'by the second worker' });
    const secondQueues = new BullTaskQueues(REDIS_URL, prefix, { jobLockMs: LOCK_MS, onError: () => undefined });
    closers.push(() => secondQueues.close());
    const second = new TaskProcessor(h.coordinatorOn(secondQueues), secondQueues, workerConfig([queue]), { heartbeatMs: 300 });
    second.start([queue]);

    await eventually('the run ends', async () => ['SUCCEEDED', 'FAILED'].includes((await h.run(runId)).status), 30_000);
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED', output: { a: { done: 'by the second worker' } } });
    const task = await h.task(runId);
    expect(task).toMatchObject({ status: 'COMPLETED', attempt: 0 }); // redelivered, not retried
    expect(task.lease_token).not.toBe(claimedBy);
    expect(service.count('/crash')).toBe(2);
    expect((await h.history(runId)).filter((e) => e.type === 'NodeCompleted')).toEqual([{ type: 'NodeCompleted', attempt: 0, ignored: null }]);
  });
});

describe('a late report of a superseded execution', () => {
  it('is ignored, and visible in the run history as ignored with the reason', async () => {
    const h = await setup();
    const dispatcher = new RecordingDispatcher();
    const coordinator = h.coordinatorOn(dispatcher);
    const { workflowId } = await publishWorkflow(db.ds, h.tenantId, def([http('a', { url: `${service.base}/late` })]));
    const { runId } = await coordinator.runs.startRun(h.tenantId, { workflowId });
    const job: TaskJob = dispatcher.last('a');

    // The old execution does not heartbeat (a stalled event loop), so it cannot learn it lost its lease.
    const old = new TaskProcessor(coordinator, {} as BullTaskQueues, workerConfig([]), { heartbeatMs: 0 });
    const current = new TaskProcessor(coordinator, {} as BullTaskQueues, workerConfig([]), { heartbeatMs: 200 });
    const oldDone = old.process(job);
    await eventually('the old execution calls the service', async () => service.waiting('/late') === 1);
    const oldToken = (await h.task(runId)).lease_token;
    const currentDone = current.process(job); // the job redelivered to another worker
    await eventually('the new execution calls the service', async () => service.waiting('/late') === 2);
    expect((await h.task(runId)).lease_token).not.toBe(oldToken);

    service.answer('/late', { from: 'old' });
    await oldDone;
    const history = await h.history(runId);
    expect(history).toEqual([
      { type: 'RunStarted', attempt: null, ignored: null },
      { type: 'NodeCompleted', attempt: 0, ignored: "stale lease: attempt 0 of node a was re-dispatched; this execution's lease was superseded" },
    ]);
    expect((await h.task(runId)).status).toBe('RUNNING');

    service.answer('/late', { from: 'current' });
    await currentDone;
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED', output: { a: { from: 'current' } } });
    expect((await h.history(runId)).map((e) => [e.type, e.ignored === null ? 'applied' : 'ignored'])).toEqual([
      ['RunStarted', 'applied'],
      ['NodeCompleted', 'ignored'],
      ['NodeCompleted', 'applied'],
    ]);
  });
});

describe('a worker whose report cannot be written', () => {
  it('keeps retrying the report, not the task, while it holds the lease: the job stays active, the lease alive, nothing is re-dispatched', async () => {
    const h = await setup({ maxEventRetries: 0 });
    const queue = 'unwritable';
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: LOCK_MS });
    closers.push(() => queues.close());
    const coordinator = h.coordinatorOn(queues);
    const { workflowId } = await publishWorkflow(db.ds, h.tenantId, def([http('a', { url: `${service.base}/unwritable` }, { queue })]));
    // Every completion is refused as a serialization failure (transient) until the fault is removed.
    const fault = await installFault(db.owner, { table: 'tasks', events: 'UPDATE', when: `NEW.status = 'COMPLETED'`, action: act.raise('40001') });
    closers.push(() => fault.remove());
    service.answerAll('/unwritable', { written: 'at last' });

    const worker = new TaskProcessor(coordinator, queues, workerConfig([queue]), { heartbeatMs: 300, reportBackoffMs: 20, reportBackoffCapMs: 100 });
    worker.start([queue]);
    const { runId } = await coordinator.runs.startRun(h.tenantId, { workflowId });
    await eventually('the report is refused several times', async () => (await fault.hits()) >= 10, 30_000);

    // Well past the run lease (1.5 s) and many tries: still held, still active, not swept.
    await sleep(2 * RUN_LEASE_MS);
    const task = await h.task(runId);
    expect(task.status).toBe('RUNNING');
    expect(task.lease_expires_at!.getTime()).toBeGreaterThan(task.db_now.getTime());
    expect(
      await queues
        .queue(queue)
        .getJob(jobId(task.id, 0))
        .then((j) => j?.getState()),
    ).toBe('active');
    expect(await coordinator.lostTasks.sweep(100, queues)).toBe(0);

    const refused = await fault.hits();
    expect(refused).toBeGreaterThan(8); // no fixed budget of tries: it retries while it holds the lease
    await fault.remove(); // the database accepts the report again
    await eventually('the run ends', async () => (await h.run(runId)).status !== 'RUNNING', 30_000);
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED', output: { a: { written: 'at last' } } });
    expect(service.count('/unwritable')).toBe(1); // executed once
    expect((await h.history(runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted']);
  });

  it('gives the report up when its lease is lost meanwhile (the run was cancelled)', async () => {
    const h = await setup({ maxEventRetries: 0 });
    const dispatcher = new RecordingDispatcher();
    const coordinator = h.coordinatorOn(dispatcher);
    const { workflowId } = await publishWorkflow(db.ds, h.tenantId, def([http('a', { url: `${service.base}/cancelled` })]));
    const fault = await installFault(db.owner, { table: 'tasks', events: 'UPDATE', when: `NEW.status = 'COMPLETED'`, action: act.raise('40001') });
    closers.push(() => fault.remove());
    service.answerAll('/cancelled', {});
    const { runId } = await coordinator.runs.startRun(h.tenantId, { workflowId });
    const worker = new TaskProcessor(coordinator, {} as BullTaskQueues, workerConfig([]), { heartbeatMs: 100, reportBackoffMs: 20, reportBackoffCapMs: 50 });
    const done = worker.process(dispatcher.last('a'));
    await eventually('the report is refused', async () => (await fault.hits()) >= 3);
    await coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'stop' });
    await done; // resolves: nothing left to report
    await fault.remove();
    // The run's history: the start and the cancel applied; a retry of the report that got through
    // before the worker's next heartbeat noticed the lost lease is recorded, but only as ignored.
    const history = await h.history(runId);
    expect(history.filter((e) => !e.ignored).map((e) => e.type)).toEqual(['RunStarted', 'RunCancelled']);
    expect(history.slice(2).every((e) => e.type === 'NodeCompleted' && e.ignored)).toBe(true);
    expect(await h.task(runId)).toMatchObject({ status: 'CANCELLED' });
  });
});

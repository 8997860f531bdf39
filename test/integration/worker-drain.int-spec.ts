import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunRepository, WorkerRegistryRepository, sql, withTenant } from '@weft/persistence';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, queuePrefix, type WeftConfig } from '@weft/platform';
import { TaskProcessor } from '@weft/worker';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { spawnWorker } from '../support/spawn-worker.js';
import { eventually } from '../support/faults.js';

/**
 * A worker stopped with SIGTERM while it is busy: it takes no job and no eager attempt any more,
 * the short executions it holds finish and are reported by it, the long one still running at the
 * drain deadline is handed back and completed by a second worker (its lease and Bull's job lock
 * last 10 minutes, past the test's timeout: only the hand-back lets the second worker have it),
 * every task completes exactly once, and the process deregisters and exits (the long request never
 * ends: only the deadline ends the drain). The first worker is a real process; the second runs in
 * this one, so its claims can be told apart. The deadline itself is checked on a fake clock in
 * apps/worker/src/processors/drain.spec.ts.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'drain';
const DRAIN_SECONDS = 3;
/** The run lease and Bull's job lock: longer than the test may take. */
const RUN_LEASE_MS = 600_000;
const SHORT_MS = 800;
const SHORT_RUNS = 10;
const CHAIN = ['a', 'b', 'c'];

let db: TestDatabase;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await db?.drop();
});

/** A service that answers `/short/*` after SHORT_MS, holds the first `/long` request until it is aborted and answers later ones at once. */
async function service() {
  const hits: { path: string }[] = [];
  const open = new Set<ServerResponse>();
  const pending = new Set<string>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push({ path });
    req.resume();
    const reply = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path, n: hits.filter((h) => h.path === path).length }));
    if (path.startsWith('/short/')) {
      pending.add(path);
      setTimeout(() => {
        pending.delete(path);
        reply();
      }, SHORT_MS);
    } else if (hits.filter((h) => h.path === '/long').length === 1) open.add(res);
    else reply();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    hitCount: (prefix: string) => hits.filter((h) => h.path.startsWith(prefix)).length,
    /** The short requests not answered yet. */
    pending: () => [...pending],
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('a worker stopped with SIGTERM under load', () => {
  it('finishes its short executions, hands the long one back to another worker at the deadline, and exits', async () => {
    const svc = await service();
    closers.push(() => svc.close());
    const { tenantId } = await createTenant(db.ds);
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: RUN_LEASE_MS });
    closers.push(async () => {
      await queues
        .queue(QUEUE)
        .obliterate({ force: true })
        .catch(() => undefined);
      await queues.close();
    });
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { logger: new MemoryLogger(), runLeaseMs: RUN_LEASE_MS });
    const runs = new RunRepository(db.ds);
    const registry = new WorkerRegistryRepository(db.ds);

    const { child, output } = await spawnWorker({
      DATABASE_URL: db.url,
      DATABASE_OWNER_URL: db.ownerUrl,
      REDIS_URL,
      WEFT_QUEUES: QUEUE,
      WEFT_WORKER_CONCURRENCY: '4',
      WEFT_DRAIN_SECONDS: String(DRAIN_SECONDS),
      WEFT_RUN_LEASE_MS: String(RUN_LEASE_MS),
      WEFT_JOB_LOCK_MS: String(RUN_LEASE_MS),
      WEFT_HTTP_ALLOW_PRIVATE: '1',
      WEFT_LOG_LEVEL: 'info',
    });
    closers.push(async () => child.kill('SIGKILL'));
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    const [first] = (await registry.live()).filter((w) => w.queues.includes(QUEUE));
    expect(first).toMatchObject({ pid: child.pid, queues: [QUEUE], concurrency: 4, drainingSince: null });

    // The long run first, so the first worker holds it; then chains of short nodes keep the other slots busy.
    const long = await publishWorkflow(db.ds, tenantId, def([http('long', { url: `${svc.base}/long` }, { queue: QUEUE })]), { workflowId: 'long' });
    const longRun = (await coordinator.runs.startRun(tenantId, { workflowId: long.workflowId })).runId;
    await eventually('the first worker calls /long', async () => svc.hitCount('/long') === 1, 45_000);
    const shortRuns: string[] = [];
    for (let i = 0; i < SHORT_RUNS; i++) {
      const chain = def(
        CHAIN.map((n) => http(n, { url: `${svc.base}/short/${i}/${n}` }, { queue: QUEUE })),
        CHAIN.slice(1).map((n, j) => edge(CHAIN[j]!, n)),
      );
      const { workflowId } = await publishWorkflow(db.ds, tenantId, chain, { workflowId: `short-${i}` });
      shortRuns.push((await coordinator.runs.startRun(tenantId, { workflowId })).runId);
    }
    await eventually('three short executions are in flight on the first worker', async () => svc.pending().length >= 3, 45_000);

    // Every slot of the first worker is busy now (the long one and three short ones): it can
    // start nothing more before one of those is answered, 800 ms on.
    const hitsAtSigterm = svc.hits.length;
    const heldAtSigterm = svc.pending();
    child.kill('SIGTERM');
    // The second worker, in this process: it records what it claims and takes.
    const secondQueues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: RUN_LEASE_MS, onError: () => undefined });
    closers.push(() => secondQueues.close());
    const second = new RunCoordinator(db.ds, secondQueues, new RecordingPublisher(), { logger: new MemoryLogger(), runLeaseMs: RUN_LEASE_MS });
    const bySecond = new Set<string>();
    const claim = second.leases.claim.bind(second.leases);
    second.leases.claim = async (tenant, taskId, attempt, queue) => {
      const c = await claim(tenant, taskId, attempt, queue);
      if (c) bySecond.add(taskId);
      return c;
    };
    for (const report of ['reportCompleted', 'reportFailed'] as const) {
      const original = second.runs[report].bind(second.runs) as (t: string, r: never) => Promise<{ taken?: { job: { taskId: string } } }>;
      (second.runs as unknown as Record<string, unknown>)[report] = async (t: string, r: never) => {
        const res = await original(t, r);
        if (res.taken) bySecond.add(res.taken.job.taskId);
        return res;
      };
    }
    const config = {
      queues: [QUEUE],
      workerConcurrency: 8,
      httpAllowPrivate: true,
      httpAllowHosts: [],
      runLeaseMs: RUN_LEASE_MS,
      drainSeconds: 1,
    } as unknown as WeftConfig;
    const secondWorker = new TaskProcessor(second, secondQueues, config, { heartbeatMs: 1_000 });
    void secondWorker.start([QUEUE]);

    await eventually('the first worker records its drain', async () => (await registry.live()).find((w) => w.id === first!.id)?.drainingSince ?? false, 60_000);
    const gone = await exited;
    const allRuns = [longRun, ...shortRuns];
    await eventually(
      'every run ends',
      async () => (await Promise.all(allRuns.map((r) => runs.findRun(tenantId, r)))).every((r) => r!.status !== 'RUNNING'),
      60_000,
    );

    // Every run succeeded, every task completed once, at its first attempt.
    for (const runId of allRuns) {
      expect((await runs.findRun(tenantId, runId))!.status).toBe('SUCCEEDED');
      const tasks = await runs.tasksOfRun(tenantId, runId);
      expect(tasks.map((t) => [t.status, t.attempt])).toEqual(tasks.map(() => ['COMPLETED', 0]));
      const completed = (await runs.eventsOfRun(tenantId, runId)).filter((e) => e.type === 'NodeCompleted');
      expect(completed.map((e) => e.ignored)).toEqual(tasks.map(() => null));
    }
    for (let i = 0; i < SHORT_RUNS; i++)
      for (const n of CHAIN)
        expect({ path: `${i}/${n}`, hits: svc.hits.filter((h) => h.path === `/short/${i}/${n}`).length }).toEqual({ path: `${i}/${n}`, hits: 1 });

    // The short executions held at SIGTERM were finished by the first worker, and it started
    // nothing once it drained: every execution it did not hand back began before the signal.
    const taskOf = new Map<string, string>();
    for (let i = 0; i < SHORT_RUNS; i++) for (const t of await runs.tasksOfRun(tenantId, shortRuns[i]!)) taskOf.set(`/short/${i}/${t.nodeId}`, t.id);
    expect(heldAtSigterm.length).toBeGreaterThanOrEqual(3);
    for (const path of heldAtSigterm) expect({ path, bySecond: bySecond.has(taskOf.get(path)!) }).toEqual({ path, bySecond: false });
    const byFirstAfterSigterm = svc.hits.slice(hitsAtSigterm).filter((h) => h.path.startsWith('/short/') && !bySecond.has(taskOf.get(h.path)!));
    expect(byFirstAfterSigterm).toEqual([]);

    // The long execution was handed back and done by the second worker: its lease and job lock
    // would have kept it from the second worker past the test's timeout.
    const longHits = svc.hits.filter((h) => h.path === '/long');
    expect(longHits).toHaveLength(2);
    const longTask = (await runs.tasksOfRun(tenantId, longRun))[0]!;
    expect(bySecond.has(longTask.id)).toBe(true);
    expect((await runs.findRun(tenantId, longRun))!.output).toEqual({ long: { path: '/long', n: 2 } });

    // It exited, drained (the long request never ends: the deadline ended the drain) and deregistered.
    expect(gone.signal === 'SIGTERM' || gone.code === 0).toBe(true);
    expect(output()).toMatch(/drained in \d+ ms: \d+ finished, 1 handed back/);
    expect((await registry.live()).map((w) => w.id)).not.toContain(first!.id);
    await secondWorker.beforeApplicationShutdown();
  }, 90_000);
});

describe('a draining worker, in this process', () => {
  it('hands back untouched a job delivered once the drain began, and at the deadline the execution it holds', async () => {
    const svc = await service();
    closers.push(() => svc.close());
    const { tenantId } = await createTenant(db.ds);
    const dispatcher = new RecordingDispatcher();
    const coordinator = new RunCoordinator(db.ds, dispatcher, new RecordingPublisher(), { logger: new MemoryLogger(), runLeaseMs: RUN_LEASE_MS });
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { onError: () => undefined });
    closers.push(() => queues.close());
    const config = {
      queues: ['drain-idle'],
      workerConcurrency: 1,
      httpAllowPrivate: true,
      httpAllowHosts: [],
      runLeaseMs: RUN_LEASE_MS,
    } as unknown as WeftConfig;
    const worker = new TaskProcessor(coordinator, queues, config, { heartbeatMs: 500, drainMs: 1_000 });
    await worker.start(['drain-idle']);
    const row = async (taskId: string) =>
      (
        await withTenant(db.ds, tenantId, (m) =>
          sql<{ status: string; lease_token: string | null }>(m, `SELECT status, lease_token FROM tasks WHERE tenant_id = $1 AND id = $2`, [tenantId, taskId]),
        )
      ).rows[0]!;

    const long = await publishWorkflow(db.ds, tenantId, def([http('long', { url: `${svc.base}/long` })]), { workflowId: 'held' });
    await coordinator.runs.startRun(tenantId, { workflowId: long.workflowId });
    const longJob = dispatcher.last('long');
    const holding = worker.process(longJob, { dueAt: Date.now(), queue: 'http' });
    await eventually('the worker calls /long', async () => svc.hitCount('/long') === 1);
    const late = await publishWorkflow(db.ds, tenantId, def([http('late', { url: `${svc.base}/short/late` })]), { workflowId: 'late' });
    await coordinator.runs.startRun(tenantId, { workflowId: late.workflowId });
    const lateJob = dispatcher.last('late');

    const stopping = worker.beforeApplicationShutdown();
    expect(await worker.process(lateJob, { dueAt: Date.now(), queue: 'http' })).toEqual({ handBack: lateJob });
    expect(await row(lateJob.taskId)).toEqual({ status: 'PENDING', lease_token: null }); // never claimed
    expect(svc.hitCount('/short/late')).toBe(0);

    expect(await holding).toEqual({ handBack: longJob });
    await stopping;
    expect(await row(longJob.taskId)).toEqual({ status: 'PENDING', lease_token: null });
  });
});

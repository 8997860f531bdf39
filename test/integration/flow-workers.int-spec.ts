import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { RunRepository } from '@weft/persistence';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, queuePrefix, type WeftConfig } from '@weft/platform';
import { Scheduler } from '@weft/scheduler';
import { TaskProcessor } from '@weft/worker';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, MemoryLogger, publishWorkflow, RecordingPublisher } from '../support/builders.js';
import { killWorker, spawnWorker } from '../support/spawn-worker.js';
import { eventually, flushInstallation, sleep } from '../support/faults.js';

/**
 * Node flow limits with real worker processes: a concurrency limit holds across two worker
 * processes, the slot of a SIGKILLed worker's attempt is recovered without ever running two
 * attempts of the key at once, and a rate limit holds across a worker restart and the loss of
 * every Redis key of the installation. The decisions are the database's; the workers are separate
 * processes started from the sources (but the one that takes over from a killed worker, which runs
 * here); this process plays the API (a coordinator on Bull) and the scheduler (its pollers: the
 * backlog poll and the lease sweep). Real PostgreSQL, real Redis under
 * this database's own key prefix, a local HTTP service whose answers the test gives.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TIMEOUT = 120_000;

let db: TestDatabase;
/** What a test started (processes, services, pollers), stopped after it, the last started first. */
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});
afterAll(async () => {
  await db?.drop();
});

/**
 * An HTTP service on 127.0.0.1 that records every request's path and arrival time and how many
 * were open at once. While `hold` is on, requests wait until `answerOldest()` (or `release()`,
 * which also turns holding off); otherwise they are answered at once with `{path}`.
 */
async function flowService(hold: boolean) {
  const arrivals: { path: string; at: number }[] = [];
  const held: { path: string; res: ServerResponse }[] = [];
  let open = 0;
  let maxOpen = 0;
  const reply = (path: string, res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    req.resume();
    arrivals.push({ path, at: Date.now() });
    maxOpen = Math.max(maxOpen, ++open);
    res.once('close', () => open--); // answered, or the worker went away
    if (hold) held.push({ path, res });
    else reply(path, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const svc = {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    /** Requests open now (held, or not yet fully answered). */
    open: () => open,
    /** The most requests open at once so far. */
    maxOpen: () => maxOpen,
    /** Requests to exactly `path`. */
    count: (path: string) => arrivals.filter((a) => a.path === path).length,
    answerOldest() {
      const h = held.shift();
      if (!h) throw new Error('no request is held');
      reply(h.path, h.res);
    },
    release() {
      hold = false;
      for (const h of held.splice(0)) if (!h.res.destroyed) reply(h.path, h.res);
    },
    async close() {
      svc.release();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  closers.push(() => svc.close());
  return svc;
}

/** A worker process consuming `queue` with `concurrency` slots; SIGKILLed after the test at the latest. */
async function startWorker(queue: string, concurrency: number, leases: Leases): Promise<ChildProcess> {
  const { child } = await spawnWorker({
    DATABASE_URL: db.url,
    DATABASE_OWNER_URL: db.ownerUrl,
    REDIS_URL,
    WEFT_QUEUES: queue,
    WEFT_WORKER_CONCURRENCY: String(concurrency),
    WEFT_JOB_LOCK_MS: String(leases.lockMs),
    WEFT_RUN_LEASE_MS: String(leases.runLeaseMs),
    WEFT_DISPATCH_LEASE_MS: String(leases.dispatchLeaseMs),
    WEFT_HTTP_ALLOW_PRIVATE: '1',
    WEFT_LOG_LEVEL: 'warn',
  });
  closers.push(() => killWorker(child));
  return child;
}

/** A worker in this process (its own Bull connections and coordinator) consuming `queue` with `concurrency` slots; drained after the test. */
function inProcessWorker(queue: string, concurrency: number, leases: Leases): void {
  const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: leases.lockMs, onError: () => undefined });
  const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), {
    logger: new MemoryLogger(),
    runLeaseMs: leases.runLeaseMs,
    dispatchLeaseMs: leases.dispatchLeaseMs,
  });
  const config = {
    queues: [queue],
    workerConcurrency: concurrency,
    httpAllowPrivate: true,
    httpAllowHosts: [],
    runLeaseMs: leases.runLeaseMs,
    drainSeconds: 1,
  };
  const worker = new TaskProcessor(coordinator, queues, config as unknown as WeftConfig);
  void worker.start();
  closers.push(async () => {
    await worker.beforeApplicationShutdown();
    await queues.close();
  });
}

/** Bull's job lock, the run lease and the dispatch lease, ms. */
interface Leases {
  lockMs: number;
  runLeaseMs: number;
  dispatchLeaseMs: number;
}

/**
 * A tenant, a coordinator on Bull (the API's side) and the scheduler's pollers in this process,
 * polling every 200 ms: the backlog poll and the lease sweep run as in production.
 */
async function platform(queue: string, leases: Leases) {
  const { tenantId } = await createTenant(db.ds);
  const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: leases.lockMs, onError: () => undefined });
  const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), {
    logger: new MemoryLogger(),
    runLeaseMs: leases.runLeaseMs,
    dispatchLeaseMs: leases.dispatchLeaseMs,
  });
  const scheduler = Scheduler.create(coordinator, { schedulerIntervalMs: 200 } as WeftConfig, queues);
  scheduler.start();
  closers.push(async () => {
    await scheduler.stop();
    await queues
      .queue(queue)
      .obliterate({ force: true })
      .catch(() => undefined);
    await queues.close();
  });
  const runs = new RunRepository(db.ds);
  return {
    tenantId,
    async start(definition: ReturnType<typeof def>, input: object = {}) {
      const { workflowId } = await publishWorkflow(db.ds, tenantId, definition);
      return (await coordinator.runs.startRun(tenantId, { workflowId, input: input as never })).runId;
    },
    async runStatus(runId: string) {
      return (await runs.findRun(tenantId, runId))!.status;
    },
    /**
     * The run's worker attempts with a node limit (read as the owner; not a `for_each` node's own
     * task): status, attempt, and the hold of the backlog row it waits in, if any.
     */
    async tasks(runId: string) {
      return (await db.owner.query(
        `SELECT t.status, t.attempt, o.hold_reason FROM tasks t
           LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id AND o.enqueued_at IS NULL
          WHERE t.tenant_id = $1 AND t.run_id = $2 AND (t.flow_concurrency_key IS NOT NULL OR t.flow_rate_key IS NOT NULL)
          ORDER BY t.iteration NULLS FIRST, t.created_at`,
        [tenantId, runId],
      )) as { status: string; attempt: number; hold_reason: string | null }[];
    },
  };
}

/**
 * Samples, until stopped, how many attempts hold a slot of node key `key` (PENDING or RUNNING
 * task rows, as the dispatch function counts them); `max` is the most seen. A sample, not a proof:
 * the service's own count of open requests is the exact figure.
 */
function slotSampler(tenantId: string, key: string) {
  let max = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const [row] = (await db.owner.query(
        `SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1 AND flow_concurrency_key = $2 AND status IN ('PENDING', 'RUNNING')`,
        [tenantId, key],
      )) as { n: number }[];
      max = Math.max(max, row!.n);
      await sleep(20);
    }
  })();
  closers.push(async () => {
    stopped = true;
    await loop;
  });
  return {
    max: () => max,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

describe('a node concurrency limit across worker processes', () => {
  it(
    'never lets more than `limit` attempts of the key run, with more free worker slots than that',
    async () => {
      const queue = 'flow-partner';
      const leases = { lockMs: 10_000, runLeaseMs: 10_000, dispatchLeaseMs: 10_000 };
      const svc = await flowService(true);
      const p = await platform(queue, leases);
      // Two worker processes with 3 slots each: 6 slots for 6 attempts; only the limit holds them back.
      await Promise.all([startWorker(queue, 3, leases), startWorker(queue, 3, leases)]);
      const slots = slotSampler(p.tenantId, 'partner');
      const runId = await p.start(
        def([
          http(
            'call',
            { url: `${svc.base}/partner/{{ item }}`, timeout_seconds: 120 },
            { queue, for_each: '{{ input.items }}', concurrency: { key: 'partner', limit: 2 } },
          ),
        ]),
        { items: [1, 2, 3, 4, 5, 6] },
      );

      const heldByLimit = async () => (await p.tasks(runId)).filter((t) => t.status === 'QUEUED' && t.hold_reason === 'CONCURRENCY_LIMIT').length;
      await eventually(
        'two requests are in flight and four attempts are held by the limit',
        async () => svc.open() === 2 && (await heldByLimit()) === 4,
        30_000,
      );
      expect((await p.tasks(runId)).filter((t) => t.status === 'RUNNING')).toHaveLength(2);
      // A held row is looked at again after 5 s: wait for a re-examination (its held_until moves), still held.
      const [before] = (await db.owner.query(`SELECT max(held_until) AS at FROM outbox WHERE tenant_id = $1 AND run_id = $2`, [p.tenantId, runId])) as {
        at: Date;
      }[];
      await eventually(
        'a held row is looked at again',
        async () => {
          const [now] = (await db.owner.query(`SELECT max(held_until) AS at FROM outbox WHERE tenant_id = $1 AND run_id = $2 AND hold_reason IS NOT NULL`, [
            p.tenantId,
            runId,
          ])) as {
            at: Date | null;
          }[];
          return now!.at !== null && now!.at.getTime() > before!.at.getTime();
        },
        20_000,
      );
      expect(svc.open()).toBe(2);
      expect(await heldByLimit()).toBe(4);

      // Each answer frees one slot, and exactly one held attempt takes it.
      for (let answered = 1; answered <= 6; answered++) {
        svc.answerOldest();
        const arrived = Math.min(6, answered + 2);
        await eventually(
          `after ${answered} answer(s), ${arrived} requests arrived`,
          async () => svc.arrivals.length === arrived && svc.open() === arrived - answered,
          30_000,
        );
        expect(svc.maxOpen()).toBeLessThanOrEqual(2);
      }
      await eventually('the run ends', async () => (await p.runStatus(runId)) !== 'RUNNING', 30_000);
      await slots.stop();

      expect(await p.runStatus(runId)).toBe('SUCCEEDED');
      expect(svc.maxOpen()).toBe(2);
      expect(slots.max()).toBeLessThanOrEqual(2);
      expect([1, 2, 3, 4, 5, 6].map((i) => svc.count(`/partner/${i}`))).toEqual([1, 1, 1, 1, 1, 1]);
      expect((await p.tasks(runId)).map((t) => `${t.status}/${t.attempt}`)).toEqual(Array(6).fill('COMPLETED/0'));
    },
    TIMEOUT,
  );
});

describe('a node slot held by a worker that is SIGKILLed', () => {
  it(
    'is recovered within the lease; both runs succeed and the key never has two requests in flight',
    async () => {
      const queue = 'flow-solo';
      const leases = { lockMs: 1_500, runLeaseMs: 1_500, dispatchLeaseMs: 1_500 };
      const svc = await flowService(true);
      const p = await platform(queue, leases);
      const workerA = await startWorker(queue, 2, leases);
      const slots = slotSampler(p.tenantId, 'solo');
      const one = def([http('a', { url: `${svc.base}/solo/{{ input.n }}`, timeout_seconds: 120 }, { queue, concurrency: { key: 'solo', limit: 1 } })]);

      const first = await p.start(one, { n: 1 });
      await eventually('worker A executes run 1', async () => svc.count('/solo/1') === 1 && (await p.tasks(first))[0]?.status === 'RUNNING', 30_000);
      const second = await p.start(one, { n: 2 });
      await eventually('run 2 is held by the limit', async () => (await p.tasks(second))[0]?.hold_reason === 'CONCURRENCY_LIMIT', 30_000);

      inProcessWorker(queue, 2, leases); // idle: the only slot of the key is A's
      await killWorker(workerA);
      svc.release(); // from now on every request is answered at once

      await eventually('both runs end', async () => (await p.runStatus(first)) !== 'RUNNING' && (await p.runStatus(second)) !== 'RUNNING', 60_000);
      await slots.stop();
      expect([await p.runStatus(first), await p.runStatus(second)]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
      // Run 1 was executed again by the second worker (A's request died with A), run 2 once, after run 1's attempt ended.
      expect([svc.count('/solo/1'), svc.count('/solo/2')]).toEqual([2, 1]);
      const order = svc.arrivals.map((a) => a.path);
      expect(order.lastIndexOf('/solo/1')).toBeLessThan(order.indexOf('/solo/2'));
      expect(svc.maxOpen()).toBe(1);
      expect(slots.max()).toBe(1);
    },
    TIMEOUT,
  );
});

describe('a node rate limit across a worker restart and a Redis flush', () => {
  it(
    'admits at most `limit` starts per window by the database clock, and all attempts still run',
    async () => {
      const queue = 'flow-api';
      const leases = { lockMs: 2_000, runLeaseMs: 2_000, dispatchLeaseMs: 1_500 };
      const svc = await flowService(false);
      const p = await platform(queue, leases);
      const redis = new Redis(REDIS_URL);
      closers.push(async () => redis.disconnect());
      const first = await startWorker(queue, 3, leases);
      const runId = await p.start(
        def([
          http('call', { url: `${svc.base}/api/{{ item }}` }, { queue, for_each: '{{ input.items }}', rate_limit: { key: 'api', limit: 2, per_seconds: 3 } }),
        ]),
        { items: [1, 2, 3, 4, 5, 6] },
      );
      const starts = async () =>
        (await db.owner.query(`SELECT started_at FROM flow_rate_starts WHERE tenant_id = $1 AND rate_key = 'api' ORDER BY started_at`, [p.tenantId])) as {
          started_at: Date;
        }[];

      await eventually(
        'the first two calls arrive and complete',
        async () => svc.arrivals.length === 2 && (await p.tasks(runId)).filter((t) => t.status === 'COMPLETED').length === 2,
        30_000,
      );
      await killWorker(first);
      // The next window admits two more while no worker runs: their jobs wait in Redis, and are lost
      // with it. Admitted, they are the window's next starts: nothing more is admitted meanwhile.
      await eventually('the next two attempts are admitted', async () => (await p.tasks(runId)).filter((t) => t.status === 'PENDING').length === 2, 30_000);
      expect((await p.tasks(runId)).filter((t) => t.status === 'QUEUED')).toHaveLength(2);
      expect(await starts()).toHaveLength(2);
      expect(svc.arrivals).toHaveLength(2);
      expect(await flushInstallation(redis, db.url)).toBeGreaterThan(0);
      await startWorker(queue, 3, leases);

      await eventually('the run ends', async () => (await p.runStatus(runId)) !== 'RUNNING', 60_000);
      expect(await p.runStatus(runId)).toBe('SUCCEEDED');
      expect([1, 2, 3, 4, 5, 6].map((i) => svc.count(`/api/${i}`))).toEqual([1, 1, 1, 1, 1, 1]);

      // The database's starts, one per claim: no window of 3 s holds more than 2 (the third start
      // after any start is at least 3 s later).
      const [crowding] = (await db.owner.query(
        `SELECT count(*)::int AS starts, count(*) FILTER (WHERE started_at - lag2 < interval '3 seconds')::int AS crowded
         FROM (SELECT started_at, lag(started_at, 2) OVER (ORDER BY started_at) AS lag2 FROM flow_rate_starts WHERE tenant_id = $1 AND rate_key = 'api') s`,
        [p.tenantId],
      )) as { starts: number; crowded: number }[];
      expect(crowding).toEqual({ starts: 6, crowded: 0 });
      // Each request follows its claim by the time its worker takes to send it (bench:fairness
      // measures the arrivals' windows); the jobs lost with Redis were not sent twice.
      expect(svc.arrivals).toHaveLength(6);
    },
    TIMEOUT,
  );
});

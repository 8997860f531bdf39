import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { RunRepository, sql, withTenant } from '@weft/persistence';
import { type WorkflowDefinition } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues, loadConfig, queuePrefix } from '@weft/platform';
import { startPlatform, type RunningPlatform } from '@weft/cli';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http, MemoryLogger, publishWorkflow, RecordingPublisher, wait } from '../support/builders.js';
import { eventually, flushInstallation, stubServer } from '../support/faults.js';

/**
 * Redis is only a transport: a worker and a scheduler run in this process on
 * real PostgreSQL and Redis; runs are caught in every state a job can be in — executing, waiting
 * on the queue, delayed for a retry, not yet dispatched (a WAIT) — when every Redis key of this
 * installation is deleted (a FLUSHALL of its own keys only: other suites share this Redis). Every
 * run still finishes, and every task completes once.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

let db: TestDatabase;
let platform: RunningPlatform | undefined;
let queues: BullTaskQueues;
let redis: Redis;
let service: Awaited<ReturnType<typeof stubServer>>;
/** Requests to /hold/… wait here until released. */
const held: ServerResponse[] = [];
let releaseHolds = false;

beforeAll(async () => {
  db = await createTestDatabase();
  service = await stubServer((req, res, n) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/hold/') && !releaseHolds) return void held.push(res);
    if (path === '/flaky' && n === 1) return void res.writeHead(503).end('try again');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
  });
  const config = loadConfig(
    {},
    {
      DATABASE_URL: db.url,
      DATABASE_OWNER_URL: db.ownerUrl,
      REDIS_URL,
      WEFT_QUEUES: 'http',
      WEFT_WORKER_CONCURRENCY: 2,
      WEFT_HTTP_ALLOW_PRIVATE: 'true',
      WEFT_SCHEDULER_INTERVAL_MS: 50,
      WEFT_DISPATCH_LEASE_MS: 1_000,
      WEFT_RUN_LEASE_MS: 1_500,
      WEFT_JOB_LOCK_MS: 1_500,
      WEFT_LOG_LEVEL: 'error',
    },
  );
  platform = await startPlatform(config, { worker: true, scheduler: true });
  queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: 1_500 });
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  releaseHolds = true;
  for (const res of held) if (!res.writableEnded) res.writeHead(200).end('{}');
  await platform?.close();
  await queues?.close();
  await service?.close();
  redis?.disconnect();
  await db?.drop();
});

describe('after every Redis key of the installation is lost', () => {
  it('every run still finishes, and every task completes once', async () => {
    const { tenantId } = await createTenant(db.ds);
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { logger: new MemoryLogger(), dispatchLeaseMs: 1_000, runLeaseMs: 1_500 });
    const runs = new RunRepository(db.ds);
    const url = (path: string) => `${service.base}${path}`;
    const start = async (definition: WorkflowDefinition, input: object = {}) => {
      const { workflowId } = await publishWorkflow(db.ds, tenantId, definition);
      return (await coordinator.runs.startRun(tenantId, { workflowId, input: input as never })).runId;
    };
    const task = async (runId: string, nodeId = 'a') => {
      const r = await withTenant(db.ds, tenantId, (m) =>
        sql<{ status: string; attempt: number }>(m, `SELECT status, attempt FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = $3`, [
          tenantId,
          runId,
          nodeId,
        ]),
      );
      return r.rows[0];
    };
    const q = queues.queue('http');

    // A retry waiting out its backoff, held in its queue's backlog.
    const retrying = await start(def([http('a', { url: url('/flaky') }, { retry: { max_attempts: 3, backoff_seconds: 2 } })]));
    await eventually('the first attempt failed and the retry is held', async () => {
      const t = await task(retrying);
      return t?.attempt === 1 && t.status === 'QUEUED';
    });
    // Two tasks executing: both worker slots busy.
    const holding = [
      await start(def([http('a', { url: '{{input.url}}' })]), { url: url('/hold/1') }),
      await start(def([http('a', { url: '{{input.url}}' })]), { url: url('/hold/2') }),
    ];
    await eventually('both worker slots execute', async () => held.length === 2);
    // Four runs whose first job waits on the queue, and one in a WAIT.
    const chained = def([http('a', { url: url('/ok') }), http('b', { url: url('/ok') })], [edge('a', 'b')]);
    const queued = [await start(chained), await start(chained), await start(chained), await start(chained)];
    const waiting = await start(def([wait('w', 1), http('b', { url: url('/ok') })], [edge('w', 'b')]));
    expect(await q.getWaitingCount()).toBe(4);

    expect(await flushInstallation(redis, db.url)).toBeGreaterThan(0);
    expect(await q.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, active: 0 });
    releaseHolds = true;
    for (const res of held) res.writeHead(200, { 'content-type': 'application/json' }).end('{"held":true}');

    const all = [retrying, ...holding, ...queued, waiting];
    await eventually(
      'every run ends',
      async () => (await Promise.all(all.map((id) => runs.findRun(tenantId, id)))).every((r) => TERMINAL.includes(r!.status)),
      30_000,
      100,
    );
    for (const id of all) expect({ id, status: (await runs.findRun(tenantId, id))!.status }).toEqual({ id, status: 'SUCCEEDED' });

    // Each node completed once: one applied NodeCompleted per node.
    for (const id of all) {
      const applied = (await runs.eventsOfRun(tenantId, id)).filter((e) => e.type === 'NodeCompleted' && e.ignored === null).map((e) => e.nodeId);
      expect(applied.sort()).toEqual([...new Set(applied)].sort());
    }
    // Nothing ran twice: the executing tasks kept their leases, the lost jobs ran once each.
    expect(service.count('/hold/1')).toBe(1);
    expect(service.count('/hold/2')).toBe(1);
    expect(service.count('/ok')).toBe(4 * 2 + 1);
    expect(service.count('/flaky')).toBe(2);
  });
});

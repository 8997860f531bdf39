import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunCoordinator } from '@weft/engine/coordinator';
import { AttemptLogRepository, RunRepository } from '@weft/persistence';
import { BullTaskQueues, queuePrefix } from '@weft/platform';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, publishWorkflow, RecordingPublisher } from '../support/builders.js';
import { eventually } from '../support/faults.js';
import { killWorker, spawnWorker, type SpawnedWorker } from '../support/spawn-worker.js';

/**
 * A worker is SIGKILLed while its CODE attempt prints: that execution reports nothing, so it
 * leaves no logs; the attempt is executed again by the next worker, whose logs (and only those)
 * are stored for it, capped, with its error. Real worker processes, PostgreSQL and Redis.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOCK_MS = 1_500;
const RUN_LEASE_MS = 1_500;
const QUEUE = 'logs-death';
const asRoot = process.getuid?.() === 0;

/** Prints `tick N of PID` every 20 ms, until its 4 s timeout. */
const TICKER = `
import os, time
def handler(input):
    i = 0
    while True:
        print("tick %d of %d" % (i, os.getpid()), flush=True)
        i += 1
        time.sleep(0.02)
`;

let db: TestDatabase;
let scratch: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  scratch = await mkdtemp(join(tmpdir(), 'weft-logs-death-'));
  await chmod(scratch, 0o1777);
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
  await db?.drop();
});

function startWorker(): Promise<SpawnedWorker> {
  return spawnWorker({
    TMPDIR: scratch,
    DATABASE_URL: db.url,
    DATABASE_OWNER_URL: db.ownerUrl,
    REDIS_URL,
    WEFT_QUEUES: QUEUE,
    WEFT_WORKER_CONCURRENCY: '1',
    WEFT_JOB_LOCK_MS: String(LOCK_MS),
    WEFT_RUN_LEASE_MS: String(RUN_LEASE_MS),
    WEFT_LOG_LEVEL: 'warn',
  });
}

(asRoot ? describe : describe.skip)('attempt logs and a worker that dies', () => {
  it("keeps no logs of the killed execution and the logs of the attempt's next execution", async () => {
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: LOCK_MS, onError: () => undefined });
    closers.push(() => queues.close());
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { runLeaseMs: RUN_LEASE_MS });
    const runs = new RunRepository(db.ds);
    const logs = new AttemptLogRepository(db.ds);
    const t = await createTenant(db.ds, 'dying-logs');
    const wf = await publishWorkflow(
      db.ds,
      t.tenantId,
      def([{ node_id: 'ticker', type: 'CODE', runtime: 'python', queue: QUEUE, retry: { max_attempts: 1 }, spec: { code: TICKER, timeout_seconds: 4 } }]),
    );

    const first = await startWorker();
    closers.push(() => killWorker(first.child));
    const { runId } = await coordinator.runs.startRun(t.tenantId, { workflowId: wf.workflowId });
    await eventually('the attempt runs on the first worker', async () => (await runs.findRun(t.tenantId, runId))?.status === 'RUNNING', 30_000);
    // Let it print for a while, then kill its worker mid-output.
    await new Promise((r) => setTimeout(r, 1_000));
    await killWorker(first.child);

    const second = await startWorker();
    closers.push(() => killWorker(second.child));
    await eventually('the run ends', async () => ['SUCCEEDED', 'FAILED'].includes((await runs.findRun(t.tenantId, runId))!.status), 60_000);
    const run = await runs.findRun(t.tenantId, runId);
    expect(run!.status).toBe('FAILED');
    const [task] = await db.owner.query(`SELECT id, attempt FROM tasks WHERE run_id = $1 AND node_id = 'ticker'`, [runId]);
    const rows = await logs.ofTasks(t.tenantId, [task.id]);
    // One execution reported: the one that ran to its timeout.
    expect(rows.map((r) => r.attempt)).toEqual([task.attempt]);
    const [row] = rows;
    expect(row!.error).toMatch(/timed out/);
    // One execution's output, from its start: not the killed one's joined to it.
    expect(row!.logs).toMatch(/^tick 0 of \d+\n/);
    expect(row!.logs.match(/^tick 0 /gm)).toHaveLength(1);
    expect(Buffer.byteLength(row!.logs)).toBeLessThanOrEqual(64 * 1024);
    // Another tenant reads nothing of it.
    const other = await createTenant(db.ds, 'other');
    expect(await logs.ofTasks(other.tenantId, [task.id])).toEqual([]);
  });
});

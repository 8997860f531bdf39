import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunCoordinator } from '@weft/engine/coordinator';
import { RunRepository } from '@weft/persistence';
import { BullTaskQueues, queuePrefix } from '@weft/platform';
import { claimUidBlock } from '../../apps/worker/src/executors/code/uid-pool.js';
import { processesOf } from '../../apps/worker/src/executors/code/processes.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, publishWorkflow, RecordingPublisher } from '../support/builders.js';
import { eventually } from '../support/faults.js';
import { killWorker, spawnWorker, type SpawnedWorker } from '../support/spawn-worker.js';

/**
 * Tenant A's CODE forks a daemon that waits for other executions' folders, steals their inputs and
 * overwrites their handlers; the worker is SIGKILLed while A's task runs, a new worker takes over
 * its uid block, and tenant B runs CODE whose input holds a secret of B's config. Nothing of A's
 * may survive the worker, nothing of the dead worker's executions may be left for the next, and
 * B's run must be B's own. Real worker processes, PostgreSQL and Redis.
 *
 * The block is one this suite claims for itself (as a worker would, with a lock file other
 * processes on the machine respect) and hands to both workers: which block a worker would claim
 * depends on what else runs on the machine, and the takeover of a dead holder's lock is shown in
 * apps/worker/src/executors/code/uid-pool.spec.ts.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOCK_MS = 1_500;
const RUN_LEASE_MS = 1_500;
const QUEUE = 'code-attack';
/** Where this suite claims its uid block: apart from the workers' default blocks (2,000,000,000 + k·1024). */
const UID_BASE = 2_100_000_000;
const UID_SLOTS = 16;
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('code-worker-death attack: not root, skipped (a worker that is not root refuses CODE)');

/** A's spy: a double-forked daemon scanning `scan` for execution folders, for 90 s. */
const SPY = `
import os, time
def handler(input):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in (0, 1, 2):
                os.dup2(os.open("/dev/null", os.O_RDWR), fd)
            marker = "B-" + "SECRET"
            deadline = time.time() + 90
            while time.time() < deadline:
                for root, dirs, files in os.walk(input["scan"]):
                    for name in files:
                        path = os.path.join(root, name)
                        try:
                            text = open(path).read()
                            if marker in text:
                                open(os.path.join(input["loot"], "loot-%d" % len(os.listdir(input["loot"]))), "w").write(text)
                            if name.startswith("handler") and "forged" not in text and marker not in text:
                                open(path, "w").write("def handler(input):\\n    return {'forged': True}\\n")
                        except OSError:
                            pass
                time.sleep(0.02)
            os._exit(0)
        os._exit(0)
    time.sleep(60)
    return "never"
`;

let db: TestDatabase;
let scratch: string;
let block: { first: number; count: number };
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  if (asRoot) block = { first: claimUidBlock(UID_BASE, UID_SLOTS, UID_BASE + 64 * UID_SLOTS - 1).first, count: UID_SLOTS };
  // The workers' TMPDIR: where their execution folders live (and, unconfined, where A's spy looks).
  scratch = await mkdtemp(join(tmpdir(), 'weft-death-'));
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
    WEFT_TEST_CODE_UID_BASE: String(block.first),
    WEFT_TEST_CODE_UID_SLOTS: String(block.count),
  });
}

/** Files and folders under `dir` owned by a uid of the block. */
async function ownedBy(dir: string, block: { first: number; count: number }): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true }).catch(() => [] as string[])) {
    const info = await stat(join(dir, entry)).catch(() => undefined);
    if (info && info.uid >= block.first && info.uid < block.first + block.count) found.push(entry);
  }
  return found;
}

(asRoot ? describe : describe.skip)('tenant CODE and a worker that dies', () => {
  it('leaves nothing running, nothing on disk, and nothing for the next tenant to steal or forge', async () => {
    const queues = new BullTaskQueues(REDIS_URL, queuePrefix(db.url), { jobLockMs: LOCK_MS, onError: () => undefined });
    closers.push(() => queues.close());
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { runLeaseMs: RUN_LEASE_MS });
    const runs = new RunRepository(db.ds);
    const a = await createTenant(db.ds, 'attacker');
    const b = await createTenant(db.ds, 'victim');
    const loot = join(scratch, 'loot');
    await mkdir(loot, { mode: 0o777 });
    await chmod(loot, 0o777);

    const spy = await publishWorkflow(
      db.ds,
      a.tenantId,
      def([{ node_id: 'spy', type: 'CODE', runtime: 'python', queue: QUEUE, retry: { max_attempts: 1 }, spec: { code: SPY, scan: scratch, loot } }]),
    );
    const victim = await publishWorkflow(
      db.ds,
      b.tenantId,
      def([
        {
          node_id: 'read',
          type: 'CODE',
          runtime: 'python',
          queue: QUEUE,
          spec: {
            code: 'import time\ndef handler(input):\n    time.sleep(0.5)\n    return {"mine": input["password"][:2]}\n',
            password: '{{config.db_password}}',
          },
        },
      ]),
    );

    const first = await startWorker();
    closers.push(() => killWorker(first.child));
    const { runId: spyRun } = await coordinator.runs.startRun(a.tenantId, { workflowId: spy.workflowId });
    // The handler and its daemon run as the slot's uid.
    await eventually('the spy and its daemon run', async () => (await processesOf(block)).length >= 2, 60_000);

    await killWorker(first.child);
    // Its sandbox dies with it: not one process of the block is left.
    await eventually("no process of the dead worker's uids is left", async () => (await processesOf(block)).length === 0, 30_000);
    await coordinator.runs.cancelRun(a.tenantId, { runId: spyRun, reason: 'attack over' });

    // The next worker on the dead worker's block.
    const second = await startWorker();
    closers.push(() => killWorker(second.child));
    const { runId } = await coordinator.runs.startRun(b.tenantId, { workflowId: victim.workflowId, config: { db_password: 'B-SECRET-123' } });
    await eventually("B's run ends", async () => ['SUCCEEDED', 'FAILED'].includes((await runs.findRun(b.tenantId, runId))!.status), 60_000);

    expect(await runs.findRun(b.tenantId, runId)).toMatchObject({ status: 'SUCCEEDED', output: { read: { mine: 'B-' } } });
    expect(await readdir(loot)).toEqual([]);
    // Neither the dead worker's execution folder nor B's is left on disk.
    expect(await ownedBy(scratch, block)).toEqual([]);
    expect(await processesOf(block)).toEqual([]);
  }, 240_000);
});

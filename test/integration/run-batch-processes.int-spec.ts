import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunBatchRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { dropQueueKeys } from '../support/queue-keys.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, waitFor } from '../support/builders.js';
import { killWorker, spawnScheduler, type SpawnedWorker } from '../support/spawn-worker.js';
import { sleep } from '../support/faults.js';

/**
 * A bulk action survives the death of the scheduler working on it: a real `weft scheduler`
 * process (test/support/scheduler-process.ts) is SIGKILLed in the middle of a batch, another one
 * finishes it, and every run was acted on exactly once. The database's clock, real processes.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = 30;

let db: TestDatabase;
const schedulers: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(schedulers.map((s) => killWorker(s.child)));
  await dropQueueKeys(REDIS_URL, db.url);
  await db?.drop();
});

/** Polls batch `id` until `pred` holds (a minute at most: the machine may be loaded). */
async function until(tenantId: string, id: string, pred: (b: { status: string; applied: number }) => boolean, what: string) {
  const repo = new RunBatchRepository(db.ds);
  for (const deadline = Date.now() + 60_000; ;) {
    const b = (await repo.get(tenantId, id))!;
    if (pred(b)) return b;
    if (Date.now() > deadline) throw new Error(`batch ${id} never ${what}: ${JSON.stringify(b)}`);
    await sleep(100);
  }
}

describe('a bulk action and a scheduler that dies', () => {
  it('goes on in another scheduler after a SIGKILL, acting on each run once', async () => {
    // The database's clock (no test clock): the processes read it too.
    const h = await coordinatorHarness(db.ds, { now: undefined });
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    for (let i = 0; i < RUNS; i++) await h.coordinator.runs.startRun(h.tenantId, { workflowId, labels: { wave: 'one' } });
    const { batch } = await h.coordinator.batches.create(h.tenantId, {
      action: 'PAUSE',
      filter: { labels: { wave: 'one' } },
      filterJson: {},
      reason: 'freeze',
    });
    expect(batch.total).toBe(RUNS);

    const env = {
      DATABASE_URL: db.url,
      DATABASE_OWNER_URL: db.ownerUrl,
      REDIS_URL,
      WEFT_SCHEDULER_INTERVAL_MS: '100',
      WEFT_BATCH_RUNS_PER_SECOND: '5',
      WEFT_LOG_LEVEL: 'warn',
    };
    const first = await spawnScheduler(env);
    schedulers.push(first);
    await until(h.tenantId, batch.id, (b) => b.applied >= 5, 'acted on 5 runs');
    await killWorker(first.child);
    const cut = await new RunBatchRepository(db.ds).get(h.tenantId, batch.id);
    expect(cut!.status).toBe('RUNNING');
    expect(cut!.applied).toBeLessThan(RUNS);

    schedulers.push(await spawnScheduler(env));
    const done = await until(h.tenantId, batch.id, (b) => b.status !== 'RUNNING', 'completed');
    expect(done).toMatchObject({ status: 'COMPLETED', total: RUNS, applied: RUNS, skipped: 0, failed: 0 });

    const pauses = (await db.owner.query(
      `SELECT run_id, count(*)::int AS n FROM run_events WHERE type = 'RunPaused' AND payload->>'batchId' = $1 GROUP BY run_id`,
      [batch.id],
    )) as { run_id: string; n: number }[];
    expect(pauses).toHaveLength(RUNS);
    expect(pauses.filter((p) => p.n !== 1)).toEqual([]);
    const paused = (await db.owner.query(`SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND paused_at IS NOT NULL`, [h.tenantId])) as {
      n: number;
    }[];
    expect(paused[0]!.n).toBe(RUNS);
  }, 180_000);
});

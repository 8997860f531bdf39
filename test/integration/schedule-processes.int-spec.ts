import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { dropQueueKeys } from '../support/queue-keys.js';
import { createTenant, def, http, publishWorkflow } from '../support/builders.js';
import { killWorker, spawnScheduler, type SpawnedWorker } from '../support/spawn-worker.js';
import { sleep } from '../support/faults.js';
import { insertSchedule, runsOfSchedule, scheduleRow } from '../support/schedules.js';

/**
 * Two real `weft scheduler` processes (test/support/scheduler-process.ts, straight from the
 * sources) over one database for a minute of real time: an every-second schedule fires each
 * nominal time exactly once — no duplicate, no gap — and its fired count is its run count.
 * schedules.int-spec.ts races two in-process replicas on a hand-moved clock; this one has the
 * processes' own timers, pools and the database's clock. The workflow's one node goes to a queue
 * no worker serves, so every run stays active (and `allow_all` starts the next beside it). Redis
 * is shared, under this database's own key prefix (queuePrefix), removed at the end.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** How long the two schedulers fire, in real time. */
const FIRE_MS = 60_000;

let db: TestDatabase;
const schedulers: SpawnedWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  // Whatever failed: no scheduler outlives the suite, and nothing of this database stays in Redis.
  await Promise.all(schedulers.map((s) => killWorker(s.child)));
  await dropQueueKeys(REDIS_URL, db.url);
  await db?.drop();
});

/** SIGTERMs `child` and resolves how it exited (within 30 s, else it is SIGKILLed and this throws). */
async function stop(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode };
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 30_000)));
  child.kill('SIGTERM');
  const result = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (result === 'late') {
    await killWorker(child);
    throw new Error(`scheduler process ${child.pid} did not exit within 30 s of SIGTERM`);
  }
  return result;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('two scheduler processes', () => {
  it('fire each nominal time of an every-second schedule exactly once for a minute of real time', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a', undefined, { queue: 'nobody-serves-this' })]));
    const env = {
      DATABASE_URL: db.url,
      DATABASE_OWNER_URL: db.ownerUrl,
      REDIS_URL,
      WEFT_SCHEDULER_INTERVAL_MS: '250',
      WEFT_LOG_LEVEL: 'warn',
    };
    // Pushed as each is ready, so afterAll kills it even when the other one fails to start.
    await Promise.all([0, 1].map(async () => schedulers.push(await spawnScheduler(env))));

    const s = await insertSchedule(db.ds, tenantId, workflowId, { intervalSeconds: 1, overlapPolicy: 'allow_all' }, new Date());
    await sleep(FIRE_MS);
    const exits = await Promise.all(schedulers.map((p) => stop(p.child)));
    const output = schedulers.map((p, i) => `--- scheduler ${i} (pid ${p.child.pid}):\n${p.output()}`).join('\n');

    // Each stopped on SIGTERM (Nest's shutdown hooks re-raise it once the pollers stopped), neither crashed.
    const sigterm = { code: null, signal: 'SIGTERM' };
    expect({ exits, output }).toEqual({ exits: [sigterm, sigterm], output: expect.any(String) });

    const nominals = (await runsOfSchedule(db.ds, tenantId, s.id)).map((r) => r.nominal);
    const first = nominals.length > 0 ? new Date(nominals[0]!).getTime() : 0;
    // No nominal time twice, and every second from the first to the last.
    expect(new Set(nominals).size).toBe(nominals.length);
    expect(nominals).toEqual(Array.from({ length: nominals.length }, (_, k) => iso(first + k * 1000)));
    // A minute at one per second, less the start-up (the only bound on timing).
    expect(nominals.length).toBeGreaterThanOrEqual(50);
    expect((await scheduleRow(db.ds, tenantId, s.id)).firedCount).toBe(nominals.length);
  }, 150_000);
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type JsonValue } from '@weft/engine';
import { RunCoordinator, type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http, MemoryLogger, publishWorkflow, RecordingDispatcher, RecordingPublisher, wait } from '../support/builders.js';
import { duplicateJobs, eventually, openReplica, sleep, type Replica } from '../support/faults.js';

/**
 * Several scheduler replicas at once: each replica has its own pool
 * and coordinator, as separate `weft scheduler` processes would, and they all loop over
 * the due timers and the outbox relay at the same time over the same due timers and unsent outbox rows.
 * Whatever the interleaving, every timer is applied once and every outbox row is enqueued once.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const RUNS = 100;
const REPLICAS = 3;

/** A tenant with `RUNS` runs parked on a 1 s WAIT and `RUNS` runs whose first attempt waits in its queue's backlog. */
async function parkedRuns() {
  const { tenantId } = await createTenant(db.ds);
  // The API's coordinator sees no worker on the queue and may leave no job waiting for one:
  // every attempt it dispatches stays in the backlog.
  const api = new RunCoordinator(db.ds, new RecordingDispatcher(), new RecordingPublisher(), { logger: new MemoryLogger(), dispatchWindowFloor: 0 });
  const unsent = await publishWorkflow(db.ds, tenantId, def([http('a')]));
  const waiting = await publishWorkflow(db.ds, tenantId, def([wait('w', 1), http('b')], [edge('w', 'b')]));
  const start = async (workflowId: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, n - i) }, () => api.runs.startRun(tenantId, { workflowId: workflowId, input: { i } as JsonValue })),
      );
      ids.push(...batch.map((r) => r.runId));
    }
    return ids;
  };
  const unsentRuns = await start(unsent.workflowId, RUNS);
  const waitingRuns = await start(waiting.workflowId, RUNS);
  return { tenantId, unsentRuns, waitingRuns };
}

/** Counts over every tenant, read as the owner (row-level security does not hold the superuser). */
async function pending() {
  const [r] = (await db.owner.query(
    `SELECT (SELECT count(*)::int FROM tasks WHERE status = 'WAITING') AS waiting,
            (SELECT count(*)::int FROM outbox WHERE enqueued_at IS NULL) AS unsent`,
  )) as { waiting: number; unsent: number }[];
  return r!;
}

/**
 * Runs every replica's scheduler loop (timers then outbox, `batch` rows each) concurrently until
 * nothing is waiting or unsent, then `extraRounds` more rounds each — a replica that would fire or
 * relay something twice gets its chance. Returns what each replica fired and relayed.
 */
async function schedulersRace(replicas: Replica[], batch: number, extraRounds = 3) {
  let drained = false;
  const monitor = (async () => {
    await eventually(
      'timers fired and outbox relayed',
      async () => {
        const p = await pending();
        return p.waiting === 0 && p.unsent === 0;
      },
      15_000,
      20,
    );
    drained = true;
  })();
  const loops = replicas.map(async (r) => {
    const did = { fired: 0, relayed: 0 };
    let after = 0;
    while (after < extraRounds) {
      if (drained) after++;
      did.fired += await r.coordinator.timers.fireDue(batch);
      did.relayed += await r.coordinator.outbox.relay(batch);
    }
    return did;
  });
  await monitor;
  return Promise.all(loops);
}

/** Per run: how many TimerFired were applied (not ignored, no error) and how many were recorded as ignored. */
async function timerEvents(runIds: string[]) {
  const rows = (await db.owner.query(
    `SELECT run_id, count(*) FILTER (WHERE ignored IS NULL AND error IS NULL)::int AS applied,
            count(*) FILTER (WHERE ignored IS NOT NULL)::int AS ignored
       FROM run_events WHERE type = 'TimerFired' AND run_id = ANY($1::uuid[]) GROUP BY run_id`,
    [runIds],
  )) as { run_id: string; applied: number; ignored: number }[];
  return new Map(rows.map((r) => [r.run_id, r]));
}

async function taskStatuses(runIds: string[], nodeId: string): Promise<Record<string, number>> {
  const rows = (await db.owner.query(`SELECT status, count(*)::int AS n FROM tasks WHERE run_id = ANY($1::uuid[]) AND node_id = $2 GROUP BY status`, [
    runIds,
    nodeId,
  ])) as { status: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function replicas(opts: RunCoordinatorOptions): Promise<Replica[]> {
  // Nothing claims the replicas' jobs: admit every attempt however many wait for a worker.
  const rs = await Promise.all(Array.from({ length: REPLICAS }, () => openReplica(db.url, { poolSize: 3, dispatchWindowFloor: 1_000_000, ...opts })));
  await Promise.all(rs.map((r) => r.warm(3)));
  return rs;
}

describe('scheduler replicas running at once', () => {
  it(`fire each of ${RUNS} due timers once and admit each of ${RUNS} backlog rows once`, async () => {
    const { unsentRuns, waitingRuns } = await parkedRuns();
    expect(await pending()).toEqual({ waiting: RUNS, unsent: RUNS });
    // The WAITs (1 s) must be due.
    const rs = await replicas({});
    try {
      await sleep(1100);
      const did = await schedulersRace(rs, 7);

      // Every timer applied exactly once; with leases, no replica even fired one twice.
      const timers = await timerEvents(waitingRuns);
      expect(waitingRuns.filter((id) => timers.get(id)?.applied !== 1)).toEqual([]);
      expect([...timers.values()].reduce((n, t) => n + t.ignored, 0)).toBe(0);
      expect(did.reduce((n, d) => n + d.fired, 0)).toBe(RUNS);
      expect(await taskStatuses(waitingRuns, 'w')).toEqual({ COMPLETED: RUNS });

      // Each successor dispatched once, by whichever replica admitted it; each waiting attempt admitted once.
      const jobs = rs.flatMap((r) => r.dispatcher.jobs);
      expect(duplicateJobs(...rs.map((r) => r.dispatcher))).toEqual([]);
      expect(jobs.filter((j) => j.nodeId === 'b')).toHaveLength(RUNS);
      expect(jobs.filter((j) => j.nodeId === 'a')).toHaveLength(RUNS);
      expect(new Set(jobs.filter((j) => j.nodeId === 'a').map((j) => j.runId))).toEqual(new Set(unsentRuns));
      expect(await pending()).toEqual({ waiting: 0, unsent: 0 });
      // The work was really shared between replicas.
      expect(did.filter((d) => d.fired + d.relayed > 0).length).toBeGreaterThan(1);
    } finally {
      await Promise.all(rs.map((r) => r.close()));
    }
  });

  it('apply a timer once even when its claim lease runs out and another replica fires it again', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([wait('w', 1), http('b')], [edge('w', 'b')]));
    const api = new RunCoordinator(db.ds, new RecordingDispatcher(), new RecordingPublisher(), { logger: new MemoryLogger() });
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i += 10) {
      runIds.push(...(await Promise.all(Array.from({ length: 10 }, () => api.runs.startRun(tenantId, { workflowId })))).map((r) => r.runId));
    }
    // A lease of 0 ms: a claimed timer is due again at once, so replicas claiming big batches
    // fire the same timers; only the run lock and fencing stand between them and a double fire.
    const rs = await replicas({ timerLeaseMs: 0 });
    try {
      await sleep(1100);
      await schedulersRace(rs, 50);
      const timers = await timerEvents(runIds);
      expect(runIds.filter((id) => timers.get(id)?.applied !== 1)).toEqual([]);
      // The duplicates happened, and each left an ignored history row and nothing else.
      const ignored = [...timers.values()].reduce((n, t) => n + t.ignored, 0);
      expect(ignored).toBeGreaterThan(0);
      const reasons = (await db.owner.query(
        `SELECT DISTINCT ignored FROM run_events WHERE type = 'TimerFired' AND ignored IS NOT NULL AND run_id = ANY($1::uuid[])`,
        [runIds],
      )) as { ignored: string }[];
      expect(reasons.length).toBeGreaterThan(0);
      expect(await taskStatuses(runIds, 'w')).toEqual({ COMPLETED: RUNS });
      expect(await taskStatuses(runIds, 'b')).toEqual({ PENDING: RUNS });
      expect(duplicateJobs(...rs.map((r) => r.dispatcher))).toEqual([]);
      expect(rs.flatMap((r) => r.dispatcher.jobs).filter((j) => j.nodeId === 'b')).toHaveLength(RUNS);
      // An ignored timer is never claimed again.
      const [left] = (await db.owner.query(`SELECT count(*)::int AS n FROM tasks WHERE wake_at IS NOT NULL AND run_id = ANY($1::uuid[])`, [runIds])) as {
        n: number;
      }[];
      expect(left!.n).toBe(0);
    } finally {
      await Promise.all(rs.map((r) => r.close()));
    }
  });
});

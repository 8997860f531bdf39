import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hostname } from 'node:os';
import { v7 as uuidv7 } from 'uuid';
import { QueueReservationRepository, WorkerRegistryRepository, sql, withTenant, type WorkerIdentity } from '@weft/persistence';
import { WEFT_VERSION } from '@weft/platform';
import { WorkerRegistration } from '@weft/worker';
import { WorkersAndQueueReservations1765440000000 } from '../../libs/persistence/src/migrations/1765440000000-workers-and-queue-reservations.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';
import { eventually, sleep } from '../support/faults.js';

/**
 * The worker registry on real PostgreSQL as the runtime role: a row per worker process, moved by
 * its heartbeats on the database's clock, gone from the live list three intervals after its last
 * heartbeat, pruned later, removed when the worker deregisters. Also: the migration that adds it
 * applied to a database that already holds runs.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const identity = (queues: string[] = ['http']): WorkerIdentity => ({ id: uuidv7(), host: 'node-7', pid: 4242, version: '9.9.9', queues, concurrency: 4 });

describe('the registry repository', () => {
  it('registers a worker, keeps its start time across heartbeats and moves its heartbeat and expiry', async () => {
    const repo = new WorkerRegistryRepository(db.ds);
    const w = identity(['http', 'gpu']);
    const first = await repo.heartbeat(w, 1_000);
    expect(first).toEqual({
      ...w,
      startedAt: expect.any(Date),
      lastHeartbeatAt: first.startedAt,
      expiresAt: new Date(first.startedAt.getTime() + 3_000),
      drainingSince: null,
    });
    await sleep(20);
    const second = await repo.heartbeat(w, 1_000);
    expect(second.startedAt).toEqual(first.startedAt);
    expect(second.lastHeartbeatAt.getTime()).toBeGreaterThan(first.lastHeartbeatAt.getTime());
    expect(second.expiresAt.getTime() - second.lastHeartbeatAt.getTime()).toBe(3_000);
    expect((await repo.live()).filter((l) => l.id === w.id)).toEqual([second]);
    expect(await repo.deregister(w.id)).toBe(true);
    expect(await repo.deregister(w.id)).toBe(false);
  });

  it('leaves out a worker three missed heartbeats after its last, and prunes it once gone long enough', async () => {
    const repo = new WorkerRegistryRepository(db.ds);
    const quiet = identity();
    const alive = identity();
    await repo.heartbeat(quiet, 50); // gone 150 ms after this
    await repo.heartbeat(alive, 60_000);
    await eventually('the quiet worker is gone', async () => !(await repo.live()).some((l) => l.id === quiet.id), 30_000);
    expect((await repo.live()).map((l) => l.id)).toContain(alive.id);
    expect(await repo.prune(60_000)).toBe(0); // gone, but not for a minute yet
    await sleep(200);
    const pruned = await repo.prune(100);
    expect(pruned).toBeGreaterThanOrEqual(1);
    expect(await db.owner.query(`SELECT id FROM workers WHERE id = ANY($1::uuid[]) ORDER BY id`, [[quiet.id, alive.id]])).toEqual([{ id: alive.id }]);
    // A heartbeat after a prune (the worker was unreachable for long) registers it again, with the start time it had.
    const startedAt = new Date(Date.now() - 3_600_000);
    const back = await repo.heartbeat(quiet, 60_000, startedAt);
    expect(back.startedAt).toEqual(startedAt);
    expect((await repo.live()).map((l) => l.id)).toContain(quiet.id);
    await repo.deregister(quiet.id);
    await repo.deregister(alive.id);
  });

  it('records when a worker began draining, once', async () => {
    const repo = new WorkerRegistryRepository(db.ds);
    const w = identity();
    await repo.heartbeat(w, 60_000);
    expect(await repo.markDraining(w.id)).toBe(true);
    const since = (await repo.live()).find((l) => l.id === w.id)!.drainingSince;
    expect(since).toBeInstanceOf(Date);
    await sleep(10);
    await repo.markDraining(w.id);
    expect((await repo.live()).find((l) => l.id === w.id)!.drainingSince).toEqual(since);
    expect(await repo.markDraining(uuidv7())).toBe(false);
    await repo.deregister(w.id);
  });
});

describe("a worker process's registration", () => {
  it('registers this process with its host, pid, version, queues and concurrency, heartbeats, and deregisters', async () => {
    const registration = new WorkerRegistration(db.ds, { heartbeatMs: 100 });
    const repo = new WorkerRegistryRepository(db.ds);
    await registration.register(['http', 'js'], 3);
    const row = (await repo.live()).find((l) => l.id === registration.id)!;
    expect(row).toMatchObject({ host: hostname(), pid: process.pid, version: WEFT_VERSION, queues: ['http', 'js'], concurrency: 3, drainingSince: null });
    expect(registration.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/); // UUIDv7
    await eventually('a heartbeat moves it', async () => (await repo.live()).find((l) => l.id === row.id)!.lastHeartbeatAt > row.lastHeartbeatAt);
    await registration.draining();
    expect((await repo.live()).find((l) => l.id === row.id)!.drainingSince).toBeInstanceOf(Date);
    await registration.deregister();
    expect((await repo.live()).map((l) => l.id)).not.toContain(row.id);
    expect(await db.owner.query(`SELECT count(*)::int AS n FROM workers WHERE id = $1`, [row.id])).toEqual([{ n: 0 }]);
  });
});

describe('the migration adding the registry and reservations', () => {
  it('applies to a database holding runs, and its index serves the active tasks already there', async () => {
    const own = await createTestDatabase();
    try {
      const h = await coordinatorHarness(own.ds);
      const runId = await h.start(def([http('x', undefined, { queue: 'pre-existing' })]));
      const migration = new WorkersAndQueueReservations1765440000000();
      const qr = own.owner.createQueryRunner();
      try {
        await migration.down(qr);
        expect(await own.owner.query(`SELECT to_regclass('workers') AS w, to_regclass('queue_reservations') AS r`)).toEqual([{ w: null, r: null }]);
        await migration.up(qr);
      } finally {
        await qr.release();
      }
      const [index] = await own.owner.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'tasks_tenant_active_queues'`);
      expect(index.indexdef).toMatch(/ON public\.tasks USING btree \(tenant_id, queue\) WHERE/);
      // The existing task is claimable, and a reservation made afterwards is honoured.
      const other = await coordinatorHarness(own.ds);
      await new QueueReservationRepository(own.ds).reserve(other.tenantId, 'pre-existing');
      const claim = await h.coordinator.leases.claim(h.tenantId, h.dispatcher.last('x').taskId, 0, 'pre-existing');
      expect(claim?.refused).toBe(true);
      const rows = await withTenant(own.ds, h.tenantId, (m) =>
        sql<{ status: string }>(m, `SELECT status FROM tasks WHERE tenant_id = $1 AND run_id = $2`, [h.tenantId, runId]),
      );
      expect(rows.rows).toEqual([{ status: 'RUNNING' }]);
    } finally {
      await own.drop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { QueueReservationRepository, QueueViewRepository, sql, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http } from '../support/builders.js';

/**
 * Queue reservations where the database decides them: the worker's claim and a report's eager
 * take read the tenant's access to the queue in their own statement, a draining worker's release
 * puts a task back for another worker, and a tenant's queue view counts its own tasks only and
 * says nothing of a queue reserved for others. Real PostgreSQL as the runtime role.
 */

const RUN_LEASE = 15_000;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function setup() {
  const h = await coordinatorHarness(db.ds, { runLeaseMs: RUN_LEASE });
  return {
    ...h,
    reservations: new QueueReservationRepository(db.ds),
    async row(runId: string, nodeId: string) {
      const r = await withTenant(db.ds, h.tenantId, (m) =>
        sql<{ status: string; attempt: number; lease_token: string | null; lease_expires_at: Date | null; db_now: Date }>(
          m,
          `SELECT status, attempt, lease_token, lease_expires_at, clock_timestamp() AS db_now FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = $3`,
          [h.tenantId, runId, nodeId],
        ),
      );
      return r.rows[0]!;
    },
  };
}

describe("a worker's claim", () => {
  it('is refused on a queue reserved for other tenants, and allowed on one reserved for the tenant or for nobody', async () => {
    const a = await setup();
    const b = await setup();
    await a.reservations.reserve(a.tenantId, 'gpu-claim');
    // Both tenants published before the reservation: their tasks are on the queue.
    const aRun = await a.start(def([http('x', undefined, { queue: 'gpu-claim' })]));
    const bRun = await b.start(def([http('x', undefined, { queue: 'gpu-claim' })]));
    const shared = await b.start(def([http('y', undefined, { queue: 'shared-claim' })]));
    const aJob = a.dispatcher.last('x');
    const bJob = b.dispatcher.last('x');
    const sharedJob = b.dispatcher.last('y');

    const aClaim = await a.coordinator.leases.claim(a.tenantId, aJob.taskId, 0, 'gpu-claim');
    const bClaim = await b.coordinator.leases.claim(b.tenantId, bJob.taskId, 0, 'gpu-claim');
    const sharedClaim = await b.coordinator.leases.claim(b.tenantId, sharedJob.taskId, 0, 'shared-claim');

    expect(aClaim).toEqual({ leaseToken: expect.any(String), refused: false });
    expect(bClaim).toEqual({ leaseToken: expect.any(String), refused: true });
    expect(sharedClaim).toEqual({ leaseToken: expect.any(String), refused: false });
    // The refused claim still holds the lease, so the worker can report the attempt failed.
    expect(await b.row(bRun, 'x')).toMatchObject({ status: 'RUNNING', lease_token: bClaim!.leaseToken });
    await b.coordinator.runs.reportFailed(b.tenantId, {
      runId: bRun,
      taskId: bJob.taskId,
      nodeId: 'x',
      attempt: 0,
      error: 'refused',
      retryable: false,
      leaseToken: bClaim!.leaseToken,
    });
    expect(await b.run(bRun)).toMatchObject({ status: 'FAILED' });
    expect(await a.row(aRun, 'x')).toMatchObject({ status: 'RUNNING', lease_token: aClaim!.leaseToken });
    expect((await b.run(shared)).status).toBe('RUNNING');
  });

  it('drops a job delivered on another queue than its task is routed to, leaving the task as it was', async () => {
    const b = await setup();
    const runId = await b.start(def([http('x')]));
    const job = b.dispatcher.last('x');
    expect(await b.coordinator.leases.claim(b.tenantId, job.taskId, 0, 'someone-elses')).toBeNull();
    expect(await b.row(runId, 'x')).toMatchObject({ status: 'PENDING', lease_token: null });
    expect(await b.coordinator.leases.claim(b.tenantId, job.taskId, 0, 'http')).toEqual({ leaseToken: expect.any(String), refused: false });
  });
});

describe("a report's eager take", () => {
  it('takes nothing from a queue reserved for other tenants: the next attempt goes through the queue (and its claim is refused)', async () => {
    const owner = await setup();
    const b = await setup();
    const chain = def([http('a', undefined, { queue: 'gpu-take' }), http('b', undefined, { queue: 'gpu-take' })], [edge('a', 'b')]);
    const runId = await b.start(chain);
    const a = b.dispatcher.last('a');
    const claim = await b.coordinator.leases.claim(b.tenantId, a.taskId, 0, 'gpu-take');
    expect(claim?.refused).toBe(false);
    // Reserved for another tenant while B's first attempt runs.
    await owner.reservations.reserve(owner.tenantId, 'gpu-take');

    const res = await b.coordinator.runs.reportCompleted(b.tenantId, {
      runId,
      taskId: a.taskId,
      nodeId: 'a',
      attempt: 0,
      output: {},
      leaseToken: claim!.leaseToken,
      takeFrom: 'gpu-take',
    });

    expect(res.taken).toBeUndefined();
    expect(b.dispatcher.forNode('b')).toHaveLength(1);
    expect(await b.row(runId, 'b')).toMatchObject({ status: 'PENDING', lease_token: null });
    expect((await b.coordinator.leases.claim(b.tenantId, b.dispatcher.last('b').taskId, 0, 'gpu-take'))?.refused).toBe(true);
  });

  it('still takes from a queue reserved for the tenant itself', async () => {
    const a = await setup();
    await a.reservations.reserve(a.tenantId, 'own-take');
    const runId = await a.start(def([http('a', undefined, { queue: 'own-take' }), http('b', undefined, { queue: 'own-take' })], [edge('a', 'b')]));
    const first = a.dispatcher.last('a');
    const res = await a.coordinator.runs.reportCompleted(a.tenantId, {
      runId,
      taskId: first.taskId,
      nodeId: 'a',
      attempt: 0,
      output: {},
      takeFrom: 'own-take',
    });
    expect(res.taken?.job).toMatchObject({ nodeId: 'b', queue: 'own-take' });
  });
});

describe("a draining worker's release", () => {
  it('puts the task back PENDING with no token and its lease ended now; a late report of the execution is ignored as stale', async () => {
    const h = await setup();
    const runId = await h.start(def([http('x')]));
    const job = h.dispatcher.last('x');
    const claim = (await h.coordinator.leases.claim(h.tenantId, job.taskId, 0, 'http'))!;
    const held = { tenantId: h.tenantId, taskId: job.taskId, attempt: 0, leaseToken: claim.leaseToken };

    // A token that is not the task's releases nothing.
    expect(await h.coordinator.leases.release([{ ...held, leaseToken: '00000000-0000-4000-8000-000000000000' }])).toEqual(new Set());
    expect(await h.coordinator.leases.release([held])).toEqual(new Set([claim.leaseToken]));
    const row = await h.row(runId, 'x');
    expect(row).toMatchObject({ status: 'PENDING', attempt: 0, lease_token: null });
    expect(row.lease_expires_at).toEqual(h.clock.now());
    // Released once: again is a no-op.
    expect(await h.coordinator.leases.release([held])).toEqual(new Set());

    const late = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: job.taskId,
      nodeId: 'x',
      attempt: 0,
      output: { late: true },
      leaseToken: claim.leaseToken,
    });
    expect(late.ignored).toBe("stale lease: attempt 0 of node x was re-dispatched; this execution's lease was superseded");
    // The next worker's claim takes it at once and its report counts.
    const next = (await h.coordinator.leases.claim(h.tenantId, job.taskId, 0, 'http'))!;
    await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: job.taskId,
      nodeId: 'x',
      attempt: 0,
      output: { by: 'next' },
      leaseToken: next.leaseToken,
    });
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED', output: { x: { by: 'next' } } });
  });
});

describe("a tenant's queue view", () => {
  it("counts the tenant's own tasks only, and leaves out a served queue reserved for other tenants", async () => {
    const a = await setup();
    const b = await setup();
    await a.reservations.reserve(a.tenantId, 'view-a');
    // A: two tasks waiting on view-a, one running on view-shared; B: one waiting on view-shared.
    for (let i = 0; i < 2; i++) await a.start(def([http('p', undefined, { queue: 'view-a' })]));
    await a.start(def([http('r', undefined, { queue: 'view-shared' })]));
    await a.coordinator.leases.claim(a.tenantId, a.dispatcher.last('r').taskId, 0, 'view-shared');
    await b.start(def([http('w', undefined, { queue: 'view-shared' })]));
    const view = new QueueViewRepository(db.ds);
    const served = ['view-a', 'view-shared', 'view-idle'];

    // The harness's clock is the one the tasks were dispatched with.
    const aView = await view.queues(a.tenantId, served, a.clock.now());
    const bView = await view.queues(b.tenantId, served, b.clock.now());

    expect(aView.map(({ oldestPendingAgeMs, ...q }) => ({ ...q, waited: oldestPendingAgeMs !== null && oldestPendingAgeMs >= 0 }))).toEqual([
      { queue: 'view-a', backlog: 2, delayed: 0, running: 0, access: 'reserved', waited: true },
      { queue: 'view-idle', backlog: 0, delayed: 0, running: 0, access: 'shared', waited: false },
      { queue: 'view-shared', backlog: 0, delayed: 0, running: 1, access: 'shared', waited: false },
    ]);
    expect(bView.map(({ oldestPendingAgeMs: _, ...q }) => q)).toEqual([
      { queue: 'view-idle', backlog: 0, delayed: 0, running: 0, access: 'shared' },
      { queue: 'view-shared', backlog: 1, delayed: 0, running: 0, access: 'shared' },
    ]);
  });

  it('lists a queue reserved for others while the tenant has tasks on it, as denied', async () => {
    const owner = await setup();
    const b = await setup();
    await b.start(def([http('x', undefined, { queue: 'view-late' })]));
    await owner.reservations.reserve(owner.tenantId, 'view-late');
    const rows = await new QueueViewRepository(db.ds).queues(b.tenantId, [], b.clock.now());
    expect(rows.map(({ oldestPendingAgeMs: _, ...q }) => q)).toEqual([{ queue: 'view-late', backlog: 1, delayed: 0, running: 0, access: 'denied' }]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * The scheduler's backlog poll: what waits in a queue's backlog is admitted once the queue has
 * room, a lost enqueue comes back through the lease sweep, and a cancelled task's row is dropped.
 * Real PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function setup(opts: RunCoordinatorOptions = {}) {
  return coordinatorHarness(db.ds, opts);
}

/** A live worker of `concurrency` slots on `queues` in the registry, as of `now`. */
async function registerWorker(now: Date, queues: string[], concurrency: number): Promise<void> {
  await db.ds.query(
    `INSERT INTO workers (id, host, pid, version, queues, concurrency, started_at, last_heartbeat_at, expires_at)
     VALUES (gen_random_uuid(), 'test', 1, 'test', $1, $2, $3, $3, $3::timestamptz + interval '1 hour')`,
    [queues, concurrency, now],
  );
}

describe('the backlog poll', () => {
  it('admits what waits in a backlog once the queue has room, in one pass for every tenant', async () => {
    // No worker serves the queue and the window's floor is 0: nothing may wait on it in Redis.
    const h = await setup({ dispatchWindowFloor: 0 });
    const queue = `poll-${h.tenantId.slice(0, 8)}`;
    const runId = await h.start(def([http('a', undefined, { queue })]));
    expect(h.dispatcher.jobs).toEqual([]);
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'QUEUED', leaseExpiresAt: null });
    expect(await h.coordinator.outbox.relay(10)).toBe(0);

    await registerWorker(h.clock.now(), [queue], 2);
    expect(await h.coordinator.outbox.relay(10)).toBe(1);
    const task = (await h.tasks(runId)).a!;
    expect(task.status).toBe('PENDING');
    expect(task.leaseExpiresAt!.getTime()).toBe(h.clock.now().getTime() + 30_000);
    expect(h.dispatcher.jobs).toEqual([
      {
        tenantId: h.tenantId,
        runId,
        taskId: task.id,
        nodeId: 'a',
        nodeType: 'HTTP',
        attempt: 0,
        queue,
        input: task.input,
        notBefore: task.createdAt.getTime(),
        traceparent: (await h.run(runId)).traceparent,
      },
    ]);
    expect((await h.outbox(runId))[0]!.enqueued_at).not.toBeNull();
    // The task left QUEUED outside any event of the run: its watchers are told to read it again.
    expect(h.publisher.updates.at(-1)).toEqual({ tenantId: h.tenantId, runId, status: 'RUNNING' });
    expect(await h.coordinator.outbox.relay(10)).toBe(0);
  });

  it('puts an admitted attempt whose enqueue failed back in the backlog through the lease sweep, then enqueues it once', async () => {
    const h = await setup();
    h.dispatcher.failNext = 1;
    const queue = `lost-${h.tenantId.slice(0, 8)}`;
    const runId = await h.start(def([http('a', undefined, { queue })]));
    expect(h.dispatcher.jobs).toEqual([]);
    expect(h.logger.warnings.join('\n')).toMatch(/enqueue of 1 admitted job\(s\) failed; the lease sweep puts them back/);
    expect((await h.tasks(runId)).a!.status).toBe('PENDING');

    // Bull has lost this queue's job (other suites' tasks in this database keep theirs).
    const gone = { hasJob: async (q: string) => q !== queue };
    expect(await h.coordinator.lostTasks.sweep(1000, gone)).toBe(0); // the dispatch lease holds
    h.clock.advance(30_001);
    expect(await h.coordinator.lostTasks.sweep(1000, gone)).toBe(1);
    const task = (await h.tasks(runId)).a!;
    expect(h.dispatcher.jobs.map((j) => [j.taskId, j.attempt])).toEqual([[task.id, 0]]);
    expect(task.status).toBe('PENDING');
    expect(await h.coordinator.outbox.relay(10)).toBe(0);
  });

  it("carries the node's non_retryable statuses and sensitive flag in a job read back from the backlog", async () => {
    const h = await setup();
    h.dispatcher.failNext = 1;
    const queue = `policy-${h.tenantId.slice(0, 8)}`;
    const node = http('a', undefined, { queue, sensitive: true, retry: { max_attempts: 3, non_retryable: ['404', '4xx'] } });
    const runId = await h.start(def([node]));
    expect(h.dispatcher.jobs).toEqual([]);
    // The job this process held is gone with the failed enqueue: the sweep's is read from the database.
    h.clock.advance(30_001);
    expect(await h.coordinator.lostTasks.sweep(1000, { hasJob: async (q: string) => q !== queue })).toBe(1);
    expect(h.dispatcher.jobs).toEqual([expect.objectContaining({ runId, nodeId: 'a', sensitive: true, nonRetryable: [404, '4xx'] })]);
  });

  it('drops the backlog row of a task cancelled before it was admitted', async () => {
    const h = await setup({ dispatchWindowFloor: 0 });
    const queue = `cancelled-${h.tenantId.slice(0, 8)}`;
    const runId = await h.start(def([http('a', undefined, { queue })]));
    await h.coordinator.runs.cancelRun(h.tenantId, { runId });
    await registerWorker(h.clock.now(), [queue], 2);
    expect(await h.coordinator.outbox.relay(10)).toBe(0);
    expect((await h.outbox(runId))[0]!.enqueued_at).not.toBeNull();
    expect(h.dispatcher.jobs).toEqual([]);
  });
});

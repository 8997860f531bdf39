import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, withTenant } from '@weft/persistence';
import { type JobProbe } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import type { BullTaskQueues, WeftConfig } from '@weft/platform';
import { TaskProcessor } from '@weft/worker';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, RecordingPublisher } from '../support/builders.js';

/**
 * Eager dispatch: a worker's report may take the next attempt it dispatches on the
 * worker's queue. The taken attempt is RUNNING under the worker's new lease in the report's own
 * transaction, gets neither a job nor an outbox row, and is still recovered by the lease sweep when
 * the worker disappears. Real PostgreSQL, recording queue, hand-moved clock.
 */

const RUN_LEASE = 15_000;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const chain = (...ids: string[]) =>
  def(
    ids.map((id) => http(id)),
    ids.slice(1).map((id, i) => edge(ids[i]!, id)),
  );

function setup() {
  return setupOn(db);
}

async function setupOn(on: TestDatabase) {
  const h = await coordinatorHarness(on.ds, { runLeaseMs: RUN_LEASE });
  return {
    ...h,
    /** The lease columns and outbox mark of `nodeId`'s task. */
    async lease(runId: string, nodeId: string) {
      const r = await withTenant(on.ds, h.tenantId, (m) =>
        sql<{ status: string; attempt: number; lease_token: string | null; lease_expires_at: Date | null; enqueued_at: Date | null }>(
          m,
          `SELECT t.status, t.attempt, t.lease_token, t.lease_expires_at, o.enqueued_at
             FROM tasks t LEFT JOIN outbox o ON o.tenant_id = t.tenant_id AND o.task_id = t.id
            WHERE t.tenant_id = $1 AND t.run_id = $2 AND t.node_id = $3`,
          [h.tenantId, runId, nodeId],
        ),
      );
      return r.rows[0]!;
    },
  };
}

describe('a report that takes from its queue', () => {
  it('gets the next node RUNNING under its own lease, with neither a job nor an outbox row', async () => {
    const h = await setup();
    const runId = await h.start(chain('a', 'b', 'c'));
    const a = h.dispatcher.last('a');

    const res = await h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: a.taskId, nodeId: 'a', attempt: 0, output: { n: 1 }, takeFrom: 'http' });

    expect(res.taken?.job).toMatchObject({ runId, nodeId: 'b', attempt: 0, queue: 'http', input: { url: 'http://example.test/b' } });
    expect(h.dispatcher.forNode('b')).toEqual([]);
    const b = await h.lease(runId, 'b');
    expect(b).toMatchObject({ status: 'RUNNING', lease_token: res.taken!.leaseToken });
    expect(b.lease_expires_at!.getTime()).toBe(h.clock.now().getTime() + RUN_LEASE);
    expect((await h.outbox(runId)).map((o) => o.task_id)).toEqual([a.taskId]);
  });

  it('reports the taken attempt with its token like a claimed one, and the run goes on', async () => {
    const h = await setup();
    const runId = await h.start(chain('a', 'b', 'c'));
    const a = h.dispatcher.last('a');
    const first = await h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: a.taskId, nodeId: 'a', attempt: 0, output: {}, takeFrom: 'http' });
    const b = first.taken!;

    const second = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: b.job.taskId,
      nodeId: 'b',
      attempt: 0,
      output: { from: 'b' },
      leaseToken: b.leaseToken,
    });

    expect(second).toEqual({});
    expect(await h.statuses(runId)).toEqual({ a: 'COMPLETED', b: 'COMPLETED', c: 'PENDING' });
    expect(h.dispatcher.forNode('c')).toHaveLength(1);
  });

  it('takes nothing from another queue, nor an attempt whose backoff has not passed', async () => {
    const h = await setup();
    const other = await h.start(def([http('a'), http('b', undefined, { queue: 'slow' })], [edge('a', 'b')]));
    const a = h.dispatcher.last('a');
    const res = await h.coordinator.runs.reportCompleted(h.tenantId, { runId: other, taskId: a.taskId, nodeId: 'a', attempt: 0, output: {}, takeFrom: 'http' });
    expect(res.taken).toBeUndefined();
    expect(h.dispatcher.forNode('b')).toHaveLength(1);
    expect((await h.lease(other, 'b')).enqueued_at).not.toBeNull();

    const retried = await h.start(def([http('r', undefined, { retry: { max_attempts: 2, backoff_seconds: 5 } })]));
    const r = h.dispatcher.last('r');
    const failed = await h.coordinator.runs.reportFailed(h.tenantId, {
      runId: retried,
      taskId: r.taskId,
      nodeId: 'r',
      attempt: 0,
      error: 'boom',
      takeFrom: 'http',
    });
    expect(failed.taken).toBeUndefined();
    expect(h.dispatcher.last('r')).toMatchObject({ attempt: 0 });
    expect(await h.lease(retried, 'r')).toMatchObject({ status: 'QUEUED', attempt: 1 });
    h.clock.advance(5_000);
    await h.coordinator.outbox.relay(10);
    expect(h.dispatcher.last('r')).toMatchObject({ attempt: 1, notBefore: h.clock.now().getTime() });
  });

  it('is re-dispatched by the lease sweep when its worker never reports', async () => {
    // The sweep works across tenants: a database of its own, so other tests' leases stay out of it.
    const own = await createTestDatabase();
    try {
      await sweptWhenLost(own);
    } finally {
      await own.drop();
    }
  });
});

/** The lease sweep's part of the story, on a database of its own. */
async function sweptWhenLost(own: TestDatabase): Promise<void> {
  const h = await setupOn(own);
  const runId = await h.start(chain('a', 'b'));
  const a = h.dispatcher.last('a');
  const { taken } = await h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: a.taskId, nodeId: 'a', attempt: 0, output: {}, takeFrom: 'http' });
  const gone: JobProbe = { hasJob: async () => false };

  h.clock.advance(RUN_LEASE - 1);
  expect(await h.coordinator.lostTasks.sweep(10, gone)).toBe(0);
  h.clock.advance(2);
  expect(await h.coordinator.lostTasks.sweep(10, gone)).toBe(1);

  expect(h.dispatcher.last('b')).toMatchObject({ taskId: taken!.job.taskId, attempt: 0 });
  expect((await h.lease(runId, 'b')).lease_token).toBeNull();
  const late = await h.coordinator.runs.reportCompleted(h.tenantId, {
    runId,
    taskId: taken!.job.taskId,
    nodeId: 'b',
    attempt: 0,
    output: {},
    leaseToken: taken!.leaseToken,
  });
  expect(late.ignored).toMatch(/lease/);
}

describe('the writes of one event', () => {
  it('are rolled back together when the stored run drifted from the snapshot the machine decided on', async () => {
    const h = await setup();
    const runId = await h.start(chain('a', 'b', 'c'));
    await h.complete('a'); // the coordinator now keeps the run's node states (b at attempt 0)
    const b = h.dispatcher.last('b');
    // Behind the coordinator's back (no event): b's attempt moves on, so completing attempt 0 matches no row.
    await withTenant(db.ds, h.tenantId, (m) => sql(m, `UPDATE tasks SET attempt = 3 WHERE tenant_id = $1 AND id = $2`, [h.tenantId, b.taskId]));
    const before = (await h.run(runId)).eventSeq;

    await expect(h.complete('b', { n: 1 }, b)).rejects.toThrow(/expected exactly one task .* attempt 0 to complete, matched 0/);

    expect((await h.run(runId)).eventSeq).toBe(before);
    expect(await h.statuses(runId)).toEqual({ a: 'COMPLETED', b: 'PENDING' });
    expect(await h.events(runId)).toHaveLength(before);
  });
});

describe('a worker slot with eager dispatch', () => {
  let stub: Server;
  let url: string;
  const hits: string[] = [];
  beforeAll(async () => {
    stub = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    stub.closeAllConnections();
    await new Promise((r) => stub.close(r));
  });

  it('executes at most eagerDispatch attempts in a row from its own reports, then sends the next through the queue', async () => {
    const h = await coordinatorHarness(db.ds);
    const coordinator = new RunCoordinator(db.ds, h.dispatcher, new RecordingPublisher(), { logger: h.logger });
    const config = { queues: ['http'], workerConcurrency: 1, httpAllowPrivate: true, httpAllowHosts: [] } as unknown as WeftConfig;
    const processor = new TaskProcessor(coordinator, {} as BullTaskQueues, config, { heartbeatMs: 0, eagerDispatch: 2 });
    const ids = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const { workflowId } = await h.publish(
      def(
        ids.map((id) => http(id, { url: `${url}/${id}` })),
        ids.slice(1).map((id, i) => edge(ids[i]!, id)),
      ),
    );
    const { runId } = await coordinator.runs.startRun(h.tenantId, { workflowId });
    hits.length = 0;

    await processor.process(h.dispatcher.last('n1'));

    expect(hits).toEqual(['/n1', '/n2', '/n3']);
    expect(h.dispatcher.jobs.map((j) => j.nodeId)).toEqual(['n1', 'n4']);
    expect(await h.statuses(runId)).toEqual({ n1: 'COMPLETED', n2: 'COMPLETED', n3: 'COMPLETED', n4: 'PENDING' });

    await processor.process(h.dispatcher.last('n4'));
    expect(hits).toEqual(['/n1', '/n2', '/n3', '/n4', '/n5']);
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { sql, withTenant } from '@weft/persistence';
import { jobId, type TaskJob } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { BullTaskQueues } from '@weft/platform';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http, MemoryLogger, publishWorkflow, RecordingPublisher } from '../support/builders.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let db: TestDatabase;
let queues: BullTaskQueues;
/** A queue no other process consumes. */
const QUEUE = `itest-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db = await createTestDatabase();
  queues = new BullTaskQueues(REDIS_URL);
});
afterAll(async () => {
  await queues
    ?.queue(QUEUE)
    .obliterate({ force: true })
    .catch(() => undefined);
  await queues?.close();
  await db?.drop();
});

describe('coordinator with a real Bull queue', () => {
  it('enqueues after commit, admits idempotently, holds retries in the backlog and runs to completion', async () => {
    const { tenantId } = await createTenant(db.ds);
    const coordinator = new RunCoordinator(db.ds, queues, new RecordingPublisher(), { logger: new MemoryLogger() });
    const node = (id: string) => http(id, { url: `http://example.test/${id}` }, { queue: QUEUE, retry: { max_attempts: 2, backoff_seconds: 1 } });
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([node('a'), node('b')], [edge('a', 'b')]));
    const { runId } = await coordinator.runs.startRun(tenantId, { workflowId });

    const q = queues.queue(QUEUE);
    const taskA = await withTenant(db.ds, tenantId, (m) =>
      sql<{ id: string }>(m, `SELECT id FROM tasks WHERE tenant_id = $1 AND run_id = $2 AND node_id = 'a'`, [tenantId, runId]),
    );
    const aId = taskA.rows[0]!.id;
    const job = await q.getJob(jobId(aId, 0));
    expect(job?.data).toMatchObject({ tenantId, runId, taskId: aId, nodeId: 'a', attempt: 0, queue: QUEUE, input: { url: 'http://example.test/a' } });

    // The same attempt admitted twice (the sweep put it back while its job was in fact alive):
    // the job id is the attempt's, so Bull keeps one job.
    await withTenant(db.ds, tenantId, (m) =>
      sql(
        m,
        `WITH t AS (UPDATE tasks SET status = 'QUEUED' WHERE tenant_id = $1 AND id = $2) UPDATE outbox SET enqueued_at = NULL WHERE tenant_id = $1 AND task_id = $2`,
        [tenantId, aId],
      ),
    );
    expect(await coordinator.outbox.relay(10)).toBe(1);
    expect((await q.getJobCounts()).waiting).toBe(1);

    // A failed attempt is held in the backlog for its backoff, then admitted with the next attempt's id.
    await (await q.getJob(jobId(aId, 0)))!.remove();
    await coordinator.runs.reportFailed(tenantId, { runId, taskId: aId, nodeId: 'a', attempt: 0, error: 'HTTP 503' });
    expect(await q.getJob(jobId(aId, 1))).toBeNull();
    let retry = null;
    for (let i = 0; i < 100 && !retry; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await coordinator.outbox.relay(10);
      retry = await q.getJob(jobId(aId, 1));
    }
    expect(retry).not.toBeNull();
    expect(await retry!.isDelayed()).toBe(false);

    // A worker loop over the real queue: claim, "execute", report.
    const done = new Promise<void>((resolve) => {
      queues.consume([QUEUE], 2, async (j: TaskJob) => {
        if (!(await coordinator.leases.markRunning(j.tenantId, j.taskId, j.attempt))) return;
        await coordinator.runs.reportCompleted(j.tenantId, {
          runId: j.runId,
          taskId: j.taskId,
          nodeId: j.nodeId,
          attempt: j.attempt,
          output: { node: j.nodeId },
        });
        if (j.nodeId === 'b') resolve();
      });
    });
    await done;
    const run = await withTenant(db.ds, tenantId, (m) =>
      sql<{ status: string; output: unknown }>(m, `SELECT status, output FROM runs WHERE tenant_id = $1 AND id = $2`, [tenantId, runId]),
    );
    expect(run.rows[0]).toEqual({ status: 'SUCCEEDED', output: { b: { node: 'b' } } });
  });
});

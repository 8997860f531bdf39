import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TakenTask } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http } from '../support/builders.js';

/**
 * Fenced steps: a worker's report on a run whose previous event the same coordinator applied is
 * decided from memory and written by one fenced statement through the step committer, with
 * the reports queued meanwhile in one commit. Everything it writes must be what the locking path
 * writes; a fence that fails (a cancel, a lost lease) leaves the report to the locking path, which
 * records it as it always did. Real PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const chain = (n: number) => {
  const ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
  return def(
    ids.map((id) => http(id)),
    ids.slice(1).map((id, i) => edge(ids[i]!, id)),
  );
};

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** Claims the run's first job as a worker would; the attempt it holds. */
async function claimFirst(h: Harness, runId: string): Promise<TakenTask> {
  const job = h.dispatcher.jobs.find((j) => j.runId === runId)!;
  const claim = await h.coordinator.leases.claim(h.tenantId, job.taskId, job.attempt, job.queue);
  return { job, leaseToken: claim!.leaseToken };
}

/** Reports `held` completed as a worker taking its next attempt; the attempt it took, if any. */
async function step(h: Harness, held: TakenTask, output: unknown = { step: held.job.nodeId }) {
  const { job, leaseToken } = held;
  return h.coordinator.runs.reportCompleted(h.tenantId, { runId: job.runId, taskId: job.taskId, nodeId: job.nodeId, attempt: job.attempt, leaseToken, output: output as never, takeFrom: job.queue });
}

/** Runs a chain to its end through reports that take their next attempt; resolves the run id. */
async function runChain(h: Harness, workflowId: string): Promise<string> {
  const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
  let held: TakenTask | undefined = await claimFirst(h, runId);
  while (held) held = (await step(h, held)).taken;
  return runId;
}

/** A run's history without what differs between two runs (ids, times). */
async function shape(h: Harness, runId: string) {
  return (await h.events(runId)).map((e) => ({ seq: e.seq, type: e.type, nodeId: e.nodeId, attempt: e.attempt, ignored: e.ignored, error: e.error, actions: (e.actions as { type: string }[]).map((a) => a.type) }));
}

describe('a chain reported by a worker that takes its next attempt', () => {
  it('goes through the step committer after its first report, and writes what the locking path writes', async () => {
    const fenced = await coordinatorHarness(db.ds);
    const locking = await coordinatorHarness(db.ds, { fencedSteps: false });
    const a = await fenced.publish(chain(6));
    const b = await locking.publish(chain(6));

    const viaFence = await runChain(fenced, a.workflowId);
    const viaLocks = await runChain(locking, b.workflowId);

    // The first report reads the run's rows; the five after it are decided from memory.
    expect(fenced.coordinator.committer.stats.statements).toBe(5);
    expect(locking.coordinator.committer.stats.statements).toBe(0);
    expect((await fenced.run(viaFence)).status).toBe('SUCCEEDED');
    expect(await shape(fenced, viaFence)).toEqual(await shape(locking, viaLocks));
    const tasks = Object.values(await fenced.tasks(viaFence));
    expect(tasks.map((t) => [t.nodeId, t.status, t.output])).toEqual(Object.values(await locking.tasks(viaLocks)).map((t) => [t.nodeId, t.status, { step: t.nodeId }]));
    expect(await fenced.outbox(viaFence)).toHaveLength(1); // the first task's, from the start
    expect(fenced.publisher.updates.filter((u) => u.runId === viaFence).map((u) => u.seq)).toEqual(locking.publisher.updates.filter((u) => u.runId === viaLocks).map((u) => u.seq));
  });
});

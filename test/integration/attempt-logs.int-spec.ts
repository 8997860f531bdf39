import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TakenTask } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { AttemptLogRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { MemoryLogger, RecordingDispatcher, RecordingPublisher } from '../support/builders.js';
import { chain, claimFirst, type Harness } from '../support/fenced-steps.js';

/**
 * Attempt logs as the coordinator writes them: only for a report that has some, as a part of the
 * report's fenced statement (no statement of their own) or alone before the locking path, fenced
 * by the attempt's lease, read
 * back per task under the tenant's row-level security. Real PostgreSQL, recording queue.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 12, 0, s));

/** Reports `held` completed as a worker taking its next attempt, with `logs` when given. */
function report(h: Harness, held: TakenTask, logs?: string) {
  const { job, leaseToken } = held;
  return h.coordinator.runs.reportCompleted(h.tenantId, {
    runId: job.runId,
    taskId: job.taskId,
    nodeId: job.nodeId,
    attempt: job.attempt,
    leaseToken,
    output: { step: job.nodeId },
    takeFrom: job.queue,
    ...(logs === undefined ? {} : { log: { text: logs, startedAt: at(1), finishedAt: at(2) } }),
  });
}

/** Runs a chain of 4 through reports that take their next attempt; `logs(node)` is each report's. */
async function runChain(h: Harness, logs: (nodeId: string) => string | undefined): Promise<{ runId: string; taskIds: string[] }> {
  const { workflowId } = await h.publish(chain(4));
  const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
  const taskIds: string[] = [];
  let held: TakenTask | undefined = await claimFirst(h, runId);
  while (held) {
    taskIds.push(held.job.taskId);
    held = (await report(h, held, logs(held.job.nodeId))).taken;
  }
  return { runId, taskIds };
}

describe('attempt logs', () => {
  it('writes logs in the fenced statement of their report, and alone only before the locking path', async () => {
    const quiet = await coordinatorHarness(db.ds);
    const q = await runChain(quiet, () => undefined);
    expect((await quiet.run(q.runId)).status).toBe('SUCCEEDED');
    // The first report reads the run's rows; the three after it are one fenced statement each.
    expect(quiet.coordinator.committer.stats.statements).toBe(3);
    expect(await new AttemptLogRepository(db.ds).ofTasks(quiet.tenantId, q.taskIds)).toEqual([]);

    const noisy = await coordinatorHarness(db.ds);
    // n3 printed nothing: an empty text is no logs.
    const n = await runChain(noisy, (node) => (node === 'n3' ? '' : `${node} printed\n`));
    expect((await noisy.run(n.runId)).status).toBe('SUCCEEDED');
    // n1's report takes the locking path: its logs are one statement before it; n2's and n4's
    // are parts of their reports' statements.
    expect(noisy.coordinator.committer.stats.statements).toBe(3 + 1);
    const rows = await new AttemptLogRepository(db.ds).ofTasks(noisy.tenantId, n.taskIds);
    expect(
      rows
        .map((r) => ({ node: r.nodeId, run: r.runId, attempt: r.attempt, logs: r.logs, error: r.error, startedAt: r.startedAt, finishedAt: r.finishedAt }))
        .sort((a, b) => a.node.localeCompare(b.node)),
    ).toEqual(
      ['n1', 'n2', 'n4'].map((node) => ({ node, run: n.runId, attempt: 0, logs: `${node} printed\n`, error: null, startedAt: at(1), finishedAt: at(2) })),
    );
  });

  it('keeps no logs of a report whose run was cancelled after its attempt began', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(3));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const first = await claimFirst(h, runId);
    // n1's report leaves the run's state cached, so n2's report is decided from memory; the
    // cancel comes from another process, so its fenced statement meets the cancel in the database.
    const second = (await report(h, first, 'n1 printed\n')).taken!;
    const canceller = new RunCoordinator(db.ds, new RecordingDispatcher(), new RecordingPublisher(), {
      logger: new MemoryLogger(),
      dispatchWindowFloor: 1_000_000,
    });
    await canceller.runs.cancelRun(h.tenantId, { runId });
    const sent = h.coordinator.committer.stats.statements;
    const late = await report(h, second, 'n2 printed after the cancel\n');
    // The fenced statement (its log a part of it) was sent, then the log alone before the locking path.
    expect(h.coordinator.committer.stats.statements - sent).toBe(2);
    expect(late.taken).toBeUndefined();
    expect((await h.run(runId)).status).toBe('CANCELLED');
    const rows = await new AttemptLogRepository(db.ds).ofTasks(h.tenantId, [first.job.taskId, second.job.taskId]);
    expect(rows.map((r) => [r.nodeId, r.logs])).toEqual([['n1', 'n1 printed\n']]);
  });

  it("keeps no logs of a stale report, a failure's error with its logs, and gives another tenant none", async () => {
    const h = await coordinatorHarness(db.ds);
    const other = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(1));
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    const held = await claimFirst(h, runId);
    const { job } = held;
    const logs = new AttemptLogRepository(db.ds);

    const stale = await report(h, { ...held, leaseToken: '00000000-0000-4000-8000-000000000000' }, 'from a stale execution\n');
    expect(stale.ignored).toBeTruthy();
    expect(await logs.ofTasks(h.tenantId, [job.taskId])).toEqual([]);

    await h.coordinator.runs.reportFailed(h.tenantId, {
      runId,
      taskId: job.taskId,
      nodeId: job.nodeId,
      attempt: job.attempt,
      leaseToken: held.leaseToken,
      error: 'boom\u0000',
      retryable: false,
      log: { text: 'before the boom\u0000\n', startedAt: at(3), finishedAt: at(4) },
    });
    expect((await h.run(runId)).status).toBe('FAILED');
    expect(await logs.ofTasks(h.tenantId, [job.taskId])).toEqual([
      { taskId: job.taskId, runId, nodeId: 'n1', attempt: 0, startedAt: at(3), finishedAt: at(4), error: 'boom\ufffd', logs: 'before the boom\ufffd\n' },
    ]);
    expect(await logs.ofTasks(other.tenantId, [job.taskId])).toEqual([]);
  });
});

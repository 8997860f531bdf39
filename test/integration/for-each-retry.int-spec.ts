import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowNode } from '@weft/engine';
import { RunCoordinator } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * A retry with failedIterationsOnly on real PostgreSQL: what the reopened aggregate task keeps
 * of its previous settling, read back by the next event from the stored rows.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('retry with failedIterationsOnly', () => {
  it('forgets the error edge the failed node took: once it completes it routes to its normal successor', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(
      def(
        [http('each', { url: 'http://example.test/{{ item }}' }, { for_each: '{{ input.items }}' } as Partial<WorkflowNode>), http('report'), http('alert')],
        [
          { from: 'each', to: 'report' },
          { from: 'each', to: 'alert', on_error: true },
        ],
      ),
      { input: { items: ['a', 'b'] } },
    );
    const [first, second] = h.dispatcher.forNode('each');
    await h.complete('each', 'A', first);
    await h.fail('each', 'down', second);
    await h.complete('alert');
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
    expect((await h.tasks(runId)).each!.branches).toEqual(['alert']);

    await h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'each', failedIterationsOnly: true });
    // Another coordinator (a restart) reads the reopened task from its row, not from a cache.
    const job = h.dispatcher.last('each');
    const restarted = new RunCoordinator(db.ds, h.dispatcher, h.publisher, { now: h.clock.now, logger: h.logger, dispatchWindowFloor: 1_000_000 });
    await restarted.runs.reportCompleted(h.tenantId, { runId, taskId: job.taskId, nodeId: 'each', attempt: job.attempt, output: 'B' });
    const tasks = await h.tasks(runId);
    expect([tasks.each!.status, tasks.each!.branches]).toEqual(['COMPLETED', ['report']]);
    expect(h.dispatcher.last('report').runId).toBe(runId);
    expect(h.dispatcher.forNode('alert')).toHaveLength(1);
  });
});

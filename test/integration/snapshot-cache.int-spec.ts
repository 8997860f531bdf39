import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonValue } from '@weft/engine';
import { RunRepository } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, publishWorkflow } from '../support/builders.js';
import { openReplica, type Replica } from '../support/faults.js';

/**
 * A coordinator keeps the node states its last event of a run left (so an event need not
 * reload every task of its run), and uses them only while no one else has applied an event to
 * the run since — two coordinators, as two processes, take turns on the same runs here.
 */
let db: TestDatabase;
let a: Replica;
let b: Replica;
beforeAll(async () => {
  db = await createTestDatabase();
  [a, b] = await Promise.all([openReplica(db.url), openReplica(db.url)]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await db?.drop();
});

/** Reports the node's current job (as dispatched by either coordinator) completed through `via`. */
async function complete(via: Replica, tenantId: string, runId: string, nodeId: string, output: JsonValue = {}) {
  const job = [...a.dispatcher.jobs, ...b.dispatcher.jobs].filter((j) => j.runId === runId && j.nodeId === nodeId).at(-1)!;
  return via.coordinator.runs.reportCompleted(tenantId, { runId, taskId: job.taskId, nodeId, attempt: job.attempt, output });
}

describe('node states kept between events', () => {
  it('are not used after another process applied an event: each report is applied once, in order', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(
      db.ds,
      tenantId,
      def(
        [http('n1'), http('n2'), http('n3'), http('n4')],
        [
          { from: 'n1', to: 'n2' },
          { from: 'n2', to: 'n3' },
          { from: 'n3', to: 'n4' },
        ],
      ),
    );
    const { runId } = await a.coordinator.runs.startRun(tenantId, { workflowId });
    // a, then b, then a again (its kept states are one event behind), then a once more (fresh).
    expect(await complete(a, tenantId, runId, 'n1')).toEqual({});
    expect(await complete(b, tenantId, runId, 'n2')).toEqual({});
    expect(await complete(a, tenantId, runId, 'n3')).toEqual({});
    expect(await complete(a, tenantId, runId, 'n4', { done: true })).toEqual({});
    const runs = new RunRepository(db.ds);
    expect((await runs.findRun(tenantId, runId))!.status).toBe('SUCCEEDED');
    const events = await runs.eventsOfRun(tenantId, runId);
    expect(events.map((e) => [e.type, e.nodeId, e.ignored])).toEqual([
      ['RunStarted', null, null],
      ['NodeCompleted', 'n1', null],
      ['NodeCompleted', 'n2', null],
      ['NodeCompleted', 'n3', null],
      ['NodeCompleted', 'n4', null],
    ]);
  });

  it('a duplicate report through the process that kept the states is still ignored, and a later one applies', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('n1'), http('n2')], [{ from: 'n1', to: 'n2' }]));
    const { runId } = await a.coordinator.runs.startRun(tenantId, { workflowId });
    expect(await complete(a, tenantId, runId, 'n1')).toEqual({});
    expect((await complete(a, tenantId, runId, 'n1')).ignored).toMatch(/stale or duplicate completion of n1/);
    expect(await complete(a, tenantId, runId, 'n2')).toEqual({});
    expect((await new RunRepository(db.ds).findRun(tenantId, runId))!.status).toBe('SUCCEEDED');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JobProbe, TaskJob } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, fork, http } from '../support/builders.js';

/**
 * The worker keeps a sensitive node's values out of its errors only if it knows the node is
 * sensitive: every job of such a node says so — dispatched with the event that creates it, a
 * retry, relayed from the outbox after a failed enqueue, re-dispatched by the lease sweep — and
 * no other node's job does.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const definition = def(
  [
    fork('split'),
    http('secret', { url: 'http://example.test/x?token={{input.token}}' }, { sensitive: true, retry: { max_attempts: 3, backoff_seconds: 0 } }),
    http('plain'),
  ],
  [edge('split', 'secret'), edge('split', 'plain')],
);

const flags = (jobs: TaskJob[]) => jobs.map((j) => [j.nodeId, j.attempt, j.sensitive === true]);
/** A queue in which no job is live any more (Redis flushed): the sweep re-dispatches every candidate. */
const emptyQueues: JobProbe = { hasJob: async () => false };

describe('jobs of a sensitive node', () => {
  it('are marked when dispatched and retried', async () => {
    const h = await setup();
    await h.start(definition, { input: { token: 's3cr3t-token' } });
    expect(flags(h.dispatcher.jobs)).toEqual([
      ['secret', 0, true],
      ['plain', 0, false],
    ]);
    await h.fail('secret', 'HTTP GET <redacted url> returned status 500');
    expect(flags(h.dispatcher.forNode('secret'))).toEqual([
      ['secret', 0, true],
      ['secret', 1, true],
    ]);
  });

  it('are marked when read back from the database, as when the lease sweep puts lost jobs back in the backlog', async () => {
    const h = await setup();
    h.dispatcher.failNext = 1; // Redis down at commit: both admitted jobs are lost
    const runId = await h.start(definition, { input: { token: 's3cr3t-token' } });
    expect(h.dispatcher.jobs).toEqual([]);
    h.clock.advance(31_000); // past the dispatch lease, and no worker claimed them
    await h.coordinator.lostTasks.sweep(100, emptyQueues); // the other test's tasks are lost too
    expect(flags(h.dispatcher.jobs.filter((j) => j.runId === runId)).sort()).toEqual([
      ['plain', 0, false],
      ['secret', 0, true],
    ]);
  });
});

function setup() {
  return coordinatorHarness(db.ds);
}

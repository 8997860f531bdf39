import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowDefinition } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, fork, http, join, sw, wait, waitFor } from '../support/builders.js';
import { sentMessages } from '../support/pg-messages.js';
import { chain, startRows } from '../support/fenced-steps.js';

/**
 * Attacks on starts decided from memory: what a fenced start writes for first nodes of every
 * kind, values the statement carries as literals, and many starts of one idempotency key at
 * once. Each compares with the locking path (a harness with `fencedSteps: false`). Real
 * PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Two harnesses with the same workflow published, each started once (the fenced one now remembers it). */
async function pair(definition: WorkflowDefinition, workflowId?: string) {
  const fenced = await coordinatorHarness(db.ds);
  const locking = await coordinatorHarness(db.ds, { fencedSteps: false });
  const a = await fenced.publish(definition, workflowId);
  const b = await locking.publish(definition, workflowId);
  await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a.workflowId });
  await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b.workflowId });
  return { fenced, locking, a: a.workflowId, b: b.workflowId };
}

const firsts: Array<[string, WorkflowDefinition]> = [
  ['SWITCH', def([sw('s'), http('yes'), http('no')], [edge('s', 'yes', 'input.go == true'), edge('s', 'no', 'input.go != true')])],
  ['FORK', def([fork('f'), http('a'), http('b', undefined, { queue: 'other' }), join('j')], [edge('f', 'a'), edge('f', 'b'), edge('a', 'j'), edge('b', 'j')])],
  ['WAIT', def([wait('w', 30), http('after')], [edge('w', 'after')])],
  ['WAIT 0 seconds', def([wait('w', 0), http('after')], [edge('w', 'after')])],
  ['WAIT_FOR_EVENT', def([waitFor('e', 'go', 60), http('after')], [edge('e', 'after')])],
  ['for_each', def([http('each', { url: 'http://example.test/{{ item }}' }, { for_each: '{{ input.items }}' })])],
  ['an HTTP node whose spec fails to resolve', def([http('bad', { url: '{{ input.missing.deeper }}' }), http('next')], [edge('bad', 'next')])],
  ['two roots on two queues, with a priority', { ...def([http('r1'), http('r2', undefined, { queue: 'q2' })]), priority: 1 }],
];

/** First nodes a start decided from memory writes itself (the others need a row read, or end the run at once). */
const fencedKinds = new Set(['SWITCH', 'FORK', 'WAIT', 'WAIT 0 seconds', 'two roots on two queues, with a priority']);

describe('a fenced start writes what the locking path writes', () => {
  it.each(firsts)('when the first node is %s', async (kind, definition) => {
    const { fenced, locking, a, b } = await pair(definition);
    const input = { go: true, items: ['x', 'y', 'z'] };
    let viaFence!: { runId: string; created: boolean };
    const sent = await sentMessages(async () => (viaFence = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, input })));
    // The kinds the statement can carry went through the committer, with no transaction of their own.
    if (fencedKinds.has(kind)) {
      expect(sent.filter((x) => /^BEGIN\b/.test(x))).toEqual([]);
      expect(fenced.coordinator.committer.stats).toMatchObject({ statements: 1, failed: 0 });
    }
    const viaLocks = await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b, input });
    expect(await startRows(fenced, viaFence.runId)).toEqual(await startRows(locking, viaLocks.runId));
    expect(viaFence.created).toBe(true);
  });

  it('when the start names a start node, and refuses an unknown one with the locking path’s error', async () => {
    const { fenced, locking, a, b } = await pair(chain(3));
    const viaFence = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, startNodeId: 'n2' });
    const viaLocks = await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b, startNodeId: 'n2' });
    expect(await startRows(fenced, viaFence.runId)).toEqual(await startRows(locking, viaLocks.runId));

    const fencedError = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, startNodeId: 'nope' }).catch((e: unknown) => e);
    const lockingError = await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b, startNodeId: 'nope' }).catch((e: unknown) => e);
    expect(fencedError).toBeInstanceOf(Error);
    expect(fencedError).toEqual(lockingError);
  });
});

describe('values a fenced start carries as literals', () => {
  const odd = [`o'brien`, `back\\slash\\`, `E'\\''; DROP TABLE runs; --`, 'ünï€ødé 🚀 \u2028', '$1 $2::int', `quote"d`, 'x'.repeat(1024)];

  it.each(odd)('idempotency key %p: stored as given, found again as given', async (key) => {
    const { fenced, a } = await pair(chain(2));
    const before = fenced.coordinator.committer.stats.statements;
    const first = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, idempotencyKey: key, input: { key } });
    expect(first.created).toBe(true);
    // It went through the committer, and wrote.
    expect(fenced.coordinator.committer.stats.statements).toBe(before + 1);
    expect((await fenced.run(first.runId)).idempotencyKey).toBe(key);
    expect((await fenced.run(first.runId)).input).toEqual({ key });
    const again = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, idempotencyKey: key, input: { key } });
    expect(again).toEqual({ runId: first.runId, created: false });
  });

  it('a workflow id with quotes, backslashes and unicode', async () => {
    const { fenced, locking, a, b } = await pair(chain(2), `wf o'neil \\ "ü" 🚀`);
    const input = { 'k\\"\'': ['\\u0000 is text here', '\\\\', "'"], deep: JSON.parse('['.repeat(60) + ']'.repeat(60)) as unknown };
    const viaFence = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, input: input as never, config: { "it's": '\\' } });
    const viaLocks = await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b, input: input as never, config: { "it's": '\\' } });
    expect(await startRows(fenced, viaFence.runId)).toEqual(await startRows(locking, viaLocks.runId));
    expect((await fenced.run(viaFence.runId)).workflowId).toBe(a);
  });
});

describe('many fenced starts of one idempotency key at once', () => {
  it('create exactly one run; every other start gets it back, created false', async () => {
    const { fenced, a } = await pair(chain(2));
    const results = await Promise.all(
      Array.from({ length: 24 }, () => fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a, idempotencyKey: 'same', input: { order: 7 } })),
    );
    const created = results.filter((r) => r.created);
    expect(created).toHaveLength(1);
    expect(new Set(results.map((r) => r.runId))).toEqual(new Set([created[0]!.runId]));
    const runId = created[0]!.runId;
    expect(await fenced.events(runId)).toHaveLength(1);
    expect(Object.keys(await fenced.tasks(runId))).toEqual(['n1']);
    expect(fenced.dispatcher.jobs.filter((j) => j.runId === runId)).toHaveLength(1);
    expect(fenced.coordinator.committer.stats.failed).toBe(0);
  });
});

describe('fenced starts of two tenants in the committer’s messages', () => {
  it('keep each tenant’s runs, versions and idempotency keys apart', async () => {
    const a = await coordinatorHarness(db.ds);
    const b = await coordinatorHarness(db.ds, { fencedSteps: false });
    // One workflow id in both tenants, with different definitions; one coordinator serves both.
    await a.publish(chain(2), 'shared');
    await b.publish(chain(3), 'shared');
    expect((await b.publish(chain(4), 'shared')).version).toBe(2);
    const c = a.coordinator;
    await c.runs.startRun(a.tenantId, { workflowId: 'shared' });
    await c.runs.startRun(b.tenantId, { workflowId: 'shared' });

    const starts = Array.from({ length: 16 }, (_, i) => {
      const t = i % 2 === 0 ? a : b;
      return c.runs.startRun(t.tenantId, { workflowId: 'shared', idempotencyKey: 'k', input: { tenant: t === a ? 'a' : 'b' } }).then((r) => ({ t, ...r }));
    });
    const results = await Promise.all(starts);
    for (const t of [a, b]) {
      const mine = results.filter((r) => r.t === t);
      const created = mine.filter((r) => r.created);
      expect(created).toHaveLength(1);
      expect(new Set(mine.map((r) => r.runId)).size).toBe(1);
      const run = await t.run(created[0]!.runId);
      expect(run).toMatchObject({ tenantId: t.tenantId, workflowId: 'shared', idempotencyKey: 'k' });
      expect(run.version).toBe(t === a ? 1 : 2);
      expect(Object.keys(await t.tasks(run.id)).sort()).toEqual(['n1']);
      expect((await t.events(run.id)).map((e) => e.type)).toEqual(['RunStarted']);
    }
    // The starts went through the committer, several to a message.
    expect(c.committer.stats.statements).toBeGreaterThanOrEqual(16);
    expect(c.committer.stats.commits).toBeLessThan(c.committer.stats.statements);
    expect(c.committer.stats.failed).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowDefinition, WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * Flow control under attack by its own tenant: start strategies mixed in one group, node keys
 * that resolve to no valid key, the same key text in two tenants, and cancel storms. Real
 * PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function limited(concurrency: WorkflowDefinition['concurrency'], extra: Partial<WorkflowDefinition> = {}): WorkflowDefinition {
  return { ...def([http('a')]), concurrency, ...extra };
}

async function running(tenantId: string, groupKey: string): Promise<number> {
  const [row] = (await db.owner.query(`SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND concurrency_group = $2 AND status = 'RUNNING'`, [
    tenantId,
    groupKey,
  ])) as { n: number }[];
  return row!.n;
}

describe('cancel_oldest in a group that has QUEUED runs', () => {
  it('tenant scope: a queue workflow and a cancel_oldest workflow share a key', async () => {
    const h = await coordinatorHarness(db.ds);
    const q = await h.publish(limited({ key: 'k', limit: 1, scope: 'tenant', strategy: 'queue' }));
    const c = await h.publish(limited({ key: 'k', limit: 1, scope: 'tenant', strategy: 'cancel_oldest' }));
    const r1 = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: q.workflowId })).runId;
    const r2 = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: q.workflowId })).runId;
    expect((await h.run(r2)).status).toBe('QUEUED');
    const r3 = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: c.workflowId })).runId;
    expect((await h.run(r1)).status).toBe('CANCELLED');
    expect((await h.run(r2)).status).toBe('QUEUED');
    expect((await h.run(r3)).status).toBe('RUNNING');
    expect(await running(h.tenantId, 'tenant:k')).toBe(1);
  });

  it('a new version switches the queue strategy to cancel_oldest', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(limited({ key: 'k', limit: 1 }));
    const r1 = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const r2 = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    expect((await h.run(r2)).status).toBe('QUEUED');
    await h.publish(limited({ key: 'k', limit: 1, strategy: 'cancel_oldest' }), workflowId);
    const r3 = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    expect((await h.run(r1)).status).toBe('CANCELLED');
    expect((await h.run(r2)).status).toBe('QUEUED');
    expect((await h.run(r3)).status).toBe('RUNNING');
    expect(await running(h.tenantId, `workflow:${workflowId}/k`)).toBe(1);
  });
});

describe('node keys that resolve to no valid key at activation', () => {
  const bad: [string, unknown][] = [
    ['list', ['a']],
    ['map', { a: 1 }],
    ['null', null],
    ['bool', true],
    ['long', 'x'.repeat(257)],
  ];
  for (const [name, k] of bad) {
    it(`concurrency key ${name} fails the task, never leaves it QUEUED`, async () => {
      const h = await coordinatorHarness(db.ds);
      const runId = await h.start(def([http('a', undefined, { concurrency: { key: '{{ input.k }}', limit: 1 } } as Partial<WorkflowNode>)]), {
        input: { k } as never,
      });
      const run = await h.run(runId);
      expect(run.status).toBe('FAILED');
    });
  }
  it('rate key that throws at activation (for_each, item 3 bad)', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(
      def([
        http('a', { url: 'http://x.test/{{ item }}' }, {
          for_each: '{{ input.items }}',
          rate_limit: { key: '{{ item.k.z }}', limit: 1, per_seconds: 1 },
        } as Partial<WorkflowNode>),
      ]),
      { input: { items: [{ k: { z: 'a' } }, { k: { z: 'b' } }, { k: { z: 'c' } }, { k: 1 }] } },
    );
    const run = await h.run(runId);
    expect(run.status).toBe('FAILED');
    expect(run.error).toContain('iteration 3: rate_limit.key of node a');
  });
});

describe('the same node key text in two tenants', () => {
  it('concurrency and rate keys are independent', async () => {
    const a = await coordinatorHarness(db.ds, { dispatchWindowFloor: 100 });
    const b = await coordinatorHarness(db.ds, { dispatchWindowFloor: 100, now: a.clock.now });
    const d = def([
      http('a', undefined, { concurrency: { key: 'shared', limit: 1 }, rate_limit: { key: 'shared', limit: 1, per_seconds: 3600 } } as Partial<WorkflowNode>),
    ]);
    const ra = await a.start(d);
    const rb = await b.start(d);
    expect(a.dispatcher.jobs.filter((j) => j.runId === ra)).toHaveLength(1);
    expect(b.dispatcher.jobs.filter((j) => j.runId === rb)).toHaveLength(1);
  });
});

describe('a node key CEL makes unstorable', () => {
  for (const [name, tpl] of [
    ['nul', '{{ input.k + "\\u0000" }}'],
    ['nul-x', '{{ input.k + "\\x00" }}'],
    ['surrogate', '{{ input.k + "\\ud800" }}'],
  ] as const) {
    it(name, async () => {
      const h = await coordinatorHarness(db.ds);
      const runId = await h.start(
        def([http('a', undefined, { concurrency: { key: tpl, limit: 1 }, rate_limit: { key: tpl, limit: 1, per_seconds: 1 } } as Partial<WorkflowNode>)]),
        { input: { k: 'x' } },
      );
      const run = await h.run(runId);
      const tasks = await h.tasks(runId);
      expect(run.status).toBe('FAILED');
      expect(tasks.a).toMatchObject({ status: 'FAILED', error: expect.stringContaining('concurrency.key of node a') });
    });
  }
});

describe('a cancel storm under a node concurrency limit', () => {
  it('frees every slot and leaves no row stuck', async () => {
    const h = await coordinatorHarness(db.ds, { dispatchWindowFloor: 100 });
    const fan = def([
      http('a', { url: 'http://x.test/{{ item }}' }, { for_each: '{{ input.items }}', concurrency: { key: 'storm', limit: 2 } } as Partial<WorkflowNode>),
    ]);
    const { workflowId } = await h.publish(fan);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { items: [1, 2, 3, 4, 5] } })).runId);
    // Two attempts are RUNNING on a worker when the cancels land.
    for (const j of h.dispatcher.jobs.slice(0, 2)) await h.coordinator.leases.markRunning(h.tenantId, j.taskId, j.attempt);
    await Promise.all(ids.map((runId) => h.coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'storm' })));
    const [c] = (await db.owner.query(
      `SELECT count(*) FILTER (WHERE status IN ('PENDING','RUNNING'))::int AS active, count(*) FILTER (WHERE status = 'QUEUED')::int AS queued FROM tasks WHERE tenant_id = $1 AND flow_concurrency_key = 'storm'`,
      [h.tenantId],
    )) as { active: number; queued: number }[];
    expect(c!.active).toBe(0);
    const before = h.dispatcher.jobs.length;
    const next = (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { items: [1] } })).runId;
    for (let i = 0; i < 100 && h.dispatcher.jobs.length === before; i++) await new Promise((r) => setTimeout(r, 25));
    expect(h.dispatcher.jobs.some((j) => j.runId === next)).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { RunRepository, createDataSource } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain } from '../support/fenced-steps.js';
import { def, wait } from '../support/builders.js';
import { PlanCapture, explainEveryStatement, type ExecutedPlan } from '../support/plan-capture.js';

/**
 * Run labels in PostgreSQL: both start paths (one fenced statement, and the locking transaction)
 * write a run's labels and its `run_labels` rows, a repeated idempotency key writes none again,
 * a child run has none; and the label filter finds a tenant's runs through `run_labels`' keys as
 * the runtime role (under row-level security) over a few thousand runs of several tenants,
 * without reading the tenant's runs whole. Asserted on plans, never on times.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The `run_labels` rows of run `runId`, as `key=value` sorted (read as the owner). */
async function labelRows(runId: string): Promise<string[]> {
  const rows: { key: string; value: string }[] = await db.owner.query(`SELECT key, value FROM run_labels WHERE run_id = $1`, [runId]);
  return rows.map((r) => `${r.key}=${r.value}`).sort();
}

describe('a start with labels', () => {
  it('writes the labels and their rows on the fenced path and on the locking path alike', async () => {
    const fenced = await coordinatorHarness(db.ds);
    const locking = await coordinatorHarness(db.ds, { fencedSteps: false });
    const a = await fenced.publish(chain(2));
    const b = await locking.publish(chain(2));
    // The first start of a workflow in a process takes the locking path; the next one is fenced.
    await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a.workflowId });
    const labels = { team: 'pay', 'env.kind': 'prod' };
    const before = fenced.coordinator.committer.stats.statements;
    const viaFence = await fenced.coordinator.runs.startRun(fenced.tenantId, { workflowId: a.workflowId, labels });
    expect(fenced.coordinator.committer.stats.statements).toBe(before + 1);
    const viaLocks = await locking.coordinator.runs.startRun(locking.tenantId, { workflowId: b.workflowId, labels });

    for (const [h, id] of [
      [fenced, viaFence.runId],
      [locking, viaLocks.runId],
    ] as const) {
      expect((await h.run(id)).labels).toEqual(labels);
      expect(await labelRows(id)).toEqual(['env.kind=prod', 'team=pay']);
    }
    expect(viaFence.run?.labels).toEqual(labels);
    expect(viaLocks.run?.labels).toEqual(labels);
  });

  it('writes no rows for a run without labels, nor again for a repeated idempotency key', async () => {
    const h = await coordinatorHarness(db.ds, { fencedSteps: false });
    const { workflowId } = await h.publish(chain(1));
    const plain = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    expect((await h.run(plain.runId)).labels).toEqual({});
    expect(await labelRows(plain.runId)).toEqual([]);
    const first = await h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'k', labels: { a: '1' } });
    const again = await h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'k', labels: { a: '2' } });
    expect(again).toMatchObject({ runId: first.runId, created: false });
    expect(await labelRows(first.runId)).toEqual(['a=1']);
  });

  it('refuses labels over the limits before writing anything', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(chain(1));
    await expect(h.coordinator.runs.startRun(h.tenantId, { workflowId, labels: { team: 'x'.repeat(257) } })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      problems: [{ path: 'labels.team', message: expect.stringContaining('at most 256') }],
    });
    expect(await new RunRepository(db.ds).countRuns(h.tenantId)).toBe(0);
  });
});

describe('the label filter over many runs', () => {
  let ds: DataSource;
  const capture = new PlanCapture();
  let tenantId: string;

  beforeAll(async () => {
    await explainEveryStatement(db.owner, db.name);
    ds = createDataSource(db.url, { poolSize: 2, applicationName: 'weft-test-label-plans' });
    await ds.initialize();
    capture.attach(ds);
    const h = await coordinatorHarness(ds);
    tenantId = h.tenantId;
    const { workflowId } = await h.publish(def([wait('w', 5)]));
    // This tenant and 3 others, 1,500 runs each; two thirds labelled: a common env, a rare batch.
    const others = `SELECT id FROM tenants WHERE name LIKE 'labels other %'`;
    for (const [text, params] of [
      [`INSERT INTO tenants (id, name) SELECT gen_random_uuid(), 'labels other ' || g FROM generate_series(1, 3) g`, []],
      [`INSERT INTO workflows (tenant_id, id, latest_version) SELECT id, $1, 1 FROM (${others}) t`, [workflowId]],
      [
        `INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum) SELECT id, $1, 1, '{}', '{}', 'c' FROM (${others}) t`,
        [workflowId],
      ],
      [
        `INSERT INTO runs (tenant_id, id, workflow_id, version, status, event_seq, created_at, labels)
         SELECT t.id, gen_random_uuid(), $2, 1, 'SUCCEEDED', 1, now() - g * interval '1 second',
                CASE WHEN g % 3 = 0 THEN '{}'::jsonb ELSE jsonb_build_object('env', CASE WHEN g % 2 = 0 THEN 'prod' ELSE 'dev' END, 'batch', (g % 250)::text) END
           FROM (SELECT $1::uuid AS id UNION ALL ${others}) t CROSS JOIN generate_series(1, 1500) g`,
        [tenantId, workflowId],
      ],
      [
        `INSERT INTO run_labels (tenant_id, key, value, run_id) SELECT r.tenant_id, e.key, e.value, r.id FROM runs r, jsonb_each_text(r.labels) e ON CONFLICT DO NOTHING`,
        [],
      ],
      [`ANALYZE`, []],
    ] as const) {
      await db.owner.query(text, [...params]);
    }
  });
  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
  });

  /** Index names a plan uses, and the tables it reads whole. */
  const indexesOf = (p: ExecutedPlan) => [...p.plan.matchAll(/(?: using |Bitmap Index Scan on )(\w+)/g)].map((m) => m[1]!);
  const seqScansOf = (p: ExecutedPlan) => [...p.plan.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]!);

  async function planned<T>(read: () => Promise<T>): Promise<{ value: T; plans: ExecutedPlan[] }> {
    capture.plans.length = 0;
    capture.recording = true;
    try {
      const value = await read();
      return { value, plans: capture.plans.filter((p) => p.query.includes('run_labels')) };
    } finally {
      capture.recording = false;
    }
  }

  it("counts and pages a tenant's runs with a rare label through run_labels' key, reading no table whole", async () => {
    const runs = new RunRepository(ds);
    // g % 250 = 7 and g % 3 <> 0: 6 of the 1,500 runs (g = 7, 257, 507, 757, 1007, 1257 less those divisible by 3: 507, 1257 → 4).
    const counted = await planned(() => runs.countRuns(tenantId, { labels: { batch: '7' } }));
    expect(counted.value).toBe(4);
    const paged = await planned(() => runs.listRuns(tenantId, { labels: { batch: '7', env: 'dev' } }, 50, null, []));
    expect(paged.value.edges.map((e) => e.node.labels)).toEqual(Array(4).fill({ env: 'dev', batch: '7' }));
    for (const { plans } of [counted, paged]) {
      expect(plans.length).toBeGreaterThan(0);
      for (const p of plans) {
        expect(seqScansOf(p)).toEqual([]);
        expect(indexesOf(p)).toContain('run_labels_pkey');
      }
    }
  });

  it('pages the newest runs with a common label, and counts them', async () => {
    const runs = new RunRepository(ds);
    const { value, plans } = await planned(() => runs.listRuns(tenantId, { labels: { env: 'prod' } }, 20, null, []));
    expect(value.edges).toHaveLength(20);
    for (const e of value.edges) expect(e.node.labels.env).toBe('prod');
    for (const p of plans) expect(seqScansOf(p)).not.toContain('runs');
    // g even and not divisible by 3: 500 of 1,500.
    expect(await runs.countRuns(tenantId, { labels: { env: 'prod' } })).toBe(500);
    expect(await runs.countRuns(tenantId, { labels: { env: 'prod', batch: 'none' } })).toBe(0);
  });
});

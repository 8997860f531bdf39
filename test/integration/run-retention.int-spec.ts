import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDataSource, RunRetentionRepository, TenantSettingsRepository } from '@weft/persistence';
import type { WorkflowDefinition } from '@weft/engine';
import { EngineTelemetry, WeftMetrics } from '@weft/platform';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, waitFor } from '../support/builders.js';
import { explainEveryStatement, PlanCapture } from '../support/plan-capture.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * Run retention on the real database: which run trees the scheduler's pass deletes, with which
 * rows, and which it keeps. Ages are made by moving `finished_at` into the past as the owner, so
 * the pass compares them with the database's own clock and nothing waits.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The tables holding a run's rows, each counted for the runs given (as the owner, across tenants). */
const RUN_TABLES = ['runs', 'tasks', 'run_events', 'signals', 'task_attempt_logs', 'outbox'] as const;

async function rowsOf(runIds: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of RUN_TABLES) {
    const column = table === 'runs' ? 'id' : 'run_id';
    const r = (await db.owner.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = ANY($1::uuid[])`, [runIds])) as { n: number }[];
    out[table] = r[0]!.n;
  }
  return out;
}

/** Moves the end of run `runId` `days` days (and a minute) into the past by the database's clock. */
async function endedDaysAgo(runId: string, days: number, status?: string): Promise<void> {
  await db.owner.query(`UPDATE runs SET finished_at = now() - make_interval(days => $2) - interval '1 minute', status = COALESCE($3, status) WHERE id = $1`, [
    runId,
    days,
    status ?? null,
  ]);
}

async function status(runId: string): Promise<string | undefined> {
  const r = (await db.owner.query(`SELECT status FROM runs WHERE id = $1`, [runId])) as { status: string }[];
  return r[0]?.status;
}

const child: WorkflowDefinition = def([http('fetch')]);

/** A parent that waits for signal `go`, calls `childId` through SUBWORKFLOW, then takes signal `note`. */
const parent = (childId: string): WorkflowDefinition =>
  def(
    [waitFor('gate', 'go'), { node_id: 'call', type: 'SUBWORKFLOW', spec: { workflow: childId } }, waitFor('later', 'note')],
    [edge('gate', 'call'), edge('call', 'later')],
  );

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** Starts a parent, signals it, so its child runs: returns the parent's and the child's ids, the child RUNNING. */
async function treeWithRunningChild(h: Harness): Promise<{ root: string; child: string }> {
  const { workflowId: childId } = await h.publish(child);
  const root = await h.start(parent(childId));
  // No node waits for `note` yet: it is buffered on the run (a `signals` row), taken by `later`.
  await h.coordinator.runs.sendSignal(h.tenantId, { runId: root, name: 'note', payload: { n: 1 } });
  await h.coordinator.runs.sendSignal(h.tenantId, { runId: root, name: 'go', payload: { ok: true } });
  const rows = (await db.owner.query(`SELECT id FROM runs WHERE parent_run_id = $1`, [root])) as { id: string }[];
  expect(rows).toHaveLength(1);
  return { root, child: rows[0]!.id };
}

/** A tree whose child and root both SUCCEEDED, with an attempt log on the child's task. */
async function finishedTree(h: Harness): Promise<{ root: string; child: string }> {
  const tree = await treeWithRunningChild(h);
  const job = h.dispatcher.last('fetch');
  await db.owner.query(
    `INSERT INTO task_attempt_logs (tenant_id, task_id, attempt, run_id, node_id, started_at, finished_at, logs)
     VALUES ($1, $2, 0, $3, 'fetch', now(), now(), 'fetched')`,
    [h.tenantId, job.taskId, job.runId],
  );
  await h.complete('fetch', { ok: 1 }, job);
  for (const deadline = Date.now() + 30_000; (await status(tree.root)) !== 'SUCCEEDED';) {
    if (Date.now() > deadline) throw new Error(`root ${tree.root} is ${await status(tree.root)}`);
    await h.coordinator.timers.fireDue(100);
  }
  expect(await status(tree.child)).toBe('SUCCEEDED');
  return tree;
}

describe('run retention', () => {
  it('deletes an expired finished tree with every row of its runs, and keeps every tree it must', async () => {
    const deleted: { tenantId: string; roots: number; runs: number }[] = [];
    const metrics = new WeftMetrics({ processMetrics: false });
    const telemetry = new EngineTelemetry(metrics);
    const quiet = () => undefined;
    const h = await coordinatorHarness(db.ds, {
      observer: {
        runStarted: quiet,
        runFinished: quiet,
        leaseRecovered: quiet,
        timerFired: quiet,
        scheduleFired: quiet,
        scheduleSkipped: quiet,
        runsDeleted: (n) => {
          deleted.push(n);
          telemetry.runsDeleted(n);
        },
      },
    });
    await new TenantSettingsRepository(db.ds).setRetentionDays(h.tenantId, 30);

    const expired = await finishedTree(h);
    const recent = await finishedTree(h);
    const runningChild = await treeWithRunningChild(h);
    const expiredRows = await rowsOf([expired.root, expired.child]);
    // Every kind of row the tree holds exists before the pass, so its absence after means deletion.
    for (const table of RUN_TABLES) expect({ table, n: expiredRows[table]! > 0 }).toEqual({ table, n: true });

    await endedDaysAgo(expired.root, 31);
    await endedDaysAgo(recent.root, 29);
    // Its root ended long ago (cancelled), but a child still runs: the tree stays whole.
    await endedDaysAgo(runningChild.root, 400, 'CANCELLED');
    // Runs not ended, whatever their finished_at says.
    const notEnded: string[] = [];
    for (const s of ['RUNNING', 'QUEUED', 'PENDING']) {
      const runId = await h.start(def([waitFor('gate', 'go')]));
      await endedDaysAgo(runId, 400, s);
      notEnded.push(runId);
    }

    // Another tenant with no retention: its old finished tree stays.
    const other = await coordinatorHarness(db.ds);
    const otherTree = await finishedTree(other);
    await endedDaysAgo(otherTree.root, 4000);
    const otherRows = await rowsOf([otherTree.root, otherTree.child]);

    const pass = await h.coordinator.retention.sweep();
    expect(pass).toEqual({ roots: 1, runs: 2, cut: false });
    expect(await rowsOf([expired.root, expired.child])).toEqual(Object.fromEntries(RUN_TABLES.map((t) => [t, 0])));
    expect(await status(recent.root)).toBe('SUCCEEDED');
    expect((await rowsOf([recent.root, recent.child])).tasks).toBe(expiredRows.tasks);
    expect(await status(runningChild.root)).toBe('CANCELLED');
    expect(await status(runningChild.child)).toBe('RUNNING');
    for (const [i, runId] of notEnded.entries()) expect(await status(runId)).toBe(['RUNNING', 'QUEUED', 'PENDING'][i]);
    expect(await rowsOf([otherTree.root, otherTree.child])).toEqual(otherRows);

    expect(deleted).toEqual([{ tenantId: h.tenantId, roots: 1, runs: 2 }]);
    expect(await metrics.text()).toMatch(/^weft_retention_deleted_total 2$/m);
    // Nothing more to do: a second pass deletes nothing.
    expect(await h.coordinator.retention.sweep()).toEqual({ roots: 0, runs: 0, cut: false });
  });

  it('keeps everything once the retention is cleared (null)', async () => {
    const h = await coordinatorHarness(db.ds);
    const settings = new TenantSettingsRepository(db.ds);
    await settings.setRetentionDays(h.tenantId, 1);
    const tree = await finishedTree(h);
    await endedDaysAgo(tree.root, 3650);
    expect(await settings.setRetentionDays(h.tenantId, null)).toEqual({ retentionDays: null });
    expect(await h.coordinator.retention.sweep()).toEqual({ roots: 0, runs: 0, cut: false });
    expect(await status(tree.root)).toBe('SUCCEEDED');
    expect(await status(tree.child)).toBe('SUCCEEDED');
  });

  it('deletes a large backlog in bounded batches, tenants in turn, and each tree once with two schedulers at once', async () => {
    const a = await coordinatorHarness(db.ds);
    const b = await coordinatorHarness(db.ds);
    const settings = new TenantSettingsRepository(db.ds);
    for (const h of [a, b]) {
      await settings.setRetentionDays(h.tenantId, 7);
      const runId = await h.start(def([http('only')]));
      // 250 more ended top-level runs per tenant, written as the owner beside the one real run.
      await db.owner.query(
        `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, event_seq, created_at, updated_at, finished_at)
         SELECT r.tenant_id, gen_random_uuid(), r.workflow_id, r.version, 'FAILED', '{}', '{}', 0, now(), now(), now() - interval '8 days'
           FROM runs r, generate_series(1, 250) WHERE r.id = $1`,
        [runId],
      );
    }
    const countOf = async (tenantId: string) =>
      ((await db.owner.query(`SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND status = 'FAILED'`, [tenantId])) as { n: number }[])[0]!.n;

    // One statement: at most 100 roots, and no more once its run bound is reached.
    const repo = new RunRetentionRepository(db.ds);
    expect(await repo.deleteExpired(a.tenantId, 100, 5_000)).toEqual({ roots: 100, runs: 100 });
    expect(await repo.deleteExpired(a.tenantId, 100, 10)).toEqual({ roots: 10, runs: 10 });
    expect(await countOf(a.tenantId)).toBe(140);
    // Passes out of time stop after their first batch, and each starts with the tenant after
    // the one the last stopped at: a, then b, then a again, however much each has left.
    expect(await a.coordinator.retention.sweep(0)).toEqual({ roots: 100, runs: 100, cut: true });
    expect([await countOf(a.tenantId), await countOf(b.tenantId)]).toEqual([40, 250]);
    expect(await a.coordinator.retention.sweep(0)).toEqual({ roots: 100, runs: 100, cut: true });
    expect([await countOf(a.tenantId), await countOf(b.tenantId)]).toEqual([40, 150]);
    expect(await a.coordinator.retention.sweep(0)).toEqual({ roots: 40, runs: 40, cut: true });
    expect([await countOf(a.tenantId), await countOf(b.tenantId)]).toEqual([0, 150]);
    // Two schedulers at once: each tree is deleted once, by one of them.
    const passes = await Promise.all([a.coordinator.retention.sweep(), b.coordinator.retention.sweep()]);
    expect(passes.reduce((n, p) => n + p.roots, 0)).toBe(150);
    expect(await countOf(a.tenantId)).toBe(0);
    expect(await countOf(b.tenantId)).toBe(0);
  });

  it('costs an index probe when nothing expired, over tables full of other runs', async () => {
    const plansDb = await createTestDatabase();
    try {
      await explainEveryStatement(plansDb.owner, plansDb.name);
      const ds = createDataSource(plansDb.url, { poolSize: 2, applicationName: 'weft-test-retention-plans' });
      await ds.initialize();
      const capture = new PlanCapture();
      capture.attach(ds);
      try {
        const h = await coordinatorHarness(ds);
        await new TenantSettingsRepository(ds).setRetentionDays(h.tenantId, 30);
        const runId = await h.start(def([http('only')]));
        // 20,000 top-level runs ended within the retention (kept), each with a task and its outbox row.
        await plansDb.owner.query(
          `INSERT INTO runs (tenant_id, id, workflow_id, version, status, input, config, event_seq, created_at, updated_at, finished_at)
           SELECT r.tenant_id, gen_random_uuid(), r.workflow_id, r.version, 'SUCCEEDED', '{}', '{}', 0, now(), now(), now() - make_interval(mins => g)
             FROM runs r, generate_series(1, 20000) g WHERE r.id = $1`,
          [runId],
        );
        await plansDb.owner.query(
          `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, queue, status, attempt, finished_at)
           SELECT tenant_id, gen_random_uuid(), id, 'only', 'HTTP', 'http', 'COMPLETED', 0, finished_at FROM runs WHERE id <> $1`,
          [runId],
        );
        await plansDb.owner.query(
          `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, enqueued_at)
           SELECT tenant_id, run_id, id, 0, 'http', now(), now() FROM tasks WHERE run_id <> $1`,
          [runId],
        );
        await plansDb.owner.query(`ANALYZE`);
        capture.recording = true;
        expect(await h.coordinator.retention.sweep()).toEqual({ roots: 0, runs: 0, cut: false });
        capture.recording = false;
        const plans = capture.plans.filter((p) => p.query.includes('roots_gone'));
        expect(plans).toHaveLength(1);
        // The cutoff bounds the index range: an idle tenant's scan ends at its first recent run.
        // Without child runs the search's index of every finished run costs the planner the same.
        expect(plans[0]!.plan).toMatch(
          /Index Scan using (runs_retention|runs_tenant_finished) on runs r .*\n\s*Index Cond: \(\(tenant_id = '[0-9a-f-]+'::uuid\) AND .*\(finished_at < \$\d+\)\)/,
        );
        expect(plans[0]!.plan).not.toMatch(/Seq Scan on (runs|tasks|outbox)/);
      } finally {
        await ds.destroy();
      }
    } finally {
      await plansDb.drop();
    }
  });
});

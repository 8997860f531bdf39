import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { TenantRepository, createDataSource } from '@weft/persistence';
import type { JobProbe } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, edge, http, wait } from '../support/builders.js';
import { PlanCapture, explainEveryStatement, type ExecutedPlan } from '../support/plan-capture.js';

/**
 * The hot statements find their rows through the tenant-first keys. Over tables that already
 * hold other tenants' rows (and `ANALYZE`d, as autovacuum would), a run goes through its hot path
 * — start, a worker's claim and heartbeat, reports (one taking the next attempt eagerly), the
 * outbox relay, the lease sweep, a due timer, an API key lookup — as the runtime role, and
 * PostgreSQL's `auto_explain` hands back the plan of every statement it executed. No plan may
 * scan a whole tenant table, and the run lock, the claim and the history append must use the
 * keys named here. Asserted on plans, never on times.
 */

const TENANT_TABLES = ['api_keys', 'outbox', 'run_events', 'runs', 'signals', 'tasks', 'workflow_versions', 'workflows'];

let db: TestDatabase;
let ds: DataSource;
let h: Awaited<ReturnType<typeof coordinatorHarness>>;
let chainId: string;
let waitingId: string;
const capture = new PlanCapture();

beforeAll(async () => {
  db = await createTestDatabase();
  await explainEveryStatement(db.owner, db.name);
  ds = createDataSource(db.url, { poolSize: 4, applicationName: 'weft-test-plans' });
  await ds.initialize();
  capture.attach(ds);
  h = await coordinatorHarness(ds);
  ({ workflowId: chainId } = await h.publish(def([http('a'), http('b')], [edge('a', 'b')])));
  ({ workflowId: waitingId } = await h.publish(def([wait('w', 5)])));
  // History: 20 more tenants, each with 50 workflows and 100 keys; every tenant (this one too)
  // with 200 finished runs of 10 tasks, their outbox rows and history. Then statistics, as
  // autovacuum would gather them.
  await db.owner.query(`
    INSERT INTO tenants (id, name) SELECT gen_random_uuid(), 'other ' || g FROM generate_series(1, 20) g;
    INSERT INTO api_keys (tenant_id, id, name, role, key_hash, key_prefix)
      SELECT t.id, gen_random_uuid(), 'k' || g, 'admin', md5(t.id::text || g) || md5(g::text || t.id::text), 'weft_' || substr(md5(t.id::text || g), 1, 8)
        FROM tenants t CROSS JOIN generate_series(1, 100) g;
    INSERT INTO workflows (tenant_id, id, latest_version) SELECT t.id, 'old-' || g, 1 FROM tenants t CROSS JOIN generate_series(1, 50) g;
    INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum)
      SELECT tenant_id, id, 1, '{}', '{}', 'c' FROM workflows WHERE id LIKE 'old-%';
    INSERT INTO runs (tenant_id, id, workflow_id, version, status, event_seq, finished_at)
      SELECT t.id, gen_random_uuid(), 'old-' || (g % 50 + 1), 1, 'SUCCEEDED', 10, now() FROM tenants t CROSS JOIN generate_series(1, 200) g;
    INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, queue, status, attempt, finished_at)
      SELECT r.tenant_id, gen_random_uuid(), r.id, 'n' || g, 'HTTP', 'http', 'COMPLETED', 0, now() FROM runs r CROSS JOIN generate_series(1, 10) g;
    INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, enqueued_at)
      SELECT tenant_id, run_id, id, 0, 'http', now(), now() FROM tasks;
    INSERT INTO run_events (tenant_id, run_id, seq, type) SELECT r.tenant_id, r.id, g, 'NodeCompleted' FROM runs r CROSS JOIN generate_series(1, 10) g;
    ANALYZE;
  `);
});
afterAll(async () => {
  if (ds?.isInitialized) await ds.destroy();
  await db?.drop();
});

/** Index names a plan uses. */
const indexesOf = (p: ExecutedPlan) => [...p.plan.matchAll(/(?: using |Bitmap Index Scan on )(\w+)/g)].map((m) => m[1]!);
/** The indexes used by the plans of every statement whose text holds `fragment`, sorted; throws when none ran. */
function indexesFor(fragment: string): string[] {
  const plans = capture.plans.filter((p) => p.query.includes(fragment));
  if (plans.length === 0) throw new Error(`no statement holding ${JSON.stringify(fragment)} ran`);
  return [...new Set(plans.flatMap(indexesOf))].sort();
}
/** Tables a plan reads whole. */
const seqScansOf = (p: ExecutedPlan) => [...p.plan.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]!).filter((t) => TENANT_TABLES.includes(t));

describe('the hot path', () => {
  it('reads and writes every tenant table through an index', async () => {
    const noJob: JobProbe = { hasJob: async () => false };

    capture.recording = true;
    // A run: start, claim, heartbeat, a report that takes b eagerly, b's report ends the run.
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId: chainId });
    const a = h.dispatcher.last('a');
    const token = (await h.coordinator.leases.markRunning(h.tenantId, a.taskId, a.attempt))!;
    await h.coordinator.leases.heartbeat([{ tenantId: h.tenantId, taskId: a.taskId, attempt: a.attempt, leaseToken: token }]);
    const { taken } = await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: a.taskId,
      nodeId: 'a',
      attempt: 0,
      output: { ok: 1 },
      leaseToken: token,
      takeFrom: 'http',
    });
    await h.coordinator.runs.reportCompleted(h.tenantId, {
      runId,
      taskId: taken!.job.taskId,
      nodeId: 'b',
      attempt: 0,
      output: {},
      leaseToken: taken!.leaseToken,
    });
    // A run whose first job Redis refused once admitted: its lease runs out, the sweep puts it back
    // in the backlog and it is admitted again; the poll then finds nothing left.
    h.dispatcher.failNext = 1;
    await h.coordinator.runs.startRun(h.tenantId, { workflowId: chainId });
    h.clock.advance(60_000);
    expect(await h.coordinator.lostTasks.sweep(10, noJob)).toBe(1);
    expect(await h.coordinator.outbox.relay(10)).toBe(0);
    // A due timer.
    await h.coordinator.runs.startRun(h.tenantId, { workflowId: waitingId });
    h.clock.advance(10_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(1);
    // An API request's key.
    await new TenantRepository(ds).findApiKey('weft_abcdefghnotakey');
    capture.recording = false;

    expect((await h.run(runId)).status).toBe('SUCCEEDED');
    expect(capture.plans.length).toBeGreaterThan(40);
    expect(capture.plans.flatMap((p) => seqScansOf(p).map((t) => `${t}: ${p.query.replace(/\s+/g, ' ').slice(0, 160)}`))).toEqual([]);

    // The statements named: the indexes each one's plans used, over all its executions.
    expect(indexesFor("UPDATE tasks SET status = 'RUNNING'")).toEqual(['tasks_pkey']); // a worker's claim
    // Fair dispatch: the ready tenants, each one's next row, the window, the admission.
    expect(indexesFor('WITH RECURSIVE rt AS')).toEqual(['outbox_ready']);
    expect(indexesFor('SELECT o.id::bigint AS id')).toEqual(['outbox_ready', 'tasks_pkey']);
    expect(indexesFor("t.queue = p_queue AND t.status = 'PENDING'")).toEqual(['tasks_dispatched']);
    expect(indexesFor('UPDATE public.outbox o SET enqueued_at = v_now')).toEqual(['outbox_pkey']);
    expect(indexesFor('UPDATE public.outbox o SET hold_reason = NULL')).toEqual(['outbox_held', 'outbox_pkey']);
    expect(indexesFor('FROM outbox o\n')).toEqual(['outbox_pkey', 'runs_pkey', 'tasks_pkey']); // the jobs of attempts admitted elsewhere
    expect(indexesFor('UPDATE public.tasks t SET lease_expires_at')).toEqual(['tasks_pkey', 'tasks_worker_leases']); // the lease sweep's claim
    expect(indexesFor('UPDATE public.tasks t SET wake_at')).toEqual(['tasks_due_timers', 'tasks_pkey']); // due timers
    expect(indexesFor('FROM public.api_keys k')).toEqual(['api_keys_key_prefix']); // an API key's candidates
    // The run lock finds the run by its key and the reported task by one of the run's task keys
    // (both estimate one row); the history append updates the run by its key.
    const runLock = indexesFor('WITH r AS MATERIALIZED');
    expect(runLock).toContain('runs_pkey');
    expect(['runs_pkey', 'tasks_pkey', 'tasks_run']).toEqual(expect.arrayContaining(runLock));
    // b's report took the fenced path: its statement locks the run by its key and the reported
    // task by one of the run's task keys, like the run lock; the run's end probes the tenant's
    // webhooks by their key.
    const fenced = indexesFor('f AS MATERIALIZED');
    expect(fenced).toContain('runs_pkey');
    expect(['runs_pkey', 'tasks_pkey', 'tasks_run', 'webhooks_pkey']).toEqual(expect.arrayContaining(fenced));
    // The later starts of the chain were decided from memory: their statement checks the version
    // by the workflow's and the version's keys.
    expect(indexesFor('v AS MATERIALIZED')).toEqual(['workflow_versions_pkey', 'workflows_pkey']);
    const history = indexesFor('INSERT INTO run_events');
    expect(history).toContain('runs_pkey');
    expect(['runs_pkey', 'tasks_pkey', 'tasks_run', 'workflow_versions_pkey', 'workflows_pkey']).toEqual(expect.arrayContaining(history));
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runWrites, webhookDeliveryPart, WebhookRepository, withTenant, type WebhookEvent } from '@weft/persistence';
import { v7 as uuidv7 } from 'uuid';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * Webhook deliveries are queued by the events that end or pause runs, in their transactions:
 * one row per subscribed webhook and event, none for an unsubscribed event or a tenant without
 * webhooks. Real PostgreSQL, the coordinator's harness; nothing is sent here (the scheduler's
 * sender is tested end to end in test/e2e/webhooks.e2e-spec.ts).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** The deliveries of the harness's tenant for run `runId`, oldest first, as `<event> <status>` with the run's payload. */
async function queued(h: Harness, runId: string) {
  const rows: { event: string; webhook_id: string; run_seq: number; run: Record<string, unknown>; status: string }[] = await db.owner.query(
    `SELECT event, webhook_id, run_seq, run, status FROM webhook_deliveries WHERE tenant_id = $1 AND run_id = $2 ORDER BY run_seq, webhook_id`,
    [h.tenantId, runId],
  );
  return rows;
}

const hook = (h: Harness, events: WebhookEvent[]) =>
  new WebhookRepository(db.ds).create(h.tenantId, { id: uuidv7(), url: 'https://example.test/hook', events, secret: 'whsec_test' });

describe('webhook deliveries', () => {
  it('queues one delivery per subscribed webhook when a run pauses and when it ends, with the run as the event left it', async () => {
    const h = await coordinatorHarness(db.ds);
    const ends = await hook(h, ['run.paused', 'run.cancelled']);
    const other = await hook(h, ['run.succeeded']);
    const runId = await h.start(def([http('a')]));
    expect(await queued(h, runId)).toEqual([]);

    await h.coordinator.runs.pauseRun(h.tenantId, { runId, reason: 'freeze' });
    await h.coordinator.runs.resumeRun(h.tenantId, { runId });
    await h.coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'no longer needed' });
    const rows = await queued(h, runId);
    expect(rows.map((r) => [r.event, r.webhook_id, r.status])).toEqual([
      ['run.paused', ends.id, 'PENDING'],
      ['run.cancelled', ends.id, 'PENDING'],
    ]);
    // run_seq is the event's seq in the run's history.
    const history = (await h.events(runId)).map((e) => [e.seq, e.type]);
    expect(rows.map((r) => r.run_seq)).toEqual([history.find(([, t]) => t === 'RunPaused')![0], history.find(([, t]) => t === 'RunCancelled')![0]]);
    expect(rows[0]!.run).toEqual({ id: runId, workflowId: expect.any(String), version: 1, status: 'PAUSED', error: null, labels: {}, finishedAt: null });
    expect(rows[1]!.run).toMatchObject({ status: 'CANCELLED', error: 'no longer needed', finishedAt: expect.any(String) });
    expect(other.events).toEqual(['run.succeeded']);
  });

  it('queues a success and a failure for the webhooks that asked for them only', async () => {
    const h = await coordinatorHarness(db.ds);
    const failures = await hook(h, ['run.failed']);
    const successes = await hook(h, ['run.succeeded']);
    const good = await h.start(def([http('ok')]));
    await h.complete('ok', { done: true });
    const bad = await h.start(def([http('bad')]));
    await h.fail('bad', 'card declined');
    expect((await h.run(bad)).status).toBe('FAILED');
    expect((await queued(h, good)).map((r) => [r.event, r.webhook_id])).toEqual([['run.succeeded', successes.id]]);
    const failed = await queued(h, bad);
    expect(failed.map((r) => [r.event, r.webhook_id])).toEqual([['run.failed', failures.id]]);
    expect(failed[0]!.run).toMatchObject({ status: 'FAILED', error: expect.stringContaining('card declined') });
  });

  it('writes nothing for a tenant without webhooks, and once per webhook and event when the write is repeated', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    await h.coordinator.runs.cancelRun(h.tenantId, { runId });
    expect(await queued(h, runId)).toEqual([]);

    const w = await hook(h, ['run.timed_out']);
    const part = webhookDeliveryPart(h.tenantId, runId, 'run.timed_out', { status: 'TIMED_OUT', error: 'late', finishedAt: new Date() }, new Date());
    // The same event's write twice (the run's event_seq unchanged): one row.
    for (let i = 0; i < 2; i++) await withTenant(db.ds, h.tenantId, (m) => runWrites(m, h.tenantId, runId, [part]));
    expect((await queued(h, runId)).map((r) => [r.event, r.webhook_id])).toEqual([['run.timed_out', w.id]]);
  });

  it('leaves out a webhook deleted while the write waits for it, without failing the event', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a')]));
    const doomed = await hook(h, ['run.failed']);
    const kept = await hook(h, ['run.failed']);
    const part = webhookDeliveryPart(h.tenantId, runId, 'run.failed', { status: 'FAILED', error: 'x', finishedAt: new Date() }, new Date());
    const deleter = db.owner.createQueryRunner();
    await deleter.connect();
    try {
      await deleter.startTransaction();
      await deleter.query(`DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, [h.tenantId, doomed.id]);
      const [{ pid: deleterPid }]: { pid: number }[] = await deleter.query(`SELECT pg_backend_pid() AS pid`);
      // The event's write starts while the delete is not committed: it sees the webhook, then must wait for it.
      const write = withTenant(db.ds, h.tenantId, (m) => runWrites(m, h.tenantId, runId, [part])).then(
        () => 'written',
        (err: unknown) => `failed: ${String(err)}`,
      );
      const waiting = async (): Promise<boolean> => {
        const rows: unknown[] = await db.owner.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`, [deleterPid]);
        return rows.length > 0;
      };
      while (!(await waiting())) await new Promise((r) => setTimeout(r, 20));
      await deleter.commitTransaction();
      expect(await write).toBe('written');
    } finally {
      await deleter.release();
    }
    expect((await queued(h, runId)).map((r) => r.webhook_id)).toEqual([kept.id]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunBatchRepository, TooManyRuns } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http, waitFor } from '../support/builders.js';

/**
 * Bulk actions over runs: the runs fixed at creation, each acted on once at a bounded rate,
 * outcomes per run, idempotency keys, stop. Real PostgreSQL, recording queue, hand-moved clock.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Harness = Awaited<ReturnType<typeof coordinatorHarness>>;

/** The items of batch `id` in order: `runId outcome error`. */
async function items(h: Harness, id: string) {
  return new RunBatchRepository(db.ds).items(h.tenantId, id, 1000, 0);
}

/** Starts `n` runs of `workflowId` with label `group`. */
async function startMany(h: Harness, workflowId: string, n: number, group: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await h.coordinator.runs.startRun(h.tenantId, { workflowId, labels: { group } })).runId);
  return ids;
}

const batch = (h: Harness, input: Parameters<Harness['coordinator']['batches']['create']>[1]) => h.coordinator.batches.create(h.tenantId, input);

describe('a bulk action', () => {
  it('pauses the runs its filter matched, skipping with why those it does not apply to', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    const [a, b, c] = await startMany(h, workflowId, 3, 'nightly');
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: c! });
    const other = (await startMany(h, workflowId, 1, 'other'))[0]!;

    const { batch: created, created: isNew } = await batch(h, {
      action: 'PAUSE',
      filter: { labels: { group: 'nightly' } },
      filterJson: { labels: { group: 'nightly' } },
      reason: 'db maintenance',
    });
    expect(isNew).toBe(true);
    expect(created).toMatchObject({ status: 'RUNNING', total: 3, applied: 0, skipped: 0, failed: 0 });
    // A run started after the batch was created is not in it.
    await startMany(h, workflowId, 1, 'nightly');

    expect(await h.coordinator.batches.processDue()).toBe(3);
    const done = await new RunBatchRepository(db.ds).get(h.tenantId, created.id);
    expect(done).toMatchObject({ status: 'COMPLETED', total: 3, applied: 2, skipped: 1, failed: 0 });
    expect(await items(h, created.id)).toEqual([
      { seq: 1, runId: a, outcome: 'APPLIED', error: null },
      { seq: 2, runId: b, outcome: 'APPLIED', error: null },
      { seq: 3, runId: c, outcome: 'SKIPPED', error: expect.stringMatching(/is CANCELLED: only an active run can be paused/) },
    ]);
    expect(await h.run(a!)).toMatchObject({ pauseReason: 'db maintenance' });
    expect((await h.run(other)).pausedAt).toBeNull();
  });

  it('acts on at most batchRunsPerSecond runs a second, and completes', async () => {
    const h = await coordinatorHarness(db.ds, { batchRunsPerSecond: 2 });
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    await startMany(h, workflowId, 5, 'slow');
    const { batch: b } = await batch(h, { action: 'CANCEL', filter: { labels: { group: 'slow' } }, filterJson: { labels: { group: 'slow' } } });

    expect(await h.coordinator.batches.processDue()).toBe(2);
    // The next slice is due a second later on the batch's clock.
    expect(await h.coordinator.batches.processDue()).toBe(0);
    h.clock.advance(1_000);
    expect(await h.coordinator.batches.processDue()).toBe(2);
    h.clock.advance(1_000);
    expect(await h.coordinator.batches.processDue()).toBe(1);
    expect(await new RunBatchRepository(db.ds).get(h.tenantId, b.id)).toMatchObject({ status: 'COMPLETED', applied: 5 });
  });

  it('retries 500 failed runs once each, and the same key returns the same batch', async () => {
    const h = await coordinatorHarness(db.ds, { batchRunsPerSecond: 1000 });
    const { workflowId } = await h.publish(def([http('charge')]));
    const ids = await startMany(h, workflowId, 500, 'declined');
    for (const runId of ids)
      await h.fail(
        'charge',
        'card declined',
        h.dispatcher.jobs.find((j) => j.runId === runId && j.nodeId === 'charge'),
      );
    // A run of the workflow that did not fail is not matched.
    const healthy = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;

    const input = {
      action: 'RETRY' as const,
      filter: { status: 'FAILED', workflowId },
      filterJson: { status: 'FAILED', workflowId },
      fromNodeId: 'charge',
      idempotencyKey: 'retry-declined',
    };
    const first = await batch(h, input);
    const again = await batch(h, input);
    expect(first.batch.total).toBe(500);
    expect((await items(h, first.batch.id)).map((i) => i.runId)).not.toContain(healthy);
    expect(again).toEqual({ batch: expect.objectContaining({ id: first.batch.id, total: 500 }), created: false });

    // One slice acts on all 500 unless it runs out of time (half its lease), then the next goes on.
    let acted = 0;
    for (let slices = 0; (await new RunBatchRepository(db.ds).get(h.tenantId, first.batch.id))?.status === 'RUNNING' && slices < 20; slices++) {
      acted += await h.coordinator.batches.processDue();
      h.clock.advance(1_000);
    }
    expect(acted).toBe(500);
    expect(await new RunBatchRepository(db.ds).get(h.tenantId, first.batch.id)).toMatchObject({ status: 'COMPLETED', applied: 500 });
    // Repeating the key after completion still creates nothing and retries nothing again.
    expect((await batch(h, input)).created).toBe(false);
    expect(await h.coordinator.batches.processDue()).toBe(0);
    const retried = (await db.owner.query(
      `SELECT run_id, count(*)::int AS n FROM run_events WHERE tenant_id = $1 AND type = 'RunRetried' AND payload->>'batchId' = $2 GROUP BY run_id`,
      [h.tenantId, first.batch.id],
    )) as { run_id: string; n: number }[];
    expect(retried).toHaveLength(500);
    expect(retried.every((r) => r.n === 1)).toBe(true);
    expect((await h.run(ids[0]!)).status).toBe('RUNNING');
  });

  it('does not act twice on a run it acted on before its outcome was recorded (a crash in between)', async () => {
    const h = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    const [a, b] = await startMany(h, workflowId, 2, 'crash');
    const { batch: created } = await batch(h, { action: 'CANCEL', filter: { labels: { group: 'crash' } }, filterJson: {} });
    // As a scheduler that died right after its command committed would leave it.
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: a!, batchId: created.id });

    await h.coordinator.batches.processDue();
    expect(await items(h, created.id)).toEqual([
      { seq: 1, runId: a, outcome: 'APPLIED', error: null },
      { seq: 2, runId: b, outcome: 'APPLIED', error: null },
    ]);
    expect((await h.events(a!)).filter((e) => e.type === 'RunCancelled')).toHaveLength(1);
  });

  it('stops: what it did stays done, the rest stays PENDING', async () => {
    const h = await coordinatorHarness(db.ds, { batchRunsPerSecond: 1 });
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    await startMany(h, workflowId, 3, 'stop');
    const { batch: b } = await batch(h, { action: 'PAUSE', filter: { labels: { group: 'stop' } }, filterJson: {} });
    expect(await h.coordinator.batches.processDue()).toBe(1);
    expect(await h.coordinator.batches.stop(h.tenantId, b.id)).toMatchObject({ status: 'STOPPED', applied: 1 });
    h.clock.advance(5_000);
    expect(await h.coordinator.batches.processDue()).toBe(0);
    expect((await items(h, b.id)).map((i) => i.outcome)).toEqual(['APPLIED', 'PENDING', 'PENDING']);
  });

  it('makes a stop that lands while a run is acted on wait for that run: the counts it returns are final', async () => {
    const h = await coordinatorHarness(db.ds, { batchRunsPerSecond: 3 });
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    const ids = await startMany(h, workflowId, 3, 'midstop');
    const { batch: b } = await batch(h, { action: 'PAUSE', filter: { labels: { group: 'midstop' } }, filterJson: {} });
    // Hold the first pause open until the stop is waiting on the batch.
    const runs = h.coordinator.runs;
    const pause = runs.pauseRun.bind(runs);
    let entered!: () => void;
    const inAct = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held = false;
    runs.pauseRun = async (tenantId, p) => {
      if (!held) {
        held = true;
        entered();
        await released;
      }
      return pause(tenantId, p);
    };
    let stopped: Awaited<ReturnType<typeof h.coordinator.batches.stop>>;
    let acted: number;
    let atStop: string[];
    let pausedAtStop: boolean[];
    try {
      const slice = h.coordinator.batches.processDue();
      await inAct;
      const stop = h.coordinator.batches.stop(h.tenantId, b.id).then(async (row) => {
        // What the stop's counts say, read as soon as it returns.
        atStop = (await items(h, b.id)).map((i) => i.outcome);
        pausedAtStop = await Promise.all(ids.map(async (id) => (await h.run(id)).pausedAt !== null));
        return row;
      });
      // The stop's UPDATE waits for the row lock the slice holds while it acts.
      for (;;) {
        const waiting = await db.ds.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE run_batches SET status%'`,
        );
        if (waiting.length > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      release();
      stopped = await stop;
      acted = await slice;
    } finally {
      runs.pauseRun = pause;
    }
    // The run being acted on when the stop landed is counted (without the lock the stop said 0).
    // Row locks are not handed out in arrival order, so the slice may act on another run first.
    const applied = stopped!.applied;
    expect(applied).toBeGreaterThanOrEqual(1);
    expect(acted!).toBe(applied);
    expect(atStop!.filter((o) => o === 'APPLIED')).toHaveLength(applied);
    expect(pausedAtStop!.filter(Boolean)).toHaveLength(applied);
    // Final: the next passes act on nothing more.
    h.clock.advance(5_000);
    await h.coordinator.batches.processDue();
    expect((await items(h, b.id)).map((i) => i.outcome)).toEqual(atStop!);
  });

  it('refuses an empty filter, an unknown action, RETRY without fromNodeId, and more runs than it may hold', async () => {
    const h = await coordinatorHarness(db.ds);
    await expect(batch(h, { action: 'CANCEL', filter: {}, filterJson: {} })).rejects.toMatchObject({ code: 'BAD_USER_INPUT', message: /^filter: / });
    await expect(batch(h, { action: 'CANCEL', filter: { labels: {} }, filterJson: {} })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(batch(h, { action: 'DELETE' as never, filter: { status: 'FAILED' }, filterJson: {} })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: /^action: unknown action "DELETE"/,
    });
    await expect(batch(h, { action: 'RETRY', filter: { status: 'FAILED' }, filterJson: {} })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      message: /^fromNodeId: a RETRY needs fromNodeId/,
    });
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    await startMany(h, workflowId, 3, 'big');
    const repo = new RunBatchRepository(db.ds);
    const tooMany = repo.create(h.tenantId, {
      id: '00000000-0000-4000-8000-0000000000aa',
      action: 'CANCEL',
      filter: { labels: { group: 'big' } },
      filterJson: {},
      fromNodeId: null,
      reason: null,
      idempotencyKey: null,
      now: null,
      max: 2,
    });
    await expect(tooMany).rejects.toBeInstanceOf(TooManyRuns);
    expect(await repo.get(h.tenantId, '00000000-0000-4000-8000-0000000000aa')).toBeNull();
  });

  it('is invisible to another tenant', async () => {
    const h = await coordinatorHarness(db.ds);
    const other = await coordinatorHarness(db.ds);
    const { workflowId } = await h.publish(def([waitFor('gate', 'go')]));
    await startMany(h, workflowId, 1, 'mine');
    const { batch: b } = await batch(h, { action: 'PAUSE', filter: { labels: { group: 'mine' } }, filterJson: {} });
    const repo = new RunBatchRepository(db.ds);
    expect(await repo.get(other.tenantId, b.id)).toBeNull();
    expect(await other.coordinator.batches.stop(other.tenantId, b.id)).toBeNull();
    expect(await repo.items(other.tenantId, b.id, 10, 0)).toEqual([]);
  });
});

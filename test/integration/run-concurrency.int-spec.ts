import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftError, type WorkflowDefinition } from '@weft/engine';
import type { RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { def, http } from '../support/builders.js';

/**
 * Run slots of concurrency keys: a run holds a slot of its key from the moment it runs until it
 * ends; over the limit a start is queued, cancelled, or supersedes the oldest. Real PostgreSQL,
 * recording queue, hand-moved clock.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function setup(opts: RunCoordinatorOptions = {}) {
  return coordinatorHarness(db.ds, opts);
}

/** The flow columns of run `runId`, read as the owner. */
async function flowOf(runId: string): Promise<{ priority: number; concurrencyKey: string | null }> {
  const rows = (await db.owner.query(`SELECT priority, concurrency_key AS "concurrencyKey" FROM runs WHERE id = $1`, [runId])) as {
    priority: number;
    concurrencyKey: string | null;
  }[];
  return rows[0]!;
}

/** One HTTP node, its runs limited by `concurrency`. */
function limited(concurrency: WorkflowDefinition['concurrency'], extra: Partial<WorkflowDefinition> = {}): WorkflowDefinition {
  return { ...def([http('a')]), concurrency, ...extra };
}

describe('a concurrency key with the queue strategy', () => {
  it('never lets two runs of one key overlap while another key proceeds, and starts the queued one when the slot frees', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ key: '{{ input.customer }}', limit: 1 }));
    const start = (customer: string) => h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { customer } });
    const a1 = (await start('acme')).runId;
    const a2 = (await start('acme')).runId;
    const b1 = (await start('bolt')).runId;

    expect((await h.run(a1)).status).toBe('RUNNING');
    expect((await h.run(a2)).status).toBe('QUEUED');
    expect(await h.statuses(a2)).toEqual({});
    expect((await h.run(b1)).status).toBe('RUNNING');
    expect((await flowOf(a2)).concurrencyKey).toBe('acme');

    await h.complete(
      'a',
      {},
      h.dispatcher.jobs.find((j) => j.runId === a1),
    );
    expect((await h.run(a1)).status).toBe('SUCCEEDED');
    expect((await h.run(a2)).status).toBe('RUNNING');
    expect(h.dispatcher.jobs.filter((j) => j.runId === a2)).toHaveLength(1);
    expect((await h.events(a2)).map((e) => e.type)).toEqual(['RunStarted']);
  });

  it('frees the slot when the running run is cancelled or fails', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ limit: 1 }));
    const start = async () => (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const first = await start();
    const second = await start();
    const third = await start();
    expect([(await h.run(second)).status, (await h.run(third)).status]).toEqual(['QUEUED', 'QUEUED']);

    await h.coordinator.runs.cancelRun(h.tenantId, { runId: first });
    expect((await h.run(second)).status).toBe('RUNNING');
    expect((await h.run(third)).status).toBe('QUEUED');

    await h.fail(
      'a',
      'boom',
      h.dispatcher.jobs.find((j) => j.runId === second),
    );
    expect((await h.run(second)).status).toBe('FAILED');
    expect((await h.run(third)).status).toBe('RUNNING');
  });

  it('starts a queued run of priority 1 before older queued runs of priority 5', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ limit: 1 }));
    const start = async (priority: number) => (await h.coordinator.runs.startRun(h.tenantId, { workflowId, priority })).runId;
    const holder = await start(3);
    const low = [await start(5), await start(5)];
    const urgent = await start(1);
    await h.complete(
      'a',
      {},
      h.dispatcher.jobs.find((j) => j.runId === holder),
    );
    expect((await h.run(urgent)).status).toBe('RUNNING');
    expect([(await h.run(low[0]!)).status, (await h.run(low[1]!)).status]).toEqual(['QUEUED', 'QUEUED']);
  });

  it('cancels a queued run without it ever taking a slot', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ limit: 1 }));
    const first = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const queued = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    await h.coordinator.runs.cancelRun(h.tenantId, { runId: queued });
    expect((await h.run(queued)).status).toBe('CANCELLED');
    expect((await h.run(first)).status).toBe('RUNNING');
  });

  it('starts a queued run the ends left behind from the scheduler poll', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ limit: 1 }));
    const first = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const queued = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    // As if the end's own promotion had been deferred: the slot is free, the run still QUEUED.
    await db.owner.query(`UPDATE runs SET status = 'FAILED' WHERE id = $1`, [first]);
    await h.coordinator.outbox.relay(10);
    expect((await h.run(queued)).status).toBe('RUNNING');
  });
});

describe('a retry of a run of a concurrency key', () => {
  it('takes a free slot again, and is refused while the key is full or the run is still queued', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ key: '{{ input.customer }}', limit: 1 }));
    const start = async () => (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { customer: 'acme' } })).runId;
    const first = await start();
    await h.fail(
      'a',
      'boom',
      h.dispatcher.jobs.find((j) => j.runId === first),
    );
    expect((await h.run(first)).status).toBe('FAILED');
    const second = await start();
    const queued = await start();
    expect([(await h.run(second)).status, (await h.run(queued)).status]).toEqual(['RUNNING', 'QUEUED']);

    const refused = h.coordinator.runs.retryRun(h.tenantId, { runId: first, fromNodeId: 'a' });
    await expect(refused).rejects.toThrow(WeftError);
    await expect(refused).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('concurrency limit 1 reached for key "acme" (1 running)'),
    });
    await expect(h.coordinator.runs.retryRun(h.tenantId, { runId: queued, fromNodeId: 'a' })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('is QUEUED for a slot of concurrency key "acme"'),
    });
    expect([(await h.run(first)).status, (await h.run(queued)).status]).toEqual(['FAILED', 'QUEUED']);
    expect(h.dispatcher.jobs.filter((j) => j.runId === queued)).toHaveLength(0);

    // The running run ends: the queued one takes the slot; when it ends, the retry may run.
    await h.complete(
      'a',
      {},
      h.dispatcher.jobs.find((j) => j.runId === second),
    );
    expect((await h.run(queued)).status).toBe('RUNNING');
    await h.complete(
      'a',
      {},
      h.dispatcher.jobs.find((j) => j.runId === queued),
    );
    await h.coordinator.runs.retryRun(h.tenantId, { runId: first, fromNodeId: 'a' });
    expect((await h.run(first)).status).toBe('RUNNING');
    const late = await start();
    expect((await h.run(late)).status).toBe('QUEUED');
  });
});

describe('a retry that moves a run to another group', () => {
  it('joins the group its new version and input resolve to, or is refused while that group is full', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(def([http('a')]));
    const start = async (customer: string) => (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { customer } })).runId;
    const plain = await start('acme');
    await h.fail(
      'a',
      'boom',
      h.dispatcher.jobs.find((j) => j.runId === plain),
    );
    const v2 = await h.publish(limited({ key: '{{ input.customer }}', limit: 1 }), workflowId);
    const holder = await start('acme');
    expect(await flowOf(holder)).toMatchObject({ concurrencyKey: 'acme' });

    // Onto the version that adds concurrency: the acme slot is taken.
    await expect(h.coordinator.runs.retryRun(h.tenantId, { runId: plain, fromNodeId: 'a', version: v2.version })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('concurrency limit 1 reached for key "acme"'),
    });
    expect((await h.run(plain)).status).toBe('FAILED');
    // With input naming another key, it joins that key's group and holds its slot.
    await h.coordinator.runs.retryRun(h.tenantId, { runId: plain, fromNodeId: 'a', version: v2.version, input: { customer: 'bolt' } });
    expect((await h.run(plain)).status).toBe('RUNNING');
    expect(await flowOf(plain)).toMatchObject({ concurrencyKey: 'bolt' });
    expect((await h.run(await start('bolt'))).status).toBe('QUEUED');
  });

  it('keeps the groups of two workflows apart whatever their ids and keys hold', async () => {
    const h = await setup();
    const w = `w${h.tenantId.slice(0, 8)}`;
    await h.publish(limited({ key: '{{ input.k }}', limit: 1 }), w);
    await h.publish(limited({ key: '{{ input.k }}', limit: 1 }), `${w}:b`);
    const first = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: w, input: { k: 'b:c' } })).runId;
    const second = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: `${w}:b`, input: { k: 'c' } })).runId;
    expect([(await h.run(first)).status, (await h.run(second)).status]).toEqual(['RUNNING', 'RUNNING']);
  });
});

describe('the upkeep of groups', () => {
  it('deletes a group idle for over a day, keeps one a run holds or waits for, and a retry or start makes it again', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ key: '{{ input.customer }}', limit: 1 }));
    const start = async (customer: string) => (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { customer } })).runId;
    const groups = async () =>
      ((await db.owner.query(`SELECT key FROM concurrency_groups WHERE tenant_id = $1 ORDER BY key`, [h.tenantId])) as { key: string }[]).map((r) => r.key);
    const idle = await start('idle');
    await h.complete(
      'a',
      {},
      h.dispatcher.jobs.find((j) => j.runId === idle),
    );
    const busy = await start('busy');
    const waiting = await start('busy');
    h.clock.advance(60_000);
    await h.coordinator.outbox.upkeep();
    expect(await groups()).toEqual(['busy', 'idle']); // idle for a minute only

    h.clock.advance(2 * 86_400_000);
    await h.coordinator.outbox.upkeep();
    expect(await groups()).toEqual(['busy']);
    await h.complete(
      'a',
      {},
      h.dispatcher.jobs.find((j) => j.runId === busy),
    );
    expect((await h.run(waiting)).status).toBe('RUNNING');

    // The pruned key still limits: a retry takes its slot on a row made again, and holds it.
    await h.coordinator.runs.retryRun(h.tenantId, { runId: idle, fromNodeId: 'a' });
    expect((await h.run(idle)).status).toBe('RUNNING');
    expect(await groups()).toEqual(['busy', 'idle']);
    expect((await h.run(await start('idle'))).status).toBe('QUEUED');
  });
});

describe('the cancel strategies', () => {
  it('cancel_newest: the new run is returned CANCELLED and says why', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ key: '{{ input.customer }}', limit: 2, strategy: 'cancel_newest' }));
    const start = async () => (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { customer: 'acme' } })).runId;
    const kept = [await start(), await start()];
    const refused = await start();
    expect(await h.run(refused)).toMatchObject({ status: 'CANCELLED', error: 'concurrency limit 2 reached for key "acme" (cancel_newest)' });
    expect(await h.statuses(refused)).toEqual({});
    for (const id of kept) expect((await h.run(id)).status).toBe('RUNNING');
  });

  it('cancel_oldest: the oldest run of the key is cancelled in the transaction that admits the new one', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ key: '{{ input.customer }}', limit: 1, strategy: 'cancel_oldest' }));
    const start = async (customer: string) => (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { customer } })).runId;
    const oldest = await start('acme');
    const other = await start('bolt');
    const newest = await start('acme');
    expect(await h.run(oldest)).toMatchObject({ status: 'CANCELLED' });
    expect((await h.run(oldest)).error).toContain(`superseded by run ${newest} (cancel_oldest)`);
    expect(await h.statuses(oldest)).toEqual({ a: 'CANCELLED' });
    expect((await h.run(newest)).status).toBe('RUNNING');
    expect((await h.run(other)).status).toBe('RUNNING');
  });
});

describe('keys', () => {
  it('a tenant-scoped key is shared by the workflows of the tenant', async () => {
    const h = await setup();
    const one = await h.publish(limited({ key: 'partner', limit: 1, scope: 'tenant' }));
    const two = await h.publish(limited({ key: 'partner', limit: 1, scope: 'tenant' }));
    const first = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: one.workflowId })).runId;
    const second = (await h.coordinator.runs.startRun(h.tenantId, { workflowId: two.workflowId })).runId;
    expect((await h.run(first)).status).toBe('RUNNING');
    expect((await h.run(second)).status).toBe('QUEUED');
  });

  it('a number becomes its text; a list or an over-long key refuses the start naming concurrency.key', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(limited({ key: '{{ input.k }}', limit: 1 }));
    const started = (await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { k: 42 } })).runId;
    expect((await flowOf(started)).concurrencyKey).toBe('42');
    for (const k of [['a'], 'x'.repeat(257)]) {
      const refused = h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { k } });
      await expect(refused).rejects.toBeInstanceOf(WeftError);
      await expect(refused).rejects.toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringContaining('concurrency.key') });
    }
  });

  it('the default priority is the definition’s, and a start may override it', async () => {
    const h = await setup();
    const { workflowId } = await h.publish({ ...def([http('a')]), priority: 2 });
    const byDefinition = (await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId;
    const byStart = (await h.coordinator.runs.startRun(h.tenantId, { workflowId, priority: 5 })).runId;
    expect((await flowOf(byDefinition)).priority).toBe(2);
    expect((await flowOf(byStart)).priority).toBe(5);
  });
});

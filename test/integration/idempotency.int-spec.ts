import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftApiError, WeftClient } from '@weft/client';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, http, publishWorkflow } from '../support/builders.js';
import { act, countRows, eventually, holdLock, installFault, openReplica, startWorkerPlatform, type Replica } from '../support/faults.js';

/**
 * startRun with an idempotency key: duplicates racing from separate connections
 * get one run. The partial unique index `runs_idempotency_key (tenant_id, idempotency_key)` decides
 * — `INSERT … ON CONFLICT DO NOTHING` waits for a concurrent insert of the same key to commit or
 * roll back — not a read before the write: test-only triggers hold every caller between its read
 * and its insert, and the first start's transaction open, to show it.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** A trigger slowing (or failing) the tenant's inserts into `table`. */
const onInsert = (table: string, tenantId: string, action: string, times?: number) =>
  installFault(db.owner, { table, when: `NEW.tenant_id = '${tenantId}'${table === 'run_events' ? ` AND NEW.type = 'RunStarted'` : ''}`, action, times });

/** The advisory lock the first start's transaction waits for in the ordering case. */
const GATE_KEY = 7_310_517_301;

/** How many backends of this file's database wait for a lock of type `lock` (`advisory`, `transactionid`…). */
async function waiting(lock: string): Promise<number> {
  const [row] = (await db.owner.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = $2`, [
    db.name,
    lock,
  ])) as { n: number }[];
  return row!.n;
}

describe('concurrent duplicate starts', () => {
  let replicas: Replica[];
  beforeAll(async () => {
    // Four API replicas with five connections each: twenty callers on twenty connections.
    replicas = await Promise.all(Array.from({ length: 4 }, () => openReplica(db.url, { poolSize: 5 })));
    await Promise.all(replicas.map((r) => r.warm(5)));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
  });

  it('twenty callers on twenty connections get one run: one row, one history record, one dispatch', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    // Every caller is held between its read of the key and its insert until all twenty are there:
    // a read-then-write would see no run twenty times and create twenty.
    const gate = await holdLock(db.owner, GATE_KEY);
    const held = await onInsert('runs', tenantId, act.waitForLock(GATE_KEY));
    try {
      const calls = replicas.flatMap((r) =>
        Array.from({ length: 5 }, () => r.coordinator.runs.startRun(tenantId, { workflowId, idempotencyKey: 'order-7', input: { order: 7 } })),
      );
      await eventually('every caller at its insert', async () => (await held.hits()) === 20, 30_000);
      await gate.release();
      const results = await Promise.all(calls);
      expect(await held.hits()).toBe(20);
      const runIds = new Set(results.map((r) => r.runId));
      expect(runIds.size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      const [runId] = runIds;
      expect(await countRows(db.ds, tenantId, 'runs')).toBe(1);
      expect(await countRows(db.ds, tenantId, 'run_events', 'run_id = $2', runId)).toBe(1);
      expect(await countRows(db.ds, tenantId, 'tasks')).toBe(1);
      expect(await countRows(db.ds, tenantId, 'outbox')).toBe(1);
      expect(replicas.flatMap((r) => r.dispatcher.jobs).map((j) => [j.runId, j.nodeId, j.attempt])).toEqual([[runId, 'a', 0]]);
    } finally {
      await gate.release().catch(() => undefined);
      await held.remove();
    }
  });

  it('a duplicate waits for the first start: it returns the first run once that commits', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    // The first start holds its transaction open (its run row inserted, not committed) until the
    // test lets it go.
    const gate = await holdLock(db.owner, GATE_KEY);
    const slow = await onInsert('run_events', tenantId, act.waitForLock(GATE_KEY), 1);
    try {
      const [a, b] = replicas;
      const first = a!.coordinator.runs.startRun(tenantId, { workflowId, idempotencyKey: 'k' });
      await eventually('the first start waits at the gate', async () => (await waiting('advisory')) === 1, 30_000);
      let settled = false;
      const second = b!.coordinator.runs.startRun(tenantId, { workflowId, idempotencyKey: 'k' }).finally(() => (settled = true));
      // It waits on the key: its insert blocks on the first start's uncommitted row, not a read.
      await eventually("the duplicate waits on the first start's transaction", async () => (await waiting('transactionid')) === 1, 30_000);
      expect(settled).toBe(false);
      await gate.release();
      expect(await second).toEqual({ runId: (await first).runId, created: false });
      expect((await first).created).toBe(true);
      expect(await countRows(db.ds, tenantId, 'runs')).toBe(1);
    } finally {
      await gate.release().catch(() => undefined);
      await slow.remove();
    }
  });

  it('a duplicate waits for the first start: it creates the run when the first one rolls back', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    // The first start holds the key until the test lets it go, then fails for good and rolls back.
    const gate = await holdLock(db.owner, GATE_KEY);
    const doomed = await onInsert('run_events', tenantId, `${act.waitForLock(GATE_KEY)} ${act.raise('P0001', 'first start refused')}`, 1);
    try {
      const [a, b] = replicas;
      const first = a!.coordinator.runs.startRun(tenantId, { workflowId, idempotencyKey: 'k' }).then(
        () => 'started',
        (e: Error) => e.message,
      );
      await eventually('the first start waits at the gate', async () => (await waiting('advisory')) === 1, 30_000);
      const pending = b!.coordinator.runs.startRun(tenantId, { workflowId, idempotencyKey: 'k' });
      await eventually("the duplicate waits on the first start's transaction", async () => (await waiting('transactionid')) === 1, 30_000);
      await gate.release();
      const second = await pending;
      expect(await first).toMatch(/first start refused/);
      expect(second.created).toBe(true);
      expect(await countRows(db.ds, tenantId, 'runs')).toBe(1);
      expect(await countRows(db.ds, tenantId, 'runs', 'id = $2', second.runId)).toBe(1);
      // And the key now belongs to that run.
      expect(await a!.coordinator.runs.startRun(tenantId, { workflowId, idempotencyKey: 'k' })).toEqual({ runId: second.runId, created: false });
    } finally {
      await gate.release().catch(() => undefined);
      await doomed.remove();
    }
  });

  it('keys are per tenant: the same key in another tenant starts another run', async () => {
    const one = await createTenant(db.ds);
    const two = await createTenant(db.ds);
    const wf1 = await publishWorkflow(db.ds, one.tenantId, def([http('a')]), { workflowId: 'same' });
    const wf2 = await publishWorkflow(db.ds, two.tenantId, def([http('a')]), { workflowId: 'same' });
    const [r1, r2] = await Promise.all([
      replicas[0]!.coordinator.runs.startRun(one.tenantId, { workflowId: wf1.workflowId, idempotencyKey: 'shared' }),
      replicas[1]!.coordinator.runs.startRun(two.tenantId, { workflowId: wf2.workflowId, idempotencyKey: 'shared' }),
    ]);
    expect(r1.created && r2.created).toBe(true);
    expect(r1.runId).not.toBe(r2.runId);
  });
});

describe('a key reused for another start', () => {
  let replica: Replica;
  let other: Replica;
  beforeAll(async () => {
    [replica, other] = await Promise.all([openReplica(db.url, { poolSize: 3 }), openReplica(db.url, { poolSize: 3 })]);
  });
  afterAll(async () => {
    await Promise.all([replica?.close(), other?.close()]);
  });

  /** What a start answers: its run, or the code and message it was refused with. */
  const attempt = (r: Replica, tenantId: string, input: Parameters<Replica['coordinator']['runs']['startRun']>[1]) =>
    r.coordinator.runs.startRun(tenantId, input).then(
      (res) => ({ runId: res.runId, created: res.created }),
      (e: { code?: string; message: string }) => ({ code: e.code, message: e.message }),
    );

  it('the same input, config and version, in any key order and without the version, is the same start', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId, version } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    const first = await attempt(replica, tenantId, { workflowId, version, idempotencyKey: 'k', input: { a: 1, b: [1, { c: 2, d: 3 }] }, config: { x: 'y' } });
    expect(first).toMatchObject({ created: true });
    const again = await attempt(replica, tenantId, { workflowId, idempotencyKey: 'k', input: { b: [1, { d: 3, c: 2.0 }], a: 1 }, config: { x: 'y' } });
    expect(again).toEqual({ runId: (first as { runId: string }).runId, created: false });
    // No input and `{}` are the same input.
    const bare = await attempt(replica, tenantId, { workflowId, idempotencyKey: 'bare' });
    expect(await attempt(other, tenantId, { workflowId, idempotencyKey: 'bare', input: {}, config: {} })).toEqual({ ...bare, created: false });
    expect(await countRows(db.ds, tenantId, 'runs')).toBe(2);
  });

  it('another input or config is a CONFLICT naming the run and what differs, and writes nothing', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    const { runId } = (await attempt(replica, tenantId, { workflowId, idempotencyKey: 'order-7', input: { order: 7 } })) as { runId: string };
    expect(await attempt(replica, tenantId, { workflowId, idempotencyKey: 'order-7', input: { order: 8 } })).toEqual({
      code: 'CONFLICT',
      message: `idempotency key "order-7" was used by run ${runId} with a different input`,
    });
    expect(await attempt(other, tenantId, { workflowId, idempotencyKey: 'order-7', input: { order: '7' }, config: { dry: true } })).toEqual({
      code: 'CONFLICT',
      message: `idempotency key "order-7" was used by run ${runId} with a different input and config`,
    });
    expect(await countRows(db.ds, tenantId, 'runs')).toBe(1);
  });

  it('another version, given or resolved from the default, is a CONFLICT', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId, version: v1 } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    const { runId } = (await attempt(replica, tenantId, { workflowId, idempotencyKey: 'v', input: { n: 1 } })) as { runId: string };
    const { version: v2 } = await publishWorkflow(db.ds, tenantId, def([http('b')]), { workflowId });
    expect(v2).toBe(v1 + 1);
    const conflict = { code: 'CONFLICT', message: `idempotency key "v" was used by run ${runId} with a different version (it ran ${v1}, this start ${v2})` };
    expect(await attempt(replica, tenantId, { workflowId, version: v2, idempotencyKey: 'v', input: { n: 1 } })).toEqual(conflict);
    // Without a version the start resolves to the default, now v2.
    expect(await attempt(replica, tenantId, { workflowId, idempotencyKey: 'v', input: { n: 1 } })).toEqual(conflict);
    expect(await attempt(replica, tenantId, { workflowId, version: v1, idempotencyKey: 'v', input: { n: 1 } })).toEqual({ runId, created: false });
  });

  it('two concurrent starts with one key and different inputs: one run, the other CONFLICT', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, def([http('a')]));
    // Both callers are held at their insert, past their read of the key, until both are there.
    const gate = await holdLock(db.owner, GATE_KEY);
    const held = await onInsert('runs', tenantId, act.waitForLock(GATE_KEY));
    try {
      const calls = [
        attempt(replica, tenantId, { workflowId, idempotencyKey: 'race', input: { by: 'a' } }),
        attempt(other, tenantId, { workflowId, idempotencyKey: 'race', input: { by: 'b' } }),
      ];
      await eventually('both callers at their insert', async () => (await held.hits()) === 2, 30_000);
      await gate.release();
      const answers = await Promise.all(calls);
      const won = answers.filter((a): a is { runId: string; created: boolean } => 'runId' in a);
      expect(won).toHaveLength(1);
      expect(won[0]!.created).toBe(true);
      expect(answers.find((a) => 'code' in a)).toEqual({
        code: 'CONFLICT',
        message: `idempotency key "race" was used by run ${won[0]!.runId} with a different input`,
      });
      expect(await countRows(db.ds, tenantId, 'runs')).toBe(1);
    } finally {
      await gate.release().catch(() => undefined);
      await held.remove();
    }
  });
});

describe('through the API', () => {
  let platform: Awaited<ReturnType<typeof startWorkerPlatform>>;
  let client: WeftClient;

  beforeAll(async () => {
    platform = await startWorkerPlatform(db, {}, { api: true });
    const { apiKey } = await createTenant(db.ds);
    client = new WeftClient(platform.url!, apiKey);
    for (const id of ['orders', 'refunds']) {
      await client.request(`mutation($i: PublishWorkflowInput!) { publishWorkflow(input: $i) { version } }`, {
        i: { workflowId: id, definition: JSON.stringify(def([http('a')])) },
      });
    }
  });
  afterAll(async () => {
    await client?.close();
    await platform?.close();
  });

  const start = (workflowId: string, idempotencyKey: string) =>
    client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id workflowId idempotencyKey } }`, { i: { workflowId, idempotencyKey } }).then(
      (d) => ({ id: d.startRun.id as string, workflowId: d.startRun.workflowId as string }),
      (e: unknown) => {
        if (e instanceof WeftApiError) return { code: e.code, message: e.message };
        throw e;
      },
    );

  it('twenty concurrent startRun mutations with one key answer one run', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => start('orders', 'checkout-1')));
    expect(new Set(answers.map((a) => ('id' in a ? a.id : a.code))).size).toBe(1);
    expect(answers[0]).toMatchObject({ workflowId: 'orders' });
  });

  it('the same key for another workflow is a CONFLICT naming the key and the workflow, also while racing', async () => {
    const first = await start('orders', 'checkout-2');
    expect(await start('refunds', 'checkout-2')).toEqual({
      code: 'CONFLICT',
      message: expect.stringContaining(
        `idempotency key "checkout-2" was used by run ${'id' in first ? first.id : '?'} with a different workflow (it ran orders, this start refunds)`,
      ),
    });
    // Ten callers per workflow at once: whichever wins, the other workflow's callers get CONFLICT.
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => start(i % 2 ? 'refunds' : 'orders', 'checkout-3')));
    const runs = answers.filter((a): a is { id: string; workflowId: string } => 'id' in a);
    expect(new Set(runs.map((r) => r.id)).size).toBe(1);
    const winner = runs[0]!.workflowId;
    for (const [i, a] of answers.entries()) {
      const workflowId = i % 2 ? 'refunds' : 'orders';
      expect(a).toEqual(
        workflowId === winner ? runs[0] : { code: 'CONFLICT', message: expect.stringContaining(`with a different workflow (it ran ${winner},`) },
      );
    }
    expect(first).toMatchObject({ workflowId: 'orders' });
  });
});

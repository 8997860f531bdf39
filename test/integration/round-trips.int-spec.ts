import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HistoryRepository, InvalidDataError, TaskWriteRepository, WriteInvariantError, runWrites, sql, sqlAtCommit, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http } from '../support/builders.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { sentMessages } from '../support/pg-messages.js';

/**
 * A tenant transaction sends its opening with its first statement and a deferred write with its
 * COMMIT, running statements the connection already prepared as `EXECUTE name(literals)`: the
 * values must arrive exactly as bound parameters would, a deferred write's checks must still
 * roll everything back, and the order of statements must not change.
 */
let db: TestDatabase;
let tenantId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  tenantId = (await createTenant(db.ds, 'rt')).tenantId;
  await db.owner.query(`CREATE TABLE rt_values (id int PRIMARY KEY, t text, j jsonb, at timestamptz, tags text[], n int, b boolean, nothing text)`);
  await db.owner.query(`GRANT SELECT, INSERT ON rt_values TO weft_app`);
});
afterAll(async () => {
  await db?.drop();
});

/** The messages `fn` sends. */
const sent = sentMessages;

const INSERT = `INSERT INTO rt_values (id, t, j, at, tags, n, b, nothing) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8)`;
const tricky = (id: number) => [
  id,
  `it's a \\ backslash, $$ dollars $1, "quotes", a newline\nand 🎉 é`,
  JSON.stringify({ s: `it's "json" \\ \n ☃`, n: [1, 2.5, null] }),
  new Date('2026-03-08T02:30:00.123Z'),
  ['a,b', 'c"d', "e'f", 'g\\h', ''],
  -42,
  false,
  null,
];

describe('round trips of a tenant transaction', () => {
  it('stores values sent as EXECUTE literals exactly as bound parameters', async () => {
    // First use on a connection: the statement is prepared the usual way (opening, then the statement).
    for (let i = 0; i < 4; i++) await withTenant(db.ds, tenantId, (m) => sql(m, INSERT, tricky(100 + i)));
    const merged = await sent(() => withTenant(db.ds, tenantId, (m) => sql(m, INSERT, tricky(1))));
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatch(/^BEGIN; select set_config\('app\.tenant_id', .*; EXECUTE weft_[0-9a-f]{24}\(/);
    expect(merged[1]).toBe('COMMIT');
    const atCommit = await sent(() => withTenant(db.ds, tenantId, (m) => sqlAtCommit(m, INSERT, tricky(2))));
    expect(atCommit).toHaveLength(1);
    expect(atCommit[0]).toMatch(/^BEGIN; .*; EXECUTE weft_[0-9a-f]{24}\(.*\); COMMIT$/s);

    const rows = await db.owner.query(`SELECT id, t, j, at, tags, n, b, nothing FROM rt_values WHERE id IN (1, 2, 100) ORDER BY id`);
    const [one, two, bound] = rows.map(({ id: _, ...rest }: Record<string, unknown>) => rest);
    expect(one).toEqual(bound);
    expect(two).toEqual(bound);
    expect(bound).toEqual({
      t: tricky(0)[1],
      j: JSON.parse(tricky(0)[2] as string),
      at: new Date('2026-03-08T02:30:00.123Z'),
      tags: ['a,b', 'c"d', "e'f", 'g\\h', ''],
      n: -42,
      b: false,
      nothing: null,
    });
  });

  it('refuses a NUL character as data on a prepared statement too, instead of cutting the message short', async () => {
    for (let i = 0; i < 3; i++) {
      const params = tricky(200 + i);
      params[1] = 'before\u0000after';
      const err = await withTenant(db.ds, tenantId, (m) => sql(m, INSERT, params)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidDataError);
      expect((err as Error).message).toMatch(/0x00/);
    }
    const [row] = await db.owner.query(`SELECT count(*)::int AS n FROM rt_values WHERE id >= 200`);
    expect(row.n).toBe(0);
  });

  it('sends nothing for a transaction that runs no statement', async () => {
    let result: unknown;
    expect(await sent(async () => (result = await withTenant(db.ds, tenantId, async () => 42)))).toEqual([]);
    expect(result).toBe(42);
  });

  it('opens the transaction before a TypeORM query, bound to the tenant', async () => {
    const [row] = await withTenant(db.ds, tenantId, (m) => m.query(`SELECT current_setting('app.tenant_id') AS t, now() = statement_timestamp() AS fresh`));
    expect(row.t).toBe(tenantId);
    // Inside the transaction BEGIN opened: now() is the transaction's start, before this statement's.
    expect(row.fresh).toBe(false);
  });

  it('sends a deferred write before any later statement, which sees its row', async () => {
    const seen = await withTenant(db.ds, tenantId, async (m) => {
      await sqlAtCommit(m, INSERT, tricky(3));
      return (await sql<{ n: number }>(m, `SELECT count(*)::int AS n FROM rt_values WHERE id = 3`)).rows[0]!.n;
    });
    expect(seen).toBe(1);
    const [row] = await db.owner.query(`SELECT count(*)::int AS n FROM rt_values WHERE id = 3`);
    expect(row.n).toBe(1);
  });

  it('rolls back a write sent with its COMMIT whose row count is wrong, with the message of the check', async () => {
    const runId = '01900000-0000-7000-8000-0000000000aa';
    const taskId = '01900000-0000-7000-8000-0000000000ab';
    const attempt = async () =>
      withTenant(db.ds, tenantId, async (m) => {
        await sql(m, INSERT, tricky(4));
        const history = new HistoryRepository(m).parts(tenantId, runId, {
          seq: 1,
          type: 'RunStarted',
          payload: {},
          nodeId: null,
          attempt: null,
          at: new Date(),
          actions: [],
          patch: {},
        });
        // No such task: the part expecting one completed row matches none.
        const complete = new TaskWriteRepository(m).completePart(tenantId, runId, taskId, 0, { ok: true }, new Date());
        await runWrites(m, tenantId, runId, [complete, history[0]!], { atCommit: true });
      });
    for (let i = 0; i < 3; i++) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WriteInvariantError);
      expect((err as Error).message).toBe(`run ${runId}: expected exactly one task ${taskId} attempt 0 to complete, matched 0`);
    }
    const [row] = await db.owner.query(
      `SELECT (SELECT count(*) FROM rt_values WHERE id = 4)::int AS v, (SELECT count(*) FROM run_events WHERE run_id = $1)::int AS h`,
      [runId],
    );
    expect(row).toEqual({ v: 0, h: 0 });
  });

  it("sends a chain's step, reported by the worker that takes the next node, in one message", async () => {
    const perStep = await chainSteps(await coordinatorHarness(db.ds));
    // Once the committer's connection prepared the step's statement: the tenant and the fenced
    // write in one message, one implicit transaction.
    for (const step of perStep.slice(-4)) {
      expect(step).toHaveLength(1);
      expect(step[0]).toMatch(/^select set_config\('enable_seqscan', 'off', true\), set_config\('app\.tenant_id', .*\);\nEXECUTE weftc_[0-9a-f]{24}\(.*\)$/s);
    }
  });

  it("sends a chain's step on the locking path in two messages", async () => {
    const perStep = await chainSteps(await coordinatorHarness(db.ds, { fencedSteps: false }));
    // Once the connections prepared the statements of a step: the lock with the opening, the write with the COMMIT.
    for (const step of perStep.slice(-4)) {
      expect(step).toHaveLength(2);
      expect(step[0]).toMatch(/^BEGIN; select set_config\('app\.tenant_id', .*; EXECUTE weft_/s);
      expect(step[1]).toMatch(/^EXECUTE weft_[0-9a-f]{24}\(.*\); COMMIT$/s);
    }
  });

  /** A 12-node chain reported step by step by a worker taking each next node; the messages each step sent. */
  async function chainSteps(h: Awaited<ReturnType<typeof coordinatorHarness>>): Promise<string[][]> {
    const ids = Array.from({ length: 12 }, (_, i) => `n${i + 1}`);
    const runId = await h.start(
      def(
        ids.map((id) => http(id)),
        ids.slice(1).map((id, i) => edge(ids[i]!, id)),
      ),
    );
    let task = h.dispatcher.last('n1');
    let token: string | undefined;
    const perStep: string[][] = [];
    for (let i = 0; i < ids.length - 1; i++) {
      const report = () =>
        h.coordinator.runs.reportCompleted(h.tenantId, {
          runId,
          taskId: task.taskId,
          nodeId: ids[i]!,
          attempt: 0,
          output: { i },
          takeFrom: 'http',
          ...(token ? { leaseToken: token } : {}),
        });
      let res: Awaited<ReturnType<typeof report>> | undefined;
      perStep.push(await sent(async () => (res = await report())));
      task = res!.taken!.job;
      token = res!.taken!.leaseToken;
    }
    expect((await h.tasks(runId)).n11).toMatchObject({ status: 'COMPLETED', output: { i: 10 } });
    return perStep;
  }
});

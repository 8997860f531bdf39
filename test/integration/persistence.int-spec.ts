import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import {
  createDataSource,
  ENTITIES,
  InvalidCursorError,
  mapDriverError,
  RunEntity,
  RunRepository,
  runMigrations,
  sql,
  TenantRepository,
  TooManyApiKeysError,
  TransientDbError,
  UniqueViolation,
  withTenant,
  WorkflowRepository,
  type Json,
} from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http, publishWorkflow } from '../support/builders.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Inserts a run row directly (the coordinator owns real writes). */
async function insertRun(tenantId: string, workflowId: string, createdAt: Date, extra: { status?: string; idempotencyKey?: string; id?: string } = {}) {
  const id = extra.id ?? uuidv7();
  await withTenant(db.ds, tenantId, (m) =>
    sql(m, `INSERT INTO runs (tenant_id, id, workflow_id, version, status, idempotency_key, created_at) VALUES ($1,$2,$3,1,$4,$5,$6)`, [
      tenantId,
      id,
      workflowId,
      extra.status ?? 'RUNNING',
      extra.idempotencyKey ?? null,
      createdAt,
    ]),
  );
  return id;
}

describe('migrations', () => {
  it('built every table and are idempotent', async () => {
    const tables = await db.ds.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
    expect(tables.map((t: { tablename: string }) => t.tablename)).toEqual([
      'api_keys',
      'concurrency_groups',
      'dispatch_queues',
      'dispatch_shares',
      'flow_rate_starts',
      'migrations',
      'outbox',
      'queue_reservations',
      'run_batch_items',
      'run_batches',
      'run_events',
      'run_labels',
      'runs',
      'schedule_backfills',
      'schedules',
      'signals',
      'task_attempt_logs',
      'tasks',
      'tenants',
      'workers',
      'workflow_versions',
      'workflows',
    ]);
    expect(await runMigrations(db.ownerUrl)).toEqual([]);
  });

  it('match every entity (each entity can select all its columns)', async () => {
    for (const e of ENTITIES) {
      await expect(db.ds.getRepository(e).createQueryBuilder('x').limit(1).getMany()).resolves.toEqual([]);
    }
  });
});

describe('withTenant', () => {
  it('sets app.tenant_id for the transaction only', async () => {
    const one = createDataSource(db.url, { poolSize: 1 });
    await one.initialize();
    try {
      const tenantId = uuidv7();
      const inside = await withTenant(one, tenantId, (m) => m.query(`SELECT current_setting('app.tenant_id', true) AS t`));
      expect(inside[0].t).toBe(tenantId);
      // Same (only) pooled connection, next transaction: the setting is gone.
      const after = await one.query(`SELECT current_setting('app.tenant_id', true) AS t`);
      expect(after[0].t === null || after[0].t === '').toBe(true);
    } finally {
      await one.destroy();
    }
  });

  it('rolls back when the callback throws, and rejects a non-UUID tenant', async () => {
    const { tenantId } = await createTenant(db.ds);
    await expect(
      withTenant(db.ds, tenantId, async (m) => {
        await sql(m, `UPDATE tenants SET name = 'changed' WHERE id = $1`, [tenantId]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await new TenantRepository(db.ds).findTenant(tenantId))?.name).toBe('acme');
    await expect(withTenant(db.ds, 'nope', async () => 1)).rejects.toThrow(TypeError);
  });

  it('maps a lost connection to TransientDbError', async () => {
    const err = await withTenant(db.ds, uuidv7(), (m) => m.query('SELECT pg_terminate_backend(pg_backend_pid())')).catch((e) => e);
    expect(err).toBeInstanceOf(TransientDbError);
    // The pool recovers.
    expect((await db.ds.query('SELECT 1 AS one'))[0].one).toBe(1);
  });

  it('maps a transaction whose connection was terminated between two statements to TransientDbError, and keeps the process up', async () => {
    // The backend dies while the transaction is idle (another session terminates it): the pg
    // client emits 'error' outside any query, TypeORM releases the runner, and the next statement
    // fails with TypeORM's QueryRunnerAlreadyReleasedError — a lost connection, so transient.
    const err = await withTenant(db.ds, uuidv7(), async (m) => {
      const [{ pid }] = await m.query('SELECT pg_backend_pid() AS pid');
      await db.owner.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((r) => setTimeout(r, 300));
      return m.query('SELECT 1');
    }).catch((e) => e);
    expect(err).toBeInstanceOf(TransientDbError);
    await new Promise((r) => setTimeout(r, 300));
    expect((await db.ds.query('SELECT 1 AS one'))[0].one).toBe(1);
  });
});

describe('mapDriverError', () => {
  it.each([
    ['40001', TransientDbError],
    ['40P01', TransientDbError],
    ['57P01', TransientDbError],
    ['08006', TransientDbError],
    ['ECONNRESET', TransientDbError],
    ['23505', UniqueViolation],
  ])('maps %s', (code, type) => {
    expect(mapDriverError(Object.assign(new Error('x'), { code }))).toBeInstanceOf(type);
  });

  it('maps "Connection terminated unexpectedly" and leaves other errors alone', () => {
    expect(mapDriverError(new Error('Connection terminated unexpectedly'))).toBeInstanceOf(TransientDbError);
    const other = Object.assign(new Error('syntax'), { code: '42601' });
    expect(mapDriverError(other)).toBe(other);
  });
});

describe('TenantRepository', () => {
  it('creates a tenant with a high-entropy admin key stored hashed', async () => {
    const repo = new TenantRepository(db.ds);
    const t = await repo.createTenant('globex');
    expect(t.apiKey).toMatch(/^weft_[A-Za-z0-9_-]{43}$/);
    expect(await repo.findApiKey(t.apiKey)).toEqual({ tenantId: t.tenantId, keyId: t.keyId, role: 'admin' });
    const stored = await withTenant(db.ds, t.tenantId, (m) =>
      sql<{ key_hash: string; key_prefix: string }>(m, `SELECT key_hash, key_prefix FROM api_keys WHERE tenant_id = $1`, [t.tenantId]),
    );
    expect(stored.rows[0]!.key_hash).toBe(createHash('sha256').update(t.apiKey).digest('hex'));
    expect(t.apiKey.startsWith(stored.rows[0]!.key_prefix)).toBe(true);
    expect(JSON.stringify(await repo.listApiKeys(t.tenantId))).not.toContain(stored.rows[0]!.key_hash);
  });

  it('ignores unknown and revoked keys', async () => {
    const repo = new TenantRepository(db.ds);
    const t = await repo.createTenant('initech');
    const viewer = await repo.createApiKey(t.tenantId, { name: 'ci', role: 'viewer' });
    expect((await repo.findApiKey(viewer.apiKey))?.role).toBe('viewer');
    expect(await repo.revokeApiKey(t.tenantId, viewer.keyId)).toBe(true);
    expect(await repo.findApiKey(viewer.apiKey)).toBeNull();
    expect(await repo.findApiKey('weft_' + 'A'.repeat(43))).toBeNull();
    expect(await repo.findApiKey('not-a-key')).toBeNull();
    // A key of another tenant cannot be revoked through this one.
    const other = await repo.createTenant('other');
    expect(await repo.revokeApiKey(other.tenantId, t.keyId)).toBe(false);
    expect(await repo.findApiKey(t.apiKey)).not.toBeNull();
  });

  it('creates no key past maxLive live keys, even for concurrent creates; revoked keys do not count', async () => {
    const repo = new TenantRepository(db.ds);
    const t = await repo.createTenant('capped');
    const tries = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => repo.createApiKey(t.tenantId, { name: `k${i}`, role: 'viewer' }, { maxLive: 3 })),
    );
    expect(tries.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect(tries.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual(Array(6).fill(new TooManyApiKeysError(3)));
    const keys = await repo.listApiKeys(t.tenantId);
    expect(keys).toHaveLength(3);
    await repo.revokeApiKey(t.tenantId, keys[2]!.id);
    expect((await repo.createApiKey(t.tenantId, { name: 'again', role: 'viewer' }, { maxLive: 3 })).role).toBe('viewer');
    await expect(repo.createApiKey(t.tenantId, { name: 'over', role: 'viewer' }, { maxLive: 3 })).rejects.toThrow('the tenant holds 3 live API keys');
    // Without maxLive (a tenant's first key) nothing is counted.
    expect((await repo.createApiKey(t.tenantId, { name: 'uncapped', role: 'viewer' })).role).toBe('viewer');
  });
});

describe('WorkflowRepository', () => {
  const definition = def([http('a'), http('b')], [edge('a', 'b')]);

  it('numbers versions per workflow and returns the latest by default', async () => {
    const { tenantId } = await createTenant(db.ds);
    const repo = new WorkflowRepository(db.ds);
    const v1 = await repo.publishVersion(tenantId, {
      workflowId: 'orders',
      name: 'Orders',
      definition: definition as unknown as Json,
      source: 'v1',
      checksum: 'c1',
    });
    const v2 = await repo.publishVersion(tenantId, { workflowId: 'orders', definition: definition as unknown as Json, source: 'v2', checksum: 'c2' });
    expect([v1.version, v2.version]).toEqual([1, 2]);
    expect((await repo.getVersion(tenantId, 'orders'))?.source).toBe('v2');
    expect((await repo.getVersion(tenantId, 'orders', 1))?.source).toBe('v1');
    expect((await repo.getVersion(tenantId, 'orders', 1))?.definition).toEqual(definition);
    expect(await repo.getVersion(tenantId, 'orders', 3)).toBeNull();
    expect(await repo.getVersion(tenantId, 'missing')).toBeNull();
    const list = await repo.list(tenantId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ workflowId: 'orders', name: 'Orders', latestVersion: 2, latest: { version: 2, source: 'v2' } });
    expect((await repo.listVersions(tenantId, 'orders')).map((v) => v.version)).toEqual([1, 2]);
  });

  it('gives concurrent publishes distinct consecutive versions', async () => {
    const { tenantId } = await createTenant(db.ds);
    const repo = new WorkflowRepository(db.ds);
    const versions = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        repo.publishVersion(tenantId, { workflowId: 'hot', definition: definition as unknown as Json, source: `s${i}`, checksum: `${i}` }),
      ),
    );
    expect(versions.map((v) => v.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('is filtered by tenant', async () => {
    const a = await createTenant(db.ds, 'a');
    const b = await createTenant(db.ds, 'b');
    await publishWorkflow(db.ds, a.tenantId, definition, { workflowId: 'private' });
    const repo = new WorkflowRepository(db.ds);
    expect(await repo.getVersion(b.tenantId, 'private')).toBeNull();
    expect(await repo.list(b.tenantId)).toEqual([]);
  });
});

describe('RunRepository', () => {
  it('pages runs newest first with a keyset cursor and filters', async () => {
    const { tenantId } = await createTenant(db.ds);
    await publishWorkflow(db.ds, tenantId, def([http('a')]), { workflowId: 'w1' });
    await publishWorkflow(db.ds, tenantId, def([http('a')]), { workflowId: 'w2' });
    const base = Date.parse('2030-01-01T00:00:00Z');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Two runs share each millisecond: the cursor must still be exact.
      ids.push(await insertRun(tenantId, i % 2 ? 'w2' : 'w1', new Date(base + Math.floor(i / 2)), { status: i === 6 ? 'FAILED' : 'RUNNING' }));
    }
    const repo = new RunRepository(db.ds);
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const p: Awaited<ReturnType<RunRepository['listRuns']>> = await repo.listRuns(tenantId, {}, 3, after);
      seen.push(...p.edges.map((e) => e.node.id));
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    const expected = ids
      .map((id, i) => ({ id, t: base + Math.floor(i / 2) }))
      .sort((x, y) => y.t - x.t || (y.id < x.id ? -1 : 1))
      .map((x) => x.id);
    expect(seen).toEqual(expected);

    expect((await repo.listRuns(tenantId, { workflowId: 'w2' }, 50)).edges).toHaveLength(3);
    expect((await repo.listRuns(tenantId, { status: 'FAILED' }, 50)).edges.map((e) => e.node.id)).toEqual([ids[6]]);
    const window = await repo.listRuns(tenantId, { createdAfter: new Date(base + 1), createdBefore: new Date(base + 3) }, 50);
    expect(window.edges.map((e) => e.node.id).sort()).toEqual([ids[2], ids[3], ids[4], ids[5]].sort());
    await expect(repo.listRuns(tenantId, {}, 3, 'garbage')).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('is filtered by tenant, and reads tasks and events in order', async () => {
    const a = await createTenant(db.ds, 'a');
    const b = await createTenant(db.ds, 'b');
    await publishWorkflow(db.ds, a.tenantId, def([http('a')]), { workflowId: 'w' });
    const runId = await insertRun(a.tenantId, 'w', new Date());
    await withTenant(db.ds, a.tenantId, async (m) => {
      const t0 = new Date('2030-01-01T00:00:00Z');
      for (const [i, node] of ['x', 'y', 'z'].entries()) {
        await sql(m, `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, status, created_at) VALUES ($1,$2,$3,$4,'HTTP','PENDING',$5)`, [
          a.tenantId,
          uuidv7(),
          runId,
          node,
          new Date(t0.getTime() + (2 - i) * 1000),
        ]);
      }
      for (const seq of [2, 1, 3]) {
        await sql(m, `INSERT INTO run_events (tenant_id, run_id, seq, type) VALUES ($1,$2,$3,'RunStarted')`, [a.tenantId, runId, seq]);
      }
    });
    const repo = new RunRepository(db.ds);
    expect((await repo.findRun(a.tenantId, runId))?.status).toBe('RUNNING');
    // Every column, typed as TypeORM reads the entity (the read is a statement of its own).
    const byTypeorm: RunEntity | null = await withTenant(db.ds, a.tenantId, (m) =>
      m.getRepository(RunEntity).createQueryBuilder('r').where('r.id = :runId', { runId }).getOne(),
    );
    expect(await repo.findRun(a.tenantId, runId)).toEqual(byTypeorm);
    expect(Object.keys(byTypeorm!).sort()).toEqual(
      db.ds
        .getMetadata(RunEntity)
        .columns.map((c) => c.propertyName)
        .sort(),
    );
    expect(await repo.findRun(b.tenantId, runId)).toBeNull();
    expect(await repo.findRun(a.tenantId, 'not-a-uuid')).toBeNull();
    expect((await repo.tasksOfRun(a.tenantId, runId)).map((t) => t.nodeId)).toEqual(['z', 'y', 'x']);
    expect(await repo.tasksOfRun(b.tenantId, runId)).toEqual([]);
    expect((await repo.eventsOfRun(a.tenantId, runId)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(await repo.eventsOfRun(b.tenantId, runId)).toEqual([]);
    expect((await repo.listRuns(b.tenantId)).edges).toEqual([]);
  });

  it('reads runs, tasks and events with the sizes of their stored values, and pages tasks and history', async () => {
    const a = await createTenant(db.ds, 'a');
    const b = await createTenant(db.ds, 'b');
    await publishWorkflow(db.ds, a.tenantId, def([http('a')]), { workflowId: 'w' });
    const runId = await insertRun(a.tenantId, 'w', new Date());
    const ids: Record<string, string> = {};
    await withTenant(db.ds, a.tenantId, async (m) => {
      await sql(m, `UPDATE runs SET input = '{"n": 12}'::jsonb, output = '[1, 2]'::jsonb WHERE tenant_id = $1 AND id = $2`, [a.tenantId, runId]);
      const t0 = new Date('2030-01-01T00:00:00Z');
      const t1 = new Date('2030-01-01T00:00:01Z');
      // One event creates a for_each node's own task and its iterations at once: same created_at.
      const rows: [string, string, number | null, Date][] = [
        ['start', 'start', null, t0],
        ['i2', 'fan', 2, t1],
        ['agg', 'fan', null, t1],
        ['i0', 'fan', 0, t1],
        ['i1', 'fan', 1, t1],
      ];
      for (const [key, node, iteration, at] of rows) {
        ids[key] = uuidv7();
        await sql(
          m,
          `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, status, iteration, output, error, created_at)
           VALUES ($1,$2,$3,$4,'HTTP','FAILED',$5,$6::jsonb,$7,$8)`,
          [a.tenantId, ids[key], runId, node, iteration, JSON.stringify({ key }), `boom ${key}`, at],
        );
      }
      for (const seq of [1, 2, 3]) {
        await sql(m, `INSERT INTO run_events (tenant_id, run_id, seq, type, payload, actions) VALUES ($1,$2,$3,'RunStarted',$4::jsonb,'[]'::jsonb)`, [
          a.tenantId,
          runId,
          seq,
          JSON.stringify({ seq }),
        ]);
      }
    });
    const repo = new RunRepository(db.ds);

    const run = await repo.findSizedRun(a.tenantId, runId);
    expect(run).not.toHaveProperty('input');
    expect(run).not.toHaveProperty('output');
    // The JSON text as PostgreSQL prints it: '{"n": 12}', the default '{}' and '[1, 2]'; SQL NULL counts 0.
    expect(run?.jsonBytes).toEqual({ input: 9, config: 2, output: 6, error: 0 });
    expect((await repo.findSizedRun(a.tenantId, runId, ['output']))?.jsonBytes).toEqual({ output: 6 });
    expect(await repo.findSizedRun(b.tenantId, runId)).toBeNull();
    expect((await repo.listRuns(a.tenantId, {}, 5, null, [])).edges[0]?.node.jsonBytes).toEqual({});

    const order = ['start', 'agg', 'i0', 'i1', 'i2'].map((k) => ids[k]);
    const all = await repo.taskPage(a.tenantId, runId);
    expect(all.map((t) => t.id)).toEqual(order);
    expect(all[0]).not.toHaveProperty('output');
    expect(all[0]!.jsonBytes).toEqual({ input: 0, output: JSON.stringify({ key: 'start' }).length + 1, error: 'boom start'.length });
    const paged: string[] = [];
    for (let after: string | null = null; ;) {
      const page = await repo.taskPage(a.tenantId, runId, 2, after, ['output']);
      paged.push(...page.map((t) => t.id));
      if (page.length < 2) break;
      after = page[1]!.id;
    }
    expect(paged).toEqual(order);
    expect((await repo.firstTaskPages(a.tenantId, [runId], 3)).get(runId)?.map((t) => t.id)).toEqual(order.slice(0, 3));
    await expect(repo.taskPage(a.tenantId, runId, 2, uuidv7())).rejects.toBeInstanceOf(InvalidCursorError);
    expect(await repo.taskPage(b.tenantId, runId)).toEqual([]);
    // Task.failedIterations: the aggregate's FAILED iteration indexes; nothing for other tasks or another tenant.
    expect(await repo.failedIterations(a.tenantId, [ids.agg!, ids.start!, ids.i0!, 'not-a-uuid'])).toEqual(new Map([[ids.agg!, [0, 1, 2]]]));
    expect(await repo.failedIterations(b.tenantId, [ids.agg!])).toEqual(new Map());

    expect((await repo.eventPage(a.tenantId, runId, 1, 1)).map((e) => e.seq)).toEqual([2]);
    expect((await repo.eventPage(a.tenantId, runId, 5, 1, ['payload'])).map((e) => e.jsonBytes)).toEqual([{ payload: 10 }, { payload: 10 }]);

    const values = await repo.taskJson(a.tenantId, [ids.i1!, ids.start!], ['output', 'error']);
    expect(values.get(ids.i1!)).toEqual({ output: { key: 'i1' }, error: 'boom i1' });
    expect((await repo.runJson(a.tenantId, [runId], ['input'])).get(runId)).toEqual({ input: { n: 12 } });
    expect((await repo.eventJson(a.tenantId, [{ runId, seq: 3 }], ['payload'])).get(`${runId}:3`)).toEqual({ payload: { seq: 3 } });
    expect((await repo.taskJson(b.tenantId, [ids.i1!], ['output'])).size).toBe(0);
  });

  it('enforces one run per idempotency key and tenant', async () => {
    const a = await createTenant(db.ds, 'a');
    const b = await createTenant(db.ds, 'b');
    await publishWorkflow(db.ds, a.tenantId, def([http('a')]), { workflowId: 'w' });
    await publishWorkflow(db.ds, b.tenantId, def([http('a')]), { workflowId: 'w' });
    await insertRun(a.tenantId, 'w', new Date(), { idempotencyKey: 'k1' });
    const err = await insertRun(a.tenantId, 'w', new Date(), { idempotencyKey: 'k1' }).catch((e) => e);
    expect(err).toBeInstanceOf(UniqueViolation);
    expect((err as UniqueViolation).constraint).toBe('runs_idempotency_key');
    await expect(insertRun(b.tenantId, 'w', new Date(), { idempotencyKey: 'k1' })).resolves.toBeDefined();
    await expect(insertRun(a.tenantId, 'w', new Date())).resolves.toBeDefined();
    await expect(insertRun(a.tenantId, 'w', new Date())).resolves.toBeDefined();
  });
});

describe('stored sizes of JSON columns', () => {
  /** Rows of `table` of the run whose `<col>_bytes` is not the bytes of `col`'s text. */
  async function mismatches(tenantId: string, table: string, key: string, runId: string, cols: string[]) {
    const wrong = cols.map((c) => `${c}_bytes IS DISTINCT FROM COALESCE(octet_length(${c}::text), 0)`).join(' OR ');
    const r = await withTenant(db.ds, tenantId, (m) =>
      sql(m, `SELECT count(*)::int AS n, count(*) FILTER (WHERE ${wrong})::int AS wrong FROM ${table} WHERE tenant_id = $1 AND ${key} = $2`, [tenantId, runId]),
    );
    return r.rows[0] as { n: number; wrong: number };
  }

  it('are kept at write time for runs, tasks, history and versions, and computed for rows without them', async () => {
    const h = await coordinatorHarness(db.ds);
    const runId = await h.start(def([http('a'), http('b', { url: 'http://x/{{tasks.a.output.n}}' })], [edge('a', 'b')]), { input: { pad: 'é'.repeat(500) } });
    await h.complete('a', { n: 7, text: 'ü'.repeat(3000) });
    await h.complete('b', { done: true, nested: { list: [1, 2.5, 'x'] } });
    expect((await h.run(runId)).status).toBe('SUCCEEDED');

    // Written by INSERTs (tasks' input, history) and UPDATEs (tasks' and the run's output).
    expect(await mismatches(h.tenantId, 'runs', 'id', runId, ['input', 'config', 'output'])).toEqual({ n: 1, wrong: 0 });
    expect(await mismatches(h.tenantId, 'tasks', 'run_id', runId, ['input', 'output'])).toEqual({ n: 2, wrong: 0 });
    expect(await mismatches(h.tenantId, 'run_events', 'run_id', runId, ['payload', 'actions'])).toMatchObject({ wrong: 0 });
    const versions = await withTenant(db.ds, h.tenantId, (m) =>
      sql(
        m,
        `SELECT count(*) FILTER (WHERE definition_bytes IS DISTINCT FROM octet_length(definition::text))::int AS wrong FROM workflow_versions WHERE tenant_id = $1`,
        [h.tenantId],
      ),
    );
    expect(versions.rows[0]).toEqual({ wrong: 0 });

    // A row written before the sizes were kept (NULL) is sized from its value.
    const tasks = await h.tasks(runId);
    await withTenant(db.ds, h.tenantId, (m) => sql(m, `UPDATE tasks SET output_bytes = NULL WHERE tenant_id = $1 AND id = $2`, [h.tenantId, tasks.a!.id]));
    await withTenant(db.ds, h.tenantId, (m) => sql(m, `UPDATE runs SET output_bytes = NULL WHERE tenant_id = $1 AND id = $2`, [h.tenantId, runId]));
    const repo = new RunRepository(db.ds);
    const page = await repo.taskPage(h.tenantId, runId, 10, null, ['output']);
    const sizeOf = async (table: string, col: string, id: string) =>
      (
        await withTenant(db.ds, h.tenantId, (m) =>
          sql<{ n: number }>(m, `SELECT octet_length(${col}::text) AS n FROM ${table} WHERE tenant_id = $1 AND id = $2`, [h.tenantId, id]),
        )
      ).rows[0]!.n;
    expect(page.find((t) => t.id === tasks.a!.id)!.jsonBytes.output).toBe(await sizeOf('tasks', 'output', tasks.a!.id));
    expect((await repo.findSizedRun(h.tenantId, runId, ['output']))!.jsonBytes.output).toBe(await sizeOf('runs', 'output', runId));
    expect(await sizeOf('tasks', 'output', tasks.a!.id)).toBeGreaterThan(6000);
  });
});

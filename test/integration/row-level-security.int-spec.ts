import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { DataSource, EntityManager } from 'typeorm';
import { TenantRepository, checkRuntimeRole, claimDueTimers, createDataSource, withTenant } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * The database's own wall between tenants, checked as the runtime role
 * `weft_app` — the role every Weft process connects as. Tenants A and B each own one row in
 * every tenant table (written by the owner, so the fixture does not depend on the policies
 * under test); then, table by table, the runtime role tries to read and write across the wall.
 */

/** One row of each tenant table for tenant `t`: the SQL and parameters of its INSERT. */
interface Row {
  sql: string;
  params: unknown[];
}

interface Ids {
  tenant: string;
  key: string;
  run: string;
  task: string;
  signal: string;
  schedule: string;
  backfill: string;
}

const freshIds = (tenant: string): Ids => ({ tenant, key: uuidv7(), run: uuidv7(), task: uuidv7(), signal: uuidv7(), schedule: uuidv7(), backfill: uuidv7() });

/** The INSERT of each tenant table for `ids`, parents first (a table's row may need the ones before it). */
function rowsOf(ids: Ids, n: number): [table: string, row: Row][] {
  const { tenant, key, run, task, signal, schedule, backfill } = ids;
  return [
    ['tenants', { sql: `INSERT INTO tenants (id, name) VALUES ($1, $2)`, params: [tenant, `tenant ${n}`] }],
    [
      'api_keys',
      {
        sql: `INSERT INTO api_keys (tenant_id, id, name, role, key_hash, key_prefix) VALUES ($1, $2, 'k', 'viewer', $3, 'weft_xxxxxxxx')`,
        params: [tenant, key, randomBytes(32).toString('hex')],
      },
    ],
    ['workflows', { sql: `INSERT INTO workflows (tenant_id, id, latest_version) VALUES ($1, $2, 1)`, params: [tenant, `wf-${n}`] }],
    [
      'workflow_versions',
      {
        sql: `INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum) VALUES ($1, $2, 1, '{}', '{}', 'c')`,
        params: [tenant, `wf-${n}`],
      },
    ],
    ['runs', { sql: `INSERT INTO runs (tenant_id, id, workflow_id, version, status) VALUES ($1, $2, $3, 1, 'RUNNING')`, params: [tenant, run, `wf-${n}`] }],
    [
      'tasks',
      {
        sql: `INSERT INTO tasks (tenant_id, id, run_id, node_id, node_type, status, wake_at, queue)
              VALUES ($1, $2, $3, 'a', 'WAIT', 'WAITING', now() - interval '1 hour', 'http')`,
        params: [tenant, task, run],
      },
    ],
    ['signals', { sql: `INSERT INTO signals (tenant_id, id, run_id, name) VALUES ($1, $2, $3, 'go')`, params: [tenant, signal, run] }],
    ['run_events', { sql: `INSERT INTO run_events (tenant_id, run_id, seq, type) VALUES ($1, $2, $3, 'RunStarted')`, params: [tenant, run, n] }],
    ['run_labels', { sql: `INSERT INTO run_labels (tenant_id, key, value, run_id) VALUES ($1, 'team', $2, $3)`, params: [tenant, `t-${n}`, run] }],
    [
      'run_batches',
      {
        sql: `INSERT INTO run_batches (tenant_id, id, action, filter, status, total, created_at, updated_at, next_at)
              VALUES ($1, $2, 'PAUSE', '{}', 'RUNNING', 1, now(), now(), now())`,
        params: [tenant, signal],
      },
    ],
    ['run_batch_items', { sql: `INSERT INTO run_batch_items (tenant_id, batch_id, seq, run_id) VALUES ($1, $2, 1, $3)`, params: [tenant, signal, run] }],
    [
      'webhooks',
      {
        sql: `INSERT INTO webhooks (tenant_id, id, url, events, secret, created_at) VALUES ($1, $2, 'https://example.com/hook', '{run.failed}', 'whsec_x', now())`,
        params: [tenant, signal],
      },
    ],
    [
      'webhook_deliveries',
      {
        sql: `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event, run_id, run_seq, run, created_at, next_attempt_at)
              VALUES ($1, $2, $3, 'run.failed', $4, 1, '{}', now(), now() - interval '1 hour')`,
        params: [tenant, backfill, signal, run],
      },
    ],
    [
      'outbox',
      { sql: `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before) VALUES ($1, $2, $3, 1, 'http', now())`, params: [tenant, run, task] },
    ],
    ['queue_reservations', { sql: `INSERT INTO queue_reservations (tenant_id, queue) VALUES ($1, $2)`, params: [tenant, `reserved-${n}`] }],
    [
      'schedules',
      {
        sql: `INSERT INTO schedules (tenant_id, id, workflow_id, interval_seconds, next_fire_at, next_due_at) VALUES ($1, $2, $3, 60, now() - interval '1 hour', now() - interval '1 hour')`,
        params: [tenant, schedule, `wf-${n}`],
      },
    ],
    [
      'schedule_backfills',
      {
        sql: `INSERT INTO schedule_backfills (tenant_id, id, schedule_id, from_time, to_time, total) VALUES ($1, $2, $3, now(), now(), 0)`,
        params: [tenant, backfill, schedule],
      },
    ],
    [
      'concurrency_groups',
      {
        sql: `INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at) VALUES ($1, $2, 'workflow', $3, 'k', 1, now())`,
        params: [tenant, `workflow:wf-${n}:k`, `wf-${n}`],
      },
    ],
    ['dispatch_shares', { sql: `INSERT INTO dispatch_shares (tenant_id, queue, vfinish, served_at) VALUES ($1, 'http', 0, now())`, params: [tenant] }],
    [
      'flow_rate_starts',
      { sql: `INSERT INTO flow_rate_starts (tenant_id, rate_key, started_at, task_id, attempt) VALUES ($1, 'k', now(), $2, 0)`, params: [tenant, task] },
    ],
    [
      'task_attempt_logs',
      {
        sql: `INSERT INTO task_attempt_logs (tenant_id, task_id, attempt, run_id, node_id, started_at, finished_at, logs) VALUES ($1, $2, 0, $3, 'a', now(), now(), 'printed')`,
        params: [tenant, task, run],
      },
    ],
  ];
}

/** The column holding each table's tenant, and a column every test may harmlessly update. */
const TABLES: Record<string, { tenantColumn: string; touch: string }> = {
  tenants: { tenantColumn: 'id', touch: `name = name` },
  api_keys: { tenantColumn: 'tenant_id', touch: `name = name` },
  workflows: { tenantColumn: 'tenant_id', touch: `name = name` },
  workflow_versions: { tenantColumn: 'tenant_id', touch: `checksum = checksum` },
  runs: { tenantColumn: 'tenant_id', touch: `error = error` },
  tasks: { tenantColumn: 'tenant_id', touch: `error = error` },
  signals: { tenantColumn: 'tenant_id', touch: `name = name` },
  run_events: { tenantColumn: 'tenant_id', touch: `error = error` },
  run_labels: { tenantColumn: 'tenant_id', touch: `value = value` },
  run_batches: { tenantColumn: 'tenant_id', touch: `reason = reason` },
  run_batch_items: { tenantColumn: 'tenant_id', touch: `error = error` },
  webhooks: { tenantColumn: 'tenant_id', touch: `url = url` },
  webhook_deliveries: { tenantColumn: 'tenant_id', touch: `last_error = last_error` },
  outbox: { tenantColumn: 'tenant_id', touch: `queue = queue` },
  queue_reservations: { tenantColumn: 'tenant_id', touch: `queue = queue` },
  schedules: { tenantColumn: 'tenant_id', touch: `note = note` },
  schedule_backfills: { tenantColumn: 'tenant_id', touch: `total = total` },
  concurrency_groups: { tenantColumn: 'tenant_id', touch: `key = key` },
  dispatch_shares: { tenantColumn: 'tenant_id', touch: `vfinish = vfinish` },
  flow_rate_starts: { tenantColumn: 'tenant_id', touch: `rate_key = rate_key` },
  task_attempt_logs: { tenantColumn: 'tenant_id', touch: `logs = logs` },
};

/**
 * The tables that are not tenant data, without row-level security, and exactly what the runtime
 * role may do with each (table privileges, then column privileges as `PRIVILEGE(column)`).
 * `workers`: each worker process writes its own row and the API lists them; a heartbeat or a
 * drain moves only its times. `dispatch_queues`: nothing, the dispatch functions keep it.
 */
const GLOBAL_TABLES: Record<string, string[]> = {
  // Each queue's virtual clock of fair dispatch: only the dispatch functions touch it.
  dispatch_queues: [],
  workers: ['DELETE', 'INSERT', 'SELECT', 'UPDATE(draining_since)', 'UPDATE(expires_at)', 'UPDATE(last_heartbeat_at)'],
};

let db: TestDatabase;
const A = freshIds(uuidv7());
const B = freshIds(uuidv7());

beforeAll(async () => {
  db = await createTestDatabase();
  for (const [ids, n] of [
    [A, 1],
    [B, 2],
  ] as const) {
    for (const [, row] of rowsOf(ids, n)) await db.owner.query(row.sql, row.params);
  }
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `fn` on the runtime role in a transaction with no tenant set; always rolled back. */
async function noTenant<T>(fn: (m: EntityManager) => Promise<T>): Promise<T> {
  return rolledBack(db.ds, fn);
}

/** Runs `fn` on the runtime role in `withTenant(tenant)`; always rolled back. */
async function asTenant<T>(tenant: string, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const rollback = new Error('rollback');
  let out: T | undefined;
  await withTenant(db.ds, tenant, async (m) => {
    out = await fn(m);
    throw rollback;
  }).catch((e) => {
    if (e !== rollback) throw e;
  });
  return out as T;
}

async function rolledBack<T>(ds: DataSource, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  const qr = ds.createQueryRunner();
  await qr.connect();
  await qr.startTransaction();
  try {
    return await fn(qr.manager);
  } finally {
    await qr.rollbackTransaction();
    await qr.release();
  }
}

/** Runs `sql` in a savepoint and returns the error the server raised (undefined when none). */
async function refusal(m: EntityManager, sql: string, params: unknown[]): Promise<{ code?: string; message: string } | undefined> {
  await m.query('SAVEPOINT attempt');
  try {
    await m.query(sql, params);
    await m.query('RELEASE SAVEPOINT attempt');
    return undefined;
  } catch (err) {
    await m.query('ROLLBACK TO SAVEPOINT attempt');
    return err as { code?: string; message: string };
  }
}

/**
 * Runs `fn` connected as a new login role (named `weft_rls_<kind>_<random>`, given `grants`,
 * e.g. `GRANT weft_app TO %s`), then drops the connection and the role.
 */
async function asNewRole(kind: string, grants: string[], fn: (ds: DataSource, role: string) => Promise<void>): Promise<void> {
  const role = `weft_rls_${kind}_${randomBytes(4).toString('hex')}`;
  await db.owner.query(`CREATE ROLE ${role} LOGIN`);
  for (const g of grants) await db.owner.query(g.replace('%s', role));
  const ds = createDataSource(db.ownerUrl.replace('postgres@', `${role}@`), { poolSize: 1 });
  try {
    await ds.initialize();
    await fn(ds, role);
  } finally {
    if (ds.isInitialized) await ds.destroy();
    await db.owner.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
  }
}

const affected = (result: unknown): number => (Array.isArray(result) ? (result[1] as number) : 0);

describe('the runtime role', () => {
  it('is not a superuser, has no BYPASSRLS and owns no table, so the policies hold it', async () => {
    const [role] = await db.ds.query(
      `SELECT current_user AS name, rolsuper, rolbypassrls,
              (SELECT count(*)::int FROM pg_class c WHERE c.relowner = r.oid AND c.relkind = 'r') AS owned
         FROM pg_roles r WHERE rolname = current_user`,
    );
    expect(role).toEqual({ name: 'weft_app', rolsuper: false, rolbypassrls: false, owned: 0 });
    await expect(checkRuntimeRole(db.ds)).resolves.toBeUndefined();
  });

  it('finds every tenant table forced under row-level security with a tenant_isolation policy', async () => {
    const all: { relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean; policies: string[] }[] = await db.owner.query(
      `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
              array(SELECT p.polname::text FROM pg_policy p WHERE p.polrelid = c.oid ORDER BY 1) AS policies
         FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname <> 'migrations'
        ORDER BY c.relname`,
    );
    // Every table is a tenant table or one of the few global ones, listed with what the runtime may do.
    expect(all.map((r) => r.relname)).toEqual([...Object.keys(TABLES), ...Object.keys(GLOBAL_TABLES)].sort());
    const rows = all.filter((r) => r.relname in TABLES);
    for (const r of rows) {
      expect({ table: r.relname, enabled: r.relrowsecurity, forced: r.relforcerowsecurity }).toEqual({ table: r.relname, enabled: true, forced: true });
      expect(r.policies).toContain('tenant_isolation');
    }
  });

  it('has exactly the listed privileges on each global table, which holds no tenant data and no policy', async () => {
    for (const [table, expected] of Object.entries(GLOBAL_TABLES)) {
      const [row] = await db.owner.query(
        `SELECT c.relrowsecurity AS rls, pg_get_userbyid(c.relowner)::text AS owner,
                array(SELECT a.privilege_type::text FROM aclexplode(c.relacl) a WHERE a.grantee = 'weft_app'::regrole
                      UNION ALL
                      SELECT a.privilege_type || '(' || att.attname || ')' FROM pg_attribute att, aclexplode(att.attacl) a
                       WHERE att.attrelid = c.oid AND att.attacl IS NOT NULL AND a.grantee = 'weft_app'::regrole
                      ORDER BY 1) AS privileges,
                EXISTS (SELECT 1 FROM pg_attribute att WHERE att.attrelid = c.oid AND att.attname = 'tenant_id') AS has_tenant
           FROM pg_class c WHERE c.oid = $1::regclass`,
        [table],
      );
      expect({ table, ...row }).toEqual({ table, rls: false, owner: 'postgres', privileges: expected, has_tenant: false });
    }
  });

  it('may move only the times of a worker row, and never truncate the registry', async () => {
    const id = uuidv7();
    await noTenant(async (m) => {
      await m.query(`INSERT INTO workers (id, host, pid, version, queues, concurrency, expires_at) VALUES ($1, 'h', 1, 'v', '{http}', 1, now())`, [id]);
      expect(affected(await m.query(`UPDATE workers SET last_heartbeat_at = now(), expires_at = now(), draining_since = now() WHERE id = $1`, [id]))).toBe(1);
      for (const column of ['host', 'pid', 'version', 'queues', 'concurrency', 'started_at', 'id']) {
        expect({ column, code: (await refusal(m, `UPDATE workers SET ${column} = ${column} WHERE id = $1`, [id]))?.code }).toEqual({ column, code: '42501' });
      }
      expect((await refusal(m, `TRUNCATE workers`, []))?.code).toBe('42501');
    });
  });

  it.each(['weft_queue_stats(timestamptz)', 'weft_queue_access(text)'])(
    'is refused on a database that lacks the latest migration (no %s), naming the fix',
    async (fn) => {
      const behind = await createTestDatabase();
      try {
        await behind.owner.query(`DROP FUNCTION ${fn}`);
        await expect(checkRuntimeRole(behind.ds)).rejects.toThrow(/lacks the latest migrations of this version of Weft: run `weft migrate`/);
      } finally {
        await behind.drop();
      }
    },
  );

  it('is refused when booting as a superuser: the owner connection fails the runtime check', async () => {
    await expect(checkRuntimeRole(db.owner)).rejects.toThrow(
      /connects as postgres, a superuser or a member of one \([^)]*postgres[^)]*\), which bypasses row-level security/,
    );
  });

  it('is refused when it could become a superuser through a role it is a member of', async () => {
    await asNewRole('member', ['GRANT weft_app TO %s', 'GRANT postgres TO %s'], async (member, role) => {
      await expect(checkRuntimeRole(member)).rejects.toThrow(new RegExp(`${role}, a superuser or a member of one \\(postgres\\)`));
    });
  });

  it('is refused when it is not weft_app nor a member of it, and accepted when it is a member', async () => {
    await asNewRole('stranger', [], async (stranger, role) => {
      await expect(checkRuntimeRole(stranger)).rejects.toThrow(`GRANT weft_app TO ${role}`);
      await db.owner.query(`GRANT weft_app TO ${role}`);
      await expect(checkRuntimeRole(stranger)).resolves.toBeUndefined();
    });
  });

  it('may not read the migrations table, truncate a tenant table or act as the claimer role', async () => {
    await noTenant(async (m) => {
      expect((await refusal(m, `SELECT * FROM migrations`, []))?.code).toBe('42501');
      expect((await refusal(m, `TRUNCATE runs CASCADE`, []))?.code).toBe('42501');
      expect((await refusal(m, `SET ROLE weft_claimer`, []))?.code).toBe('42501');
      expect((await refusal(m, `ALTER TABLE runs DISABLE ROW LEVEL SECURITY`, []))?.code).toBe('42501');
    });
  });

  it('cannot smuggle a tenant through a malformed app.tenant_id', async () => {
    await noTenant(async (m) => {
      await m.query(`SELECT set_config('app.tenant_id', $1, true)`, [`${A.tenant}' OR true --`]);
      expect((await refusal(m, `SELECT * FROM runs`, []))?.code).toBe('22P02');
    });
  });
});

describe.each(Object.keys(TABLES))('table %s', (table) => {
  const { tenantColumn, touch } = TABLES[table]!;
  // A fresh row of tenant A for this table (its parents are A's fixture rows).
  const extra = (tenant: Ids, n: number) =>
    rowsOf({ ...freshIds(tenant.tenant), run: tenant.run, task: uuidv7(), schedule: table === 'schedules' ? uuidv7() : tenant.schedule }, n).find(
      ([t]) => t === table,
    )![1];
  const newRowOf = (ids: Ids): Row => {
    if (table === 'tenants') return { sql: `INSERT INTO tenants (id, name) VALUES ($1, 'x')`, params: [ids.tenant] };
    if (table === 'workflows') return { sql: `INSERT INTO workflows (tenant_id, id) VALUES ($1, 'another')`, params: [ids.tenant] };
    if (table === 'workflow_versions') {
      return {
        sql: `INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum) VALUES ($1, $2, 2, '{}', '{}', 'c')`,
        params: [ids.tenant, ids === A ? 'wf-1' : 'wf-2'],
      };
    }
    if (table === 'runs') {
      return {
        sql: `INSERT INTO runs (tenant_id, id, workflow_id, version, status) VALUES ($1, $2, $3, 1, 'RUNNING')`,
        params: [ids.tenant, uuidv7(), ids === A ? 'wf-1' : 'wf-2'],
      };
    }
    if (table === 'run_events') return { sql: `INSERT INTO run_events (tenant_id, run_id, seq, type) VALUES ($1, $2, 99, 'X')`, params: [ids.tenant, ids.run] };
    return extra(ids, 99);
  };

  it('with no tenant set: a SELECT returns 0 rows and an INSERT is refused', async () => {
    const owned = await db.owner.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(owned[0].n).toBeGreaterThanOrEqual(2); // both tenants' rows exist
    await noTenant(async (m) => {
      expect(await m.query(`SELECT * FROM ${table}`)).toEqual([]);
      const row = newRowOf(A);
      const err = await refusal(m, row.sql, row.params);
      expect(err?.code).toBe('42501');
      expect(err?.message).toMatch(/row-level security/);
      expect(affected(await m.query(`UPDATE ${table} SET ${touch}`))).toBe(0);
      expect(affected(await m.query(`DELETE FROM ${table}`))).toBe(0);
    });
  });

  it("with tenant A set: B's rows are invisible, UPDATE and DELETE of them touch 0 rows, and A cannot write rows as B", async () => {
    await asTenant(A.tenant, async (m) => {
      const seen: Record<string, string>[] = await m.query(`SELECT ${tenantColumn}::text AS tenant FROM ${table}`);
      expect(seen.length).toBeGreaterThan(0);
      expect(new Set(seen.map((r) => r.tenant))).toEqual(new Set([A.tenant]));
      // Even naming B's tenant explicitly finds nothing.
      expect(await m.query(`SELECT * FROM ${table} WHERE ${tenantColumn} = $1`, [B.tenant])).toEqual([]);
      expect(affected(await m.query(`UPDATE ${table} SET ${touch} WHERE ${tenantColumn} = $1`, [B.tenant]))).toBe(0);
      expect(affected(await m.query(`DELETE FROM ${table} WHERE ${tenantColumn} = $1`, [B.tenant]))).toBe(0);
      // Writing a row that belongs to B, or moving one of A's rows to B, is refused.
      const asB = newRowOf(B);
      expect((await refusal(m, asB.sql, asB.params))?.code).toBe('42501');
      if (table !== 'tenants') {
        const moved = await refusal(m, `UPDATE ${table} SET ${tenantColumn} = $1`, [B.tenant]);
        expect(moved?.code).toMatch(/^(42501|23503)$/); // the policy, or the foreign key to B's parent, whichever checks first
      }
    });
    // B's rows are all still there, unchanged.
    const [{ n }] = await db.owner.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${tenantColumn} = $1`, [B.tenant]);
    expect(n).toBeGreaterThanOrEqual(1);
  });
});

describe('the cross-tenant paths', () => {
  it('claim due timers of every tenant through the SECURITY DEFINER function, returning ids and times only', async () => {
    const now = new Date();
    const claimed = await claimDueTimers(db.ds, now, 10, new Date(now.getTime() + 60_000));
    expect(claimed).toEqual(
      expect.arrayContaining([
        { tenantId: A.tenant, taskId: A.task, runId: A.run, nodeId: 'a', dueAt: expect.any(Date), claimedAt: now },
        { tenantId: B.tenant, taskId: B.task, runId: B.run, nodeId: 'a', dueAt: expect.any(Date), claimedAt: now },
      ]),
    );
    // Due an hour before the claim (the rows were written with wake_at = now() - 1 hour).
    for (const c of claimed) expect(Math.round((c.claimedAt.getTime() - c.dueAt.getTime()) / 60_000)).toBe(60);
    // Claimed means leased: a second replica claiming now gets neither.
    const again = await claimDueTimers(db.ds, now, 10, new Date(now.getTime() + 60_000));
    expect(again.map((c) => c.taskId)).not.toContain(A.task);
  });

  it('resolve an API key without knowing its tenant, and only an exact key', async () => {
    const repo = new TenantRepository(db.ds);
    const t = await repo.createTenant('keys');
    expect(await repo.findApiKey(t.apiKey)).toEqual({ tenantId: t.tenantId, keyId: t.keyId, role: 'admin' });
    // Same display prefix, different secret: refused.
    const forged = t.apiKey.slice(0, 13) + (t.apiKey[13] === 'A' ? 'B' : 'A') + t.apiKey.slice(14);
    expect(await repo.findApiKey(forged)).toBeNull();
  });

  it('keep the claim functions out of reach of anyone but the runtime role', async () => {
    const acl: { proname: string; owner: string; callers: string[] }[] = await db.owner.query(
      `SELECT p.proname::text, pg_get_userbyid(p.proowner)::text AS owner,
              array(SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee)::text END
                      FROM aclexplode(p.proacl) a WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner ORDER BY 1) AS callers
         FROM pg_proc p WHERE p.proname LIKE 'weft\\_%' AND p.prosecdef ORDER BY 1`,
    );
    expect(acl.map((a) => a.proname)).toEqual([
      'weft_api_key_candidates',
      'weft_backlog_queues',
      'weft_claim_due_deadlines',
      'weft_claim_due_schedules',
      'weft_claim_due_timers',
      'weft_claim_lost_tasks',
      'weft_claim_outbox',
      'weft_claim_run_batches',
      'weft_claim_start_deadlines',
      'weft_claim_webhook_deliveries',
      'weft_dispatch',
      'weft_may_take',
      'weft_outbox_stats',
      'weft_prune_concurrency_groups',
      'weft_prune_rate_starts',
      'weft_queue_access',
      'weft_queue_reservations',
      'weft_queue_stats',
      'weft_retention_tenants',
      'weft_stalled_groups',
      'weft_tenants',
    ]);
    for (const a of acl) expect({ fn: a.proname, owner: a.owner, callers: a.callers }).toEqual({ fn: a.proname, owner: 'weft_claimer', callers: ['weft_app'] });
  });

  it('tell a tenant its access to a queue without naming the tenants it is reserved for', async () => {
    // Fixture: reserved-1 is A's, reserved-2 is B's; http is reserved for nobody.
    const access = (m: EntityManager) => m.query(`SELECT q, weft_queue_access(q) AS access FROM unnest(ARRAY['reserved-1', 'reserved-2', 'http']) q`);
    expect(await asTenant(A.tenant, access)).toEqual([
      { q: 'reserved-1', access: 'reserved' },
      { q: 'reserved-2', access: 'denied' },
      { q: 'http', access: 'shared' },
    ]);
    expect(await asTenant(B.tenant, access)).toEqual([
      { q: 'reserved-1', access: 'denied' },
      { q: 'reserved-2', access: 'reserved' },
      { q: 'http', access: 'shared' },
    ]);
    // With no tenant set, a reserved queue is nobody's to use.
    expect(await noTenant(access)).toEqual([
      { q: 'reserved-1', access: 'denied' },
      { q: 'reserved-2', access: 'denied' },
      { q: 'http', access: 'shared' },
    ]);
    // Each tenant reads its own reservations only; the operator's function lists them all.
    expect(await asTenant(B.tenant, (m) => m.query(`SELECT queue FROM queue_reservations`))).toEqual([{ queue: 'reserved-2' }]);
    const all: { queue: string; tenant_id: string }[] = await db.ds.query(
      `SELECT queue, tenant_id FROM weft_queue_reservations() WHERE queue LIKE 'reserved-_'`,
    );
    expect(all).toEqual([
      { queue: 'reserved-1', tenant_id: A.tenant },
      { queue: 'reserved-2', tenant_id: B.tenant },
    ]);
  });

  it('cannot be hijacked by a temporary table shadowing a real one', async () => {
    // A SECURITY DEFINER function resolving "tasks" through the session's temporary schema
    // would read (and fire triggers on) the caller's own table as the claimer role.
    const fake = uuidv7();
    const claimed = await rolledBack(db.ds, async (m) => {
      await m.query(`CREATE TEMP TABLE tasks (LIKE public.tasks INCLUDING DEFAULTS) ON COMMIT DROP`);
      await m.query(
        `INSERT INTO pg_temp.tasks (tenant_id, id, run_id, node_id, node_type, status, wake_at) VALUES ($1, $2, $3, 'x', 'WAIT', 'WAITING', now() - interval '1 day')`,
        [A.tenant, fake, A.run],
      );
      return m.query(`SELECT task_id FROM weft_claim_due_timers(now(), 100, now() + interval '1 minute')`);
    });
    expect(claimed.map((r: { task_id: string }) => r.task_id)).not.toContain(fake);
  });

  it('a role that is not the runtime role cannot call them', async () => {
    await asNewRole('probe', [], async (probe) => {
      await expect(probe.query(`SELECT * FROM weft_claim_due_timers(now(), 10, now())`)).rejects.toMatchObject({ code: '42501' });
    });
  });
});

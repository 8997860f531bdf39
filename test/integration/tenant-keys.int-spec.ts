import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { readCatalogKeys, tenantKeyBreaches } from '../support/tenant-key-rule.js';

/**
 * The schema the migrations build can be distributed by tenant: every tenant table (a table with
 * a `tenant_id` column) has its keys and references tenant first (test/support/tenant-key-rule.ts),
 * and every other table is one of the global tables listed here. A new table fails the first test
 * until it is listed as one or the other, and a key or reference that a shard could not check on
 * its own tenant's rows fails the second.
 */

/** Tables owned by one tenant: every row has `tenant_id`. */
const TENANT_TABLES = [
  'api_keys',
  'concurrency_groups',
  'dispatch_shares',
  'flow_rate_starts',
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
  'webhook_deliveries',
  'webhooks',
  'workflow_versions',
  'workflows',
];

/** Tables without `tenant_id`, and why. */
const GLOBAL_TABLES: Record<string, string> = {
  dispatch_queues: "each queue's virtual clock of fair dispatch, shared by the tenants on that queue",
  migrations: "TypeORM's record of the migrations applied to this database",
  tenants: 'the tenants themselves: `id` is the tenant, which other tables reference as their tenant_id',
  workers: 'the worker processes of the installation, which serve every tenant',
};

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('the migrated schema', () => {
  it('holds the listed tenant tables and the listed global tables, nothing else', async () => {
    const { tables } = await readCatalogKeys(db.owner);
    expect(tables.filter((t) => t.hasTenantId).map((t) => t.table)).toEqual(TENANT_TABLES);
    expect(tables.filter((t) => !t.hasTenantId).map((t) => t.table)).toEqual(Object.keys(GLOBAL_TABLES).sort());
  });

  it('starts every key of a tenant table with tenant_id, and every reference maps tenant_id first', async () => {
    const catalog = await readCatalogKeys(db.owner);
    expect(tenantKeyBreaches(catalog)).toEqual([]);
    // What the rule looked at, so that an empty answer cannot come from reading nothing.
    expect(catalog.keys.filter((k) => k.kind === 'primary key').map((k) => `${k.table}(${k.columns.join(', ')})`)).toEqual([
      'api_keys(tenant_id, id)',
      'concurrency_groups(tenant_id, group_key)',
      'dispatch_queues(queue)',
      'dispatch_shares(tenant_id, queue)',
      'migrations(id)',
      'outbox(tenant_id, id)',
      'queue_reservations(tenant_id, queue)',
      'run_batch_items(tenant_id, batch_id, seq)',
      'run_batches(tenant_id, id)',
      'run_events(tenant_id, run_id, seq)',
      'run_labels(tenant_id, key, value, run_id)',
      'runs(tenant_id, id)',
      'schedule_backfills(tenant_id, id)',
      'schedules(tenant_id, id)',
      'signals(tenant_id, id)',
      'task_attempt_logs(tenant_id, task_id, attempt)',
      'tasks(tenant_id, id)',
      'tenants(id)',
      'webhook_deliveries(tenant_id, id)',
      'webhooks(tenant_id, id)',
      'workers(id)',
      'workflow_versions(tenant_id, workflow_id, version)',
      'workflows(tenant_id, id)',
    ]);
    expect(catalog.keys.filter((k) => k.kind !== 'primary key').map((k) => `${k.table}.${k.name}(${k.columns.join(', ')})`)).toEqual([
      'api_keys.api_keys_key_hash(tenant_id, key_hash)',
      'outbox.outbox_task(tenant_id, task_id)',
      'run_batches.run_batches_idempotency(tenant_id, idempotency_key)',
      'runs.runs_idempotency_key(tenant_id, idempotency_key)',
      'tasks.tasks_run_node(tenant_id, run_id, node_id)',
      'tasks.tasks_run_node_iteration(tenant_id, run_id, node_id, iteration)',
      // The tenants' own registry: a name is unique across tenants (an index on lower(name), an expression).
      'tenants.tenants_name_unique()',
      'webhook_deliveries.webhook_deliveries_once(tenant_id, webhook_id, run_id, run_seq)',
    ]);
    expect(catalog.foreignKeys.map((f) => `${f.table}(${f.columns.join(', ')}) -> ${f.references}(${f.referencedColumns.join(', ')})`)).toEqual([
      'api_keys(tenant_id) -> tenants(id)',
      'concurrency_groups(tenant_id) -> tenants(id)',
      'dispatch_shares(tenant_id) -> tenants(id)',
      'flow_rate_starts(tenant_id) -> tenants(id)',
      'queue_reservations(tenant_id) -> tenants(id)',
      'run_batch_items(tenant_id, batch_id) -> run_batches(tenant_id, id)',
      'run_batches(tenant_id) -> tenants(id)',
      'run_events(tenant_id, run_id) -> runs(tenant_id, id)',
      'run_labels(tenant_id, run_id) -> runs(tenant_id, id)',
      'runs(tenant_id, parent_run_id) -> runs(tenant_id, id)',
      'runs(tenant_id) -> tenants(id)',
      'runs(tenant_id, workflow_id, version) -> workflow_versions(tenant_id, workflow_id, version)',
      'schedule_backfills(tenant_id, schedule_id) -> schedules(tenant_id, id)',
      'schedules(tenant_id) -> tenants(id)',
      'schedules(tenant_id, workflow_id) -> workflows(tenant_id, id)',
      'schedules(tenant_id, workflow_id, version) -> workflow_versions(tenant_id, workflow_id, version)',
      'signals(tenant_id, run_id) -> runs(tenant_id, id)',
      'task_attempt_logs(tenant_id, task_id) -> tasks(tenant_id, id)',
      'tasks(tenant_id, run_id) -> runs(tenant_id, id)',
      'webhook_deliveries(tenant_id, webhook_id) -> webhooks(tenant_id, id)',
      'webhooks(tenant_id) -> tenants(id)',
      'workflow_versions(tenant_id, workflow_id) -> workflows(tenant_id, id)',
      'workflows(tenant_id, id, default_version) -> workflow_versions(tenant_id, workflow_id, version)',
      'workflows(tenant_id) -> tenants(id)',
    ]);
  });
});

describe('the tenant-first rule', () => {
  it('names each key and reference that a shard of one tenant could not check', async () => {
    await db.owner.query(`
      CREATE SCHEMA rule_sample;
      CREATE TABLE rule_sample.tenants (id uuid PRIMARY KEY);
      CREATE TABLE rule_sample.slots (id int PRIMARY KEY);
      CREATE TABLE rule_sample.runs (
        tenant_id uuid NOT NULL REFERENCES rule_sample.tenants (id),
        id uuid NOT NULL,
        code text,
        PRIMARY KEY (tenant_id, id)
      );
      CREATE UNIQUE INDEX runs_code ON rule_sample.runs (code);
      CREATE UNIQUE INDEX runs_tenant_lower_code ON rule_sample.runs (tenant_id, lower(code));
      CREATE UNIQUE INDEX runs_lower_first ON rule_sample.runs (lower(code), tenant_id);
      CREATE UNIQUE INDEX runs_id_tenant ON rule_sample.runs (id, tenant_id);
      CREATE TABLE rule_sample.tasks (
        id bigserial PRIMARY KEY,
        tenant_id uuid NOT NULL,
        run_id uuid NOT NULL,
        slot int,
        CONSTRAINT tasks_run_once UNIQUE (run_id, tenant_id),
        CONSTRAINT tasks_run FOREIGN KEY (tenant_id, run_id) REFERENCES rule_sample.runs (tenant_id, id),
        CONSTRAINT tasks_run_swapped FOREIGN KEY (run_id, tenant_id) REFERENCES rule_sample.runs (id, tenant_id),
        CONSTRAINT tasks_slot FOREIGN KEY (slot) REFERENCES rule_sample.slots (id)
      );
      CREATE TABLE rule_sample.audit (
        id int PRIMARY KEY,
        run_tenant uuid,
        run_id uuid,
        CONSTRAINT audit_run FOREIGN KEY (run_tenant, run_id) REFERENCES rule_sample.runs (tenant_id, id)
      );
    `);
    try {
      expect(tenantKeyBreaches(await readCatalogKeys(db.owner, 'rule_sample'))).toEqual([
        'audit: foreign key audit_run (run_tenant, run_id) -> runs (tenant_id, id) points into a tenant table from a table without tenant_id',
        'runs: unique index runs_code (code) does not start with tenant_id',
        'runs: unique index runs_id_tenant (id, tenant_id) does not start with tenant_id',
        'runs: unique index runs_lower_first (<expression>, tenant_id) does not start with tenant_id',
        'tasks: foreign key tasks_run_swapped (run_id, tenant_id) -> runs (id, tenant_id) does not map tenant_id onto runs.tenant_id first',
        'tasks: foreign key tasks_slot (slot) -> slots (id) references a table that is neither a tenant table nor tenants',
        'tasks: primary key tasks_pkey (id) does not start with tenant_id',
        'tasks: unique constraint tasks_run_once (run_id, tenant_id) does not start with tenant_id',
      ]);
    } finally {
      await db.owner.query('DROP SCHEMA rule_sample CASCADE');
    }
  });
});

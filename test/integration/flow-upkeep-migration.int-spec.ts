import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { MIGRATIONS } from '@weft/persistence';
import { migrationDatabase } from '../support/migration-database.js';

/**
 * The migration that gives workflow-scoped run groups the key `workflow:<id>/<key>`
 * (`1765958400000-flow-upkeep.ts`) on a database that holds groups in the earlier form
 * `workflow:<id>:<key>`, where workflow `W` with key `b:c` and workflow `W:b` with key `c` met in
 * one group: migrated to the migration before it, filled by the owner, migrated up, then down.
 */

const MIGRATION = 'FlowUpkeep1765958400000';
const T = '00000000-0000-4000-8000-000000000001';
const database = migrationDatabase('groups');
const { migrator } = database;
const at = MIGRATIONS.findIndex((m) => m.name === MIGRATION);

let owner: DataSource;
const groups = async () => (await owner.query(`SELECT group_key, workflow_id, key, run_limit FROM concurrency_groups ORDER BY group_key`)) as unknown[];
const runGroups = async () =>
  ((await owner.query(`SELECT id, concurrency_group FROM runs ORDER BY id`)) as { id: string; concurrency_group: string }[]).map((r) => r.concurrency_group);

beforeAll(async () => {
  expect(at).toBeGreaterThan(0);
  await database.create();
  owner = migrator(at);
  await owner.initialize();
  await owner.runMigrations({ transaction: 'each' });
  await owner.query(`INSERT INTO tenants (id, name) VALUES ($1, 't')`, [T]);
  for (const wf of ['W', 'W:b']) {
    await owner.query(`INSERT INTO workflows (tenant_id, id, latest_version) VALUES ($1, $2, 1)`, [T, wf]);
    await owner.query(`INSERT INTO workflow_versions (tenant_id, workflow_id, version, definition, source, checksum) VALUES ($1, $2, 1, '{}', '{}', 'c')`, [
      T,
      wf,
    ]);
  }
  // The shared row names the workflow that was admitted first; W also has an idle group.
  await owner.query(
    `INSERT INTO concurrency_groups (tenant_id, group_key, scope, workflow_id, key, run_limit, updated_at)
     VALUES ($1, 'workflow:W:b:c', 'workflow', 'W', 'b:c', 1, now()), ($1, 'workflow:W:old', 'workflow', 'W', 'old', 3, now()),
            ($1, 'tenant:shared', 'tenant', NULL, 'shared', 2, now())`,
    [T],
  );
  await owner.query(
    `INSERT INTO runs (tenant_id, id, workflow_id, version, status, concurrency_group, concurrency_key) VALUES
       ($1, '00000000-0000-4000-9000-000000000001', 'W', 1, 'RUNNING', 'workflow:W:b:c', 'b:c'),
       ($1, '00000000-0000-4000-9000-000000000002', 'W:b', 1, 'QUEUED', 'workflow:W:b:c', 'c'),
       ($1, '00000000-0000-4000-9000-000000000003', 'W', 1, 'RUNNING', 'tenant:shared', 'shared')`,
    [T],
  );
  await owner.destroy();
});

afterAll(async () => {
  if (owner?.isInitialized) await owner.destroy();
  await database.drop();
});

describe('workflow-scoped run groups', () => {
  it('move to keys two workflows cannot share, each run with its own group, and back on down', async () => {
    owner = migrator(at + 1);
    await owner.initialize();
    await owner.runMigrations({ transaction: 'each' });
    expect(await runGroups()).toEqual(['workflow:W/b:c', 'workflow:W:b/c', 'tenant:shared']);
    expect(await groups()).toEqual([
      { group_key: 'tenant:shared', workflow_id: null, key: 'shared', run_limit: 2 },
      { group_key: 'workflow:W/b:c', workflow_id: 'W', key: 'b:c', run_limit: 1 },
      { group_key: 'workflow:W/old', workflow_id: 'W', key: 'old', run_limit: 3 },
      { group_key: 'workflow:W:b/c', workflow_id: 'W:b', key: 'c', run_limit: 1 },
    ]);

    await owner.undoLastMigration({ transaction: 'each' });
    expect(await runGroups()).toEqual(['workflow:W:b:c', 'workflow:W:b:c', 'tenant:shared']);
    expect(((await groups()) as { group_key: string }[]).map((g) => g.group_key)).toEqual(['tenant:shared', 'workflow:W:b:c', 'workflow:W:old']);
  });
});

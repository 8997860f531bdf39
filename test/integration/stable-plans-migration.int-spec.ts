import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { MIGRATIONS } from '@weft/persistence';
import { migrationDatabase } from '../support/migration-database.js';

/**
 * The migration that keeps the dispatch functions on index plans (`1766044800000-stable-plans.ts`):
 * a session asks `weft_may_take` while the backlog holds two analyzed rows, often enough for
 * PL/pgSQL to settle on the plans it keeps; then the backlog grows to thousands of rows, all
 * admitted already, and the same session asks again. The transaction's own scan counts tell
 * whether it read the outbox row by row.
 */

const MIGRATION = 'StablePlans1766044800000';
const ME = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
/** Past PL/pgSQL's first five custom plans: the plan it keeps for the session. */
const CALLS = 8;
const database = migrationDatabase('plans');
const at = MIGRATIONS.findIndex((m) => m.name === MIGRATION);

let owner: DataSource;

/** Sequential scans of `outbox` made by {@link CALLS} calls of weft_may_take in one transaction of `session`. */
async function outboxScans(session: pg.Client): Promise<number> {
  // The view also counts what the session did before and has not reported yet: take the difference.
  const scans = async () =>
    (await session.query<{ n: number }>(`SELECT seq_scan::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'outbox'`)).rows[0]?.n ?? 0;
  await session.query('BEGIN');
  try {
    await session.query(`SELECT set_config('app.tenant_id', $1, true)`, [ME]);
    const before = await scans();
    for (let i = 0; i < CALLS; i++) await session.query(`SELECT weft_may_take('http') AS ok`);
    return (await scans()) - before;
  } finally {
    await session.query('ROLLBACK');
  }
}

/** Admitted backlog rows of another tenant (no runs or tasks behind them: only the outbox matters here). */
async function admitted(count: number): Promise<void> {
  await owner.transaction(async (m) => {
    await m.query(`SET LOCAL session_replication_role = replica`);
    await m.query(
      `INSERT INTO outbox (tenant_id, run_id, task_id, attempt, queue, not_before, enqueued_at)
       SELECT $1, gen_random_uuid(), gen_random_uuid(), 0, 'http', now(), now() FROM generate_series(1, $2::int)`,
      [OTHER, count],
    );
  });
}

/** The scans a session makes once the backlog grew under the plans it made while the backlog was small. */
async function scansAfterGrowth(): Promise<number> {
  await owner.query(`TRUNCATE outbox`);
  await admitted(2);
  await owner.query(`ANALYZE outbox`);
  const session = new pg.Client({ connectionString: database.ownerUrl });
  await session.connect();
  try {
    await outboxScans(session);
    await admitted(20_000);
    return await outboxScans(session);
  } finally {
    await session.end();
  }
}

beforeAll(async () => {
  expect(at).toBeGreaterThan(0);
  await database.create();
  owner = database.migrator(at + 1);
  await owner.initialize();
  await owner.runMigrations({ transaction: 'each' });
}, 60_000);

afterAll(async () => {
  if (owner?.isInitialized) await owner.destroy();
  await database.drop();
});

describe('the dispatch functions planned while the backlog was small', () => {
  it('probe the grown backlog by index, and read it row by row once the migration is undone', async () => {
    expect(await scansAfterGrowth()).toBe(0);
    await owner.undoLastMigration({ transaction: 'each' });
    expect(await scansAfterGrowth()).toBeGreaterThanOrEqual(CALLS);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository, type RunFilter } from '@weft/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { chain } from '../support/fenced-steps.js';

/**
 * The finished_at window of the run search, paged as the runtime role: a page starts at the
 * window's latest created_at, and paging through every page gives exactly the runs the window
 * holds, newest first, as many as countRuns counts; also runs whose finish was recorded by a
 * clock behind the one that created them (finished_at before created_at).
 */

let db: TestDatabase;
let tenantId: string;
let repo: RunRepository;
const base = new Date('2026-06-01T00:00:00Z');
const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);

beforeAll(async () => {
  db = await createTestDatabase();
  const h = await coordinatorHarness(db.ds);
  const { workflowId } = await h.publish(chain(1));
  tenantId = h.tenantId;
  repo = new RunRepository(db.ds);
  // 600 runs a minute apart; 4 in 5 ended 0–6 minutes after they were created, every 11th a
  // second before it; the others are still running.
  await db.owner.query(
    `INSERT INTO runs (tenant_id, id, workflow_id, version, status, event_seq, created_at, finished_at)
     SELECT $1, gen_random_uuid(), $2, 1, CASE WHEN g % 5 = 0 THEN 'RUNNING' ELSE 'SUCCEEDED' END, 1, c,
            CASE WHEN g % 5 = 0 THEN NULL WHEN g % 11 = 0 THEN c - interval '1 second' ELSE c + (g % 7) * interval '1 minute' END
       FROM generate_series(1, 600) g, LATERAL (SELECT $3::timestamptz + g * interval '1 minute' AS c) t`,
    [tenantId, workflowId, base],
  );
});
afterAll(async () => {
  await db?.drop();
});

/** Every run `filter` matches, page by page of `first`. */
async function paged(filter: RunFilter, first: number): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await repo.listRuns(tenantId, filter, first, after);
    ids.push(...page.edges.map((e) => e.node.id));
    if (!page.pageInfo.hasNextPage) return ids;
    after = page.pageInfo.endCursor;
  }
}

/** The same runs read as the owner, newest first. */
async function expected(filter: RunFilter): Promise<string[]> {
  const rows: { id: string }[] = await db.owner.query(
    `SELECT id FROM runs WHERE tenant_id = $1 AND finished_at < $2 AND ($3::timestamptz IS NULL OR finished_at >= $3)
      ORDER BY created_at DESC, id DESC`,
    [tenantId, filter.finishedBefore, filter.finishedAfter ?? null],
  );
  return rows.map((r) => r.id);
}

describe('a finished_at window', () => {
  it.each([
    ['a window of an hour', { finishedAfter: at(100), finishedBefore: at(160) }],
    ['a window of a minute', { finishedAfter: at(330), finishedBefore: at(331) }],
    ['only an end', { finishedBefore: at(250) }],
    ['a window nothing finished in', { finishedAfter: at(-100), finishedBefore: at(-50) }],
  ] as [string, RunFilter][])('pages through exactly its runs, newest first: %s', async (_, filter) => {
    const want = await expected(filter);
    expect(await paged(filter, 7)).toEqual(want);
    expect(await paged(filter, 200)).toEqual(want);
    expect(await repo.countRuns(tenantId, filter)).toBe(want.length);
  });

  it('holds the runs whose finished_at is before their created_at', async () => {
    const filter = { finishedAfter: at(43), finishedBefore: at(44) };
    // Run 44 (a multiple of 11) was created at minute 44 and finished a second before.
    const want = await expected(filter);
    expect(want.length).toBeGreaterThan(0);
    expect(await paged(filter, 1)).toEqual(want);
  });
});

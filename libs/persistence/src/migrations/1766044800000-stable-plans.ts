import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The PL/pgSQL functions on the dispatch path: their statements are planned once per session and kept. */
const CACHED_PLANS = ['weft_may_take(text)'];

/**
 * Plans that stay index plans. A PL/pgSQL function's statements are planned once per session and
 * the plan is kept; planned while `outbox` held a handful of rows (an installation's first minute,
 * a test, a benchmark that analyzes early), each of its probes of the backlog became a sequential
 * scan, and stayed one while the table grew: `weft_may_take`, on every step a worker takes
 * eagerly, read the whole outbox. Every statement of these functions is an index probe by design,
 * so they run with `enable_seqscan = off`: the planner then picks the index whatever the
 * statistics said when the plan was made (a table with no usable index is still scanned).
 */
export class StablePlans1766044800000 implements MigrationInterface {
  name = 'StablePlans1766044800000';

  async up(q: QueryRunner): Promise<void> {
    for (const fn of CACHED_PLANS) await q.query(`ALTER FUNCTION ${fn} SET enable_seqscan = off`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const fn of CACHED_PLANS) await q.query(`ALTER FUNCTION ${fn} RESET enable_seqscan`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The PL/pgSQL functions on a step's path whose statements are all index probes. Not `weft_dispatch`:
 * some of its statements join rows no index serves, and with sequential scans priced out of reach
 * the planner picked plans that read far more (measured: twice the database's CPU per step).
 */
const CACHED_PLANS = ['weft_may_take(text)'];

/**
 * Plans that stay index plans. A PL/pgSQL function's statements are planned once per session and
 * the plan is kept; planned while `outbox` held a handful of rows (an installation's first minute,
 * a test, a benchmark that analyzes early), each of its probes of the backlog became a sequential
 * scan, and stayed one while the table grew: `weft_may_take`, on every step a worker takes
 * eagerly, read the whole outbox twice. Every statement of `weft_may_take` is an index probe by
 * design, so it runs with `enable_seqscan = off`: the planner then picks the index whatever the
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

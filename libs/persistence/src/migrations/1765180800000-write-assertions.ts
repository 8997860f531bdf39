import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `weft_expect_rows(matched, expected, label)`: returns `matched` when it equals `expected`, else
 * raises SQLSTATE `WF001` with the message `<label>, matched <matched>`.
 *
 * An event's last write is sent in the same message as its COMMIT, so its row counts cannot be
 * checked in JavaScript before the commit; the statement checks them itself with this function
 * and the error aborts the transaction, so the COMMIT after it never runs.
 */
export class WriteAssertions1765180800000 implements MigrationInterface {
  name = 'WriteAssertions1765180800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION weft_expect_rows(matched bigint, expected int, label text) RETURNS bigint
      LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $$
      BEGIN
        IF matched IS DISTINCT FROM expected THEN
          RAISE EXCEPTION USING ERRCODE = 'WF001', MESSAGE = label || ', matched ' || coalesce(matched::text, 'none');
        END IF;
        RETURN matched;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION weft_expect_rows(bigint, int, text)`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The claim function this migration redefines, by signature. */
const CLAIM_OUTBOX = 'weft_claim_outbox(timestamptz, timestamptz, int, timestamptz)';

/** `weft_claim_outbox`: its SKIP LOCKED pick selects `select` of each row, its UPDATE finds the row by `match`. */
const claimOutbox = (select: string, match: string) => `
  CREATE OR REPLACE FUNCTION weft_claim_outbox(p_created_before timestamptz, p_claimed_before timestamptz, p_limit int, p_now timestamptz)
    RETURNS TABLE (outbox_id bigint, tenant_id uuid, task_id uuid, attempt int)
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
    AS $$
      WITH due AS (
        SELECT ${select} FROM public.outbox o
         WHERE o.enqueued_at IS NULL AND o.created_at <= p_created_before
           AND (o.claimed_at IS NULL OR o.claimed_at <= p_claimed_before)
         ORDER BY o.created_at, o.id
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
      )
      UPDATE public.outbox o SET claimed_at = COALESCE(p_now, now())
        FROM due WHERE ${match}
      RETURNING o.id, o.tenant_id, o.task_id, o.attempt
    $$;
  ALTER FUNCTION ${CLAIM_OUTBOX} OWNER TO weft_claimer;
  REVOKE ALL ON FUNCTION ${CLAIM_OUTBOX} FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION ${CLAIM_OUTBOX} TO weft_app;`;

/**
 * Every key of a tenant table starts with `tenant_id`, so that the schema can be distributed by
 * tenant: a shard holding some tenants' rows can check each key and reference on its own rows
 * (test/integration/tenant-keys.int-spec.ts holds the rule over the whole schema). Two keys did
 * not:
 *
 * - `outbox`'s primary key was its serial `id` alone; it becomes `(tenant_id, id)`. The id still
 *   comes from `outbox_id_seq` and stays unique by itself. Every statement on the outbox already
 *   names the tenant with the id, except the relay's claim, which found the rows it claimed by id
 *   alone: `weft_claim_outbox` now carries `tenant_id` from its SKIP LOCKED pick to its UPDATE, so
 *   that UPDATE is an index lookup on the new key. Its signature, result, owner and grants do not
 *   change.
 * - `api_keys_key_hash` was unique on `key_hash` across tenants; it becomes unique on
 *   `(tenant_id, key_hash)`. No statement looks keys up by hash (authentication finds candidates by
 *   display prefix, `api_keys_key_prefix`, and compares the hash in constant time); the index
 *   only guarded against a duplicate key, and a key is 32 random bytes, so a duplicate within a
 *   tenant stays refused and one across tenants is as likely as guessing a key.
 *
 * Rows are kept as they are. Both indexes are built inside the migration's transaction, holding
 * each table's lock meanwhile: on a large outbox (one row per dispatched task) that takes the
 * time of one index build over it.
 */
export class TenantFirstKeys1765267200000 implements MigrationInterface {
  name = 'TenantFirstKeys1765267200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD CONSTRAINT outbox_pkey PRIMARY KEY (tenant_id, id);
      DROP INDEX api_keys_key_hash;
      CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (tenant_id, key_hash);
    `);
    await q.query(claimOutbox('o.tenant_id, o.id', 'o.tenant_id = due.tenant_id AND o.id = due.id'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(claimOutbox('o.id', 'o.id = due.id'));
    await q.query(`
      DROP INDEX api_keys_key_hash;
      CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (key_hash);
      ALTER TABLE outbox DROP CONSTRAINT outbox_pkey, ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);
    `);
  }
}

import type { DataSource } from 'typeorm';

/** The runtime connection would not be held by row-level security, or the schema is missing. */
export class RuntimeRoleError extends Error {
  override name = 'RuntimeRoleError';
}

/**
 * Checks that `ds` (initialized) connects as a role row-level security applies to, on a migrated
 * database: neither the role nor any role it is a member of is a superuser,
 * has BYPASSRLS or owns a table of the schema; the role is `weft_app` or inherits from it; and the
 * tables exist, up to this version's latest migrations (their functions `weft_queue_stats` and
 * `weft_queue_access`, the column `runs.traceparent`). Throws {@link RuntimeRoleError} with one line saying what is wrong and
 * how to fix it.
 */
export async function checkRuntimeRole(ds: DataSource): Promise<void> {
  // Membership counts: a role that may SET ROLE to a superuser, BYPASSRLS or owning role is as
  // good as that role.
  const [row] = (await ds.query(
    `SELECT current_user AS rolname, current_database() AS database,
            (SELECT string_agg(r.rolname, ', ') FROM pg_roles r
              WHERE r.rolsuper AND pg_has_role(current_user, r.oid, 'MEMBER')) AS superusers,
            (SELECT string_agg(r.rolname, ', ') FROM pg_roles r
              WHERE r.rolbypassrls AND pg_has_role(current_user, r.oid, 'MEMBER')) AS bypassers,
            (SELECT count(*)::int FROM pg_class c
              WHERE pg_has_role(current_user, c.relowner, 'MEMBER')
                AND c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')) AS owned,
            to_regclass('public.runs') IS NOT NULL AS migrated,
            to_regprocedure('public.weft_claim_due_timers(timestamptz, integer, timestamptz)') IS NOT NULL AS secured,
            to_regprocedure('public.weft_queue_stats(timestamptz)') IS NOT NULL
              AND to_regprocedure('public.weft_queue_access(text)') IS NOT NULL
              AND EXISTS (SELECT 1 FROM pg_attribute
                           WHERE attrelid = to_regclass('public.runs') AND attname = 'traceparent' AND NOT attisdropped) AS up_to_date,
            EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'weft_app' AND pg_has_role(current_user, r.oid, 'USAGE')) AS runtime`,
  )) as {
    rolname: string;
    database: string;
    superusers: string | null;
    bypassers: string | null;
    owned: number;
    migrated: boolean;
    secured: boolean;
    up_to_date: boolean;
    runtime: boolean;
  }[];
  if (!row) throw new RuntimeRoleError('cannot read the current role from pg_roles');
  const fix = 'connect DATABASE_URL as the runtime role weft_app (postgres://weft_app@host:port/db); migrations run as DATABASE_OWNER_URL';
  const as = (what: string) => `DATABASE_URL connects as ${row.rolname}, ${what}, which bypasses row-level security: ${fix}`;
  if (row.superusers) throw new RuntimeRoleError(as(`a superuser or a member of one (${row.superusers})`));
  if (row.bypassers) throw new RuntimeRoleError(as(`a role with BYPASSRLS or a member of one (${row.bypassers})`));
  if (row.owned > 0) throw new RuntimeRoleError(as(`the owner (or a member of the owner) of ${row.owned} table(s) of the schema`));
  if (!row.migrated || !row.secured) {
    throw new RuntimeRoleError(
      `database "${row.database}" is not migrated: check the name in DATABASE_URL, or run \`weft migrate\` (or start with \`weft dev\`)`,
    );
  }
  if (!row.up_to_date) {
    throw new RuntimeRoleError(`database "${row.database}" lacks the latest migrations of this version of Weft: run \`weft migrate\` before starting it`);
  }
  if (!row.runtime) {
    throw new RuntimeRoleError(
      `DATABASE_URL connects as ${row.rolname}, which is neither weft_app nor a member of it, so it may not use Weft's tables: connect as weft_app, or run \`GRANT weft_app TO ${row.rolname}\` as the owner`,
    );
  }
}

import type { DataSource } from 'typeorm';

/** The runtime connection would not be held by row-level security, or the schema is missing. */
export class RuntimeRoleError extends Error {
  override name = 'RuntimeRoleError';
}

/**
 * Checks that `ds` (initialized) connects as a role row-level security applies to, on a migrated
 * database (DESIGN §5, issue 3): the role is not a superuser, has no BYPASSRLS and owns no
 * table of the schema, and the tables exist. Throws {@link RuntimeRoleError} with one line
 * saying what is wrong and how to fix it.
 */
export async function checkRuntimeRole(ds: DataSource): Promise<void> {
  const [row] = (await ds.query(
    `SELECT r.rolname, r.rolsuper, r.rolbypassrls,
            (SELECT count(*)::int FROM pg_class c
              WHERE c.relowner = r.oid AND c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')) AS owned,
            to_regclass('public.runs') IS NOT NULL AS migrated,
            to_regprocedure('public.weft_claim_due_timers(timestamptz, integer, timestamptz)') IS NOT NULL AS secured
       FROM pg_roles r WHERE r.rolname = current_user`,
  )) as { rolname: string; rolsuper: boolean; rolbypassrls: boolean; owned: number; migrated: boolean; secured: boolean }[];
  if (!row) throw new RuntimeRoleError('cannot read the current role from pg_roles');
  const fix = 'connect DATABASE_URL as the runtime role weft_app (postgres://weft_app@host:port/db); migrations run as DATABASE_OWNER_URL';
  if (row.rolsuper) throw new RuntimeRoleError(`DATABASE_URL connects as ${row.rolname}, a superuser, which bypasses row-level security: ${fix}`);
  if (row.rolbypassrls) throw new RuntimeRoleError(`DATABASE_URL connects as ${row.rolname}, which has BYPASSRLS: ${fix}`);
  if (row.owned > 0) {
    throw new RuntimeRoleError(`DATABASE_URL connects as ${row.rolname}, which owns ${row.owned} table(s) of the schema: ${fix}`);
  }
  if (!row.migrated || !row.secured) throw new RuntimeRoleError('the database is not migrated: run `weft migrate` (or start with `weft dev`)');
}

import type { DataSource } from 'typeorm';

/**
 * The rule that lets the schema be distributed by tenant (for example by Citus on `tenant_id`):
 * in every table that has a `tenant_id` column, every primary key, unique constraint or unique
 * index and exclusion constraint starts with `tenant_id`, and every foreign key maps its leading
 * `tenant_id` onto the leading tenant column of the key it references — `tenant_id` of another
 * tenant table, or `id` of `tenants`, whose id is the tenant. A shard then checks every key and
 * every reference of a row with the rows of its own tenant only.
 *
 * Read from the catalog (`pg_index`, `pg_constraint`, `pg_attribute`) of one schema, so the rule
 * judges the schema the migrations really built, not what the entities declare.
 */

/** A table of the schema and whether it has a `tenant_id` column. */
export interface CatalogTable {
  table: string;
  hasTenantId: boolean;
}

/** A unique index (a primary key and a unique constraint each have one) or an exclusion constraint. */
export interface CatalogKey {
  table: string;
  name: string;
  kind: 'primary key' | 'unique constraint' | 'unique index' | 'exclusion constraint';
  /** Key columns in order; null for an expression. */
  columns: (string | null)[];
}

/** A foreign key: its columns, and the table and columns it references, in matching order. */
export interface CatalogForeignKey {
  table: string;
  name: string;
  columns: string[];
  references: string;
  referencedColumns: string[];
}

/** What the rule is checked on. */
export interface CatalogKeys {
  tables: CatalogTable[];
  keys: CatalogKey[];
  foreignKeys: CatalogForeignKey[];
}

/** The table whose `id` is the tenant itself, so that a reference to it is a reference by tenant. */
export const TENANT_ROOT = { table: 'tenants', column: 'id' } as const;

/** Reads the tables, keys and foreign keys of `schema` from the catalog, each list sorted by table and name. */
export async function readCatalogKeys(ds: DataSource, schema = 'public'): Promise<CatalogKeys> {
  const tables = (await ds.query(
    `SELECT c.relname AS "table",
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND a.attnum > 0 AND NOT a.attisdropped) AS "hasTenantId"
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
      ORDER BY 1`,
    [schema],
  )) as CatalogTable[];
  const keys = (await ds.query(
    `SELECT t.relname AS "table", i.relname AS name,
            CASE WHEN x.indisprimary THEN 'primary key'
                 WHEN con.contype = 'u' THEN 'unique constraint'
                 WHEN con.contype = 'x' THEN 'exclusion constraint'
                 ELSE 'unique index' END AS kind,
            (SELECT array_agg(a.attname::text ORDER BY k.ord)
               FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
               LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
              WHERE k.ord <= x.indnkeyatts) AS columns
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.conrelid = t.oid AND con.contype IN ('p', 'u', 'x')
      WHERE n.nspname = $1 AND t.relkind IN ('r', 'p') AND (x.indisunique OR con.contype = 'x')
      ORDER BY 1, 2`,
    [schema],
  )) as CatalogKey[];
  const foreignKeys = (await ds.query(
    `SELECT t.relname AS "table", con.conname AS name, r.relname AS "references",
            (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) AS columns,
            (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) AS "referencedColumns"
       FROM pg_constraint con
       JOIN pg_class t ON t.oid = con.conrelid
       JOIN pg_class r ON r.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 AND con.contype = 'f'
      ORDER BY 1, 2`,
    [schema],
  )) as CatalogForeignKey[];
  return { tables, keys, foreignKeys };
}

const list = (cols: readonly (string | null)[]) => cols.map((c) => c ?? '<expression>').join(', ');

/**
 * Every breach of the tenant-first rule in `catalog`, one sentence each, in table order; empty
 * when the schema can be distributed by `tenant_id`. A foreign key between two global tables is
 * not the rule's business; one from a global table into a tenant table is a breach.
 */
export function tenantKeyBreaches(catalog: CatalogKeys): string[] {
  const tenantTables = new Set(catalog.tables.filter((t) => t.hasTenantId).map((t) => t.table));
  const out: string[] = [];
  for (const k of catalog.keys) {
    if (!tenantTables.has(k.table) || k.columns[0] === 'tenant_id') continue;
    out.push(`${k.table}: ${k.kind} ${k.name} (${list(k.columns)}) does not start with tenant_id`);
  }
  for (const fk of catalog.foreignKeys) {
    const from = tenantTables.has(fk.table);
    const into = tenantTables.has(fk.references);
    if (!from && !into) continue;
    const what = `${fk.table}: foreign key ${fk.name} (${list(fk.columns)}) -> ${fk.references} (${list(fk.referencedColumns)})`;
    if (!from) {
      out.push(`${what} points into a tenant table from a table without tenant_id`);
      continue;
    }
    const target = into ? 'tenant_id' : fk.references === TENANT_ROOT.table ? TENANT_ROOT.column : undefined;
    if (target === undefined) out.push(`${what} references a table that is neither a tenant table nor ${TENANT_ROOT.table}`);
    else if (fk.columns[0] !== 'tenant_id' || fk.referencedColumns[0] !== target) {
      out.push(`${what} does not map tenant_id onto ${fk.references}.${target} first`);
    }
  }
  return out.sort();
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The large JSON columns whose size the API charges before it reads them, by table. */
const SIZED: Record<string, readonly string[]> = {
  runs: ['input', 'config', 'output'],
  tasks: ['input', 'output'],
  run_events: ['payload', 'actions'],
  workflow_versions: ['definition'],
  schedules: ['input', 'config'],
};

const size = (col: string) => `NEW.${col}_bytes := COALESCE(octet_length(NEW.${col}::text), 0);`;

/**
 * Stored sizes of the large `jsonb` columns: `<col>_bytes`, the bytes of the column's text as
 * PostgreSQL prints it (`octet_length(col::text)`, 0 for SQL NULL), kept by `BEFORE` triggers.
 * An answer's budget (WEFT_MAX_RESPONSE_BYTES) is charged before any value is read, and sizing
 * a `jsonb` value at read time detoasts and prints it (about 2.4 ms of PostgreSQL CPU per MB);
 * printing it once, when it is written, costs that once instead of on every read.
 *
 * One trigger per table sizes every column on INSERT, and one per column on an UPDATE that sets
 * that column (`UPDATE OF col`), so the frequent updates that set none of them (a run's
 * `event_seq`, a task's status) run no trigger. Rows written before this migration keep NULL
 * sizes, which readers take for unknown and compute (`COALESCE(col_bytes, octet_length(col::text))`):
 * rewriting every row of the largest tables here would hold their locks for as long as that takes.
 */
export class StoredJsonSizes1765785600000 implements MigrationInterface {
  name = 'StoredJsonSizes1765785600000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, cols] of Object.entries(SIZED)) {
      await q.query(`ALTER TABLE ${table} ${cols.map((c) => `ADD COLUMN ${c}_bytes int`).join(', ')}`);
      await q.query(`
        CREATE FUNCTION weft_${table}_json_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN ${cols.map(size).join(' ')} RETURN NEW; END $$`);
      await q.query(`CREATE TRIGGER ${table}_json_bytes BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION weft_${table}_json_bytes()`);
      for (const c of cols) {
        await q.query(`
          CREATE FUNCTION weft_${table}_${c}_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN ${size(c)} RETURN NEW; END $$`);
        await q.query(`CREATE TRIGGER ${table}_${c}_bytes BEFORE UPDATE OF ${c} ON ${table} FOR EACH ROW EXECUTE FUNCTION weft_${table}_${c}_bytes()`);
      }
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, cols] of Object.entries(SIZED)) {
      for (const c of cols) {
        await q.query(`DROP TRIGGER ${table}_${c}_bytes ON ${table}`);
        await q.query(`DROP FUNCTION weft_${table}_${c}_bytes()`);
      }
      await q.query(`DROP TRIGGER ${table}_json_bytes ON ${table}`);
      await q.query(`DROP FUNCTION weft_${table}_json_bytes()`);
      await q.query(`ALTER TABLE ${table} ${cols.map((c) => `DROP COLUMN ${c}_bytes`).join(', ')}`);
    }
  }
}

/**
 * A database that refuses, as jsonb refuses what it cannot hold (SQLSTATE 22P05), any task row
 * whose `column` holds `marker`: for values that pass every check of Weft's own and are refused
 * only by PostgreSQL. {@link install} adds the trigger (named after `name`), {@link remove} drops it.
 */
export function refusedTaskValues(owner: { query(text: string): Promise<unknown> }, name: string, column: 'input' | 'output', marker: string) {
  return {
    install: () =>
      owner.query(`
        CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.${column}::text LIKE '%${marker}%' THEN
            RAISE EXCEPTION 'unsupported Unicode escape sequence' USING ERRCODE = '22P05';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION ${name}();
      `),
    remove: () => owner.query(`DROP TRIGGER IF EXISTS ${name} ON tasks; DROP FUNCTION IF EXISTS ${name}();`),
  };
}

import pg from 'pg';

/**
 * Creates database `name` over the administrative connection `admin` (a connected client of the
 * server's `postgres` database, as the owner). Returns false, creating nothing, when it exists
 * already (a concurrent start created it first); any other refusal is the driver's error.
 */
export async function createDatabase(admin: pg.ClientBase, name: string): Promise<boolean> {
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '42P04') return false;
    throw err;
  }
}

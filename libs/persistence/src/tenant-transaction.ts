import pg from 'pg';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { isStalePreparedStatement, mapDriverError } from './errors.js';
import { closeTransaction, commit, executeCall, flush, openTransaction, send, started, transactionOf, type OpenTransaction } from './round-trips.js';
import { sql, statementName, type SqlResult } from './sql.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a UUID in its canonical textual form (any version). */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && UUID.test(s);
}

/** Managers opened by {@link withTenant}, with the tenant they were opened for. */
const tenantOfManager = new WeakMap<EntityManager, string>();

/**
 * Runs `fn` in one transaction bound to `tenantId`: `BEGIN; select set_config('app.tenant_id',
 * …, true)` (the setting is transaction-local, so a pooled connection never carries a tenant into
 * the next transaction; never a session `SET`), then `fn`, then COMMIT (ROLLBACK when `fn`
 * throws). Row-level security policies read that setting.
 *
 * The opening is sent with the transaction's first statement, and a write `fn` deferred to the
 * commit with the COMMIT ({@link OpenTransaction}): a transaction of one read and one write is
 * two round trips. A transaction that ran no statement sends nothing. TypeORM calls made with
 * the manager inside `fn` join the transaction (the query runner is marked as in one, and its
 * `query` sends what is pending first), instead of opening their own.
 *
 * Errors are passed through {@link mapDriverError}, so callers see `UniqueViolation` /
 * `TransientDbError` / `WriteInvariantError` instead of raw driver errors; errors thrown by `fn`
 * itself come back unchanged. Throws a TypeError when `tenantId` is not a UUID (nothing is opened).
 */
export async function withTenant<T>(ds: DataSource, tenantId: string, fn: (m: EntityManager) => Promise<T>): Promise<T> {
  if (!isUuid(tenantId)) throw new TypeError(`tenant id must be a UUID, got ${JSON.stringify(tenantId)}`);
  const runner = ds.createQueryRunner();
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  const m = runner.manager;
  let broken: unknown;
  try {
    const client = (await runner.connect()) as pg.ClientBase;
    const tx: OpenTransaction = { client, opening: `BEGIN; ${tenantSetting(tenantId)}` };
    try {
      state.isTransactionActive = true;
      state.transactionDepth = 1;
      tenantOfManager.set(m, tenantId);
      openTransaction(m, tx);
      const query = runner.query.bind(runner);
      runner.query = (async (...args: Parameters<typeof runner.query>) => {
        // Only while this transaction is open: a manager kept past it must not send its
        // opening on the connection's next user (TypeORM's own check then refuses the call).
        if (!runner.isReleased && transactionOf(m) === tx) await flush(tx);
        return query(...args);
      }) as typeof runner.query;
      const result = await fn(m);
      await commit(tx);
      return result;
    } catch (err) {
      // Also when a message failed after its BEGIN ran (a cancel, a write refused with its
      // COMMIT): the connection must never go back to the pool inside a transaction. A ROLLBACK
      // outside one only warns; a transaction that sent nothing needs none.
      if (started(tx)) {
        await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
          // The connection is unusable: the pool must not hand it out again.
          broken = rollbackErr;
        });
      }
      // A prepared statement this connection can no longer run (a column changed type): close
      // the connection, so its statements are prepared again on a new one.
      if (isStalePreparedStatement(err)) broken = err;
      throw err;
    }
  } catch (err) {
    throw mapDriverError(err);
  } finally {
    tenantOfManager.delete(m);
    closeTransaction(m);
    delete (runner as { query?: unknown }).query; // TypeORM's own query() again
    state.isTransactionActive = false;
    state.transactionDepth = 0;
    await releaseRunner(runner, broken);
  }
}

/**
 * Runs the one parameterised statement `text` for `tenantId` as a transaction of its own, in one
 * round trip once the connection has prepared it: `select set_config('app.tenant_id', …, true);
 * EXECUTE name(literals)` in one simple-protocol message, which PostgreSQL runs as one implicit
 * transaction (the setting is local to it; the statement commits, or rolls back, before the
 * answer comes), with the statement's plan kept. On a connection that has not prepared it yet
 * (or with a value that cannot go as a literal) it is a {@link withTenant} transaction, which
 * prepares it. For hot one-statement reads and writes: a worker's claim, an outbox mark, a run
 * read. Errors are mapped like {@link withTenant}'s; a TypeError when `tenantId` is not a UUID.
 */
export async function sqlInTenant<R = Record<string, unknown>>(ds: DataSource, tenantId: string, text: string, params: unknown[] = []): Promise<SqlResult<R>> {
  if (!isUuid(tenantId)) throw new TypeError(`tenant id must be a UUID, got ${JSON.stringify(tenantId)}`);
  const runner = ds.createQueryRunner();
  let call: string | undefined;
  try {
    const client = (await runner.connect()) as pg.ClientBase;
    const name = statementName(text);
    call = executeCall(client, name, text, params);
    if (call !== undefined) {
      const results = (await client.query(`${tenantSetting(tenantId)}; ${call}`)) as unknown as pg.QueryResult[];
      const last = results[results.length - 1]!;
      return { rows: last.rows as R[], rowCount: last.rowCount ?? 0 };
    }
  } catch (err) {
    throw mapDriverError(err);
  } finally {
    await runner.release();
  }
  return withTenant(ds, tenantId, (m) => sql<R>(m, text, params));
}

/**
 * Runs the one parameterised statement `text` outside any tenant (a call of a cross-tenant
 * SECURITY DEFINER function, see `claims.ts`) as a named prepared statement
 * ({@link statementName}), one implicit transaction: each pooled connection parses and plans it
 * once instead of on every call. With a transaction-bound manager it runs in that transaction
 * ({@link sql}). Driver errors are mapped ({@link mapDriverError}); a connection that can no
 * longer run a statement it prepared (a column changed type) is closed instead of pooled again.
 */
export async function sqlOutsideTenant<R = Record<string, unknown>>(
  db: DataSource | EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<SqlResult<R>> {
  if (!('createQueryRunner' in db)) {
    try {
      return await sql<R>(db, text, params);
    } catch (err) {
      throw mapDriverError(err);
    }
  }
  const runner = db.createQueryRunner();
  let broken: unknown;
  try {
    const client = (await runner.connect()) as pg.ClientBase;
    const res = await send(client, statementName(text), text, params);
    return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
  } catch (err) {
    if (isStalePreparedStatement(err)) broken = err;
    throw mapDriverError(err);
  } finally {
    await releaseRunner(runner, broken);
  }
}

/**
 * Gives `runner`'s connection back to the pool; with `cause` (the connection is unusable, or its
 * session state unknown), discarded instead: TypeORM's Postgres runner releases with an error so
 * that pg-pool closes the connection.
 */
export async function releaseRunner(runner: QueryRunner, cause?: unknown): Promise<void> {
  const discard = (runner as unknown as { releasePostgresConnection?: (e: unknown) => Promise<void> }).releasePostgresConnection;
  await (cause !== undefined && discard ? discard.call(runner, cause) : runner.release());
}

/** The statement binding the current transaction to `tenantId` (transaction-local, read by row-level security). */
function tenantSetting(tenantId: string): string {
  return `select set_config('app.tenant_id', ${pg.escapeLiteral(tenantId)}, true)`;
}

/**
 * The tenant the manager's transaction was opened for by {@link withTenant}, or `undefined`
 * when the manager is not (or no longer) inside such a transaction.
 */
export function tenantOf(m: EntityManager): string | undefined {
  return tenantOfManager.get(m);
}

/**
 * Throws unless `m` is inside a {@link withTenant} transaction for exactly `tenantId` — the
 * guard repositories use when handed a manager instead of a DataSource (a query can never run
 * for a tenant it was not opened for).
 */
export function assertTenant(m: EntityManager, tenantId: string): void {
  const bound = tenantOfManager.get(m);
  if (bound === undefined) throw new Error('EntityManager is not inside a withTenant() transaction');
  if (bound !== tenantId) throw new Error(`EntityManager is bound to tenant ${bound}, not ${tenantId}`);
}

/**
 * Runs `fn` inside a savepoint of the {@link withTenant} transaction of `m`: when `fn` throws (or
 * a write it deferred to the commit fails when the savepoint is released), everything `fn` wrote
 * is rolled back and the error is thrown, while the transaction itself stays usable. For one
 * step of a batch that may fail on its own (a scheduled run that cannot start) without undoing
 * the steps before it.
 */
export async function withSavepoint<T>(m: EntityManager, fn: () => Promise<T>): Promise<T> {
  if (!tenantOfManager.has(m)) throw new Error('withSavepoint needs a manager from withTenant()');
  await m.query('SAVEPOINT weft_step');
  try {
    const out = await fn();
    // Sends any write deferred to the commit first, so its failure is this step's.
    await m.query('RELEASE SAVEPOINT weft_step');
    return out;
  } catch (err) {
    await m.query('ROLLBACK TO SAVEPOINT weft_step');
    throw err;
  }
}

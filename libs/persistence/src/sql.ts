import { createHash } from 'node:crypto';
import type pg from 'pg';
import { QueryRunnerAlreadyReleasedError, type EntityManager } from 'typeorm';
import { deferToCommit, runIn, send, transactionOf } from './round-trips.js';

/** Rows and affected-row count of one statement. */
export interface SqlResult<R> {
  rows: R[];
  /** Rows inserted/updated/deleted (or returned, for a SELECT). */
  rowCount: number;
}

/**
 * Runs one parameterised statement (`$1, $2…`) on the transaction of `m` and returns its rows
 * and affected-row count (TypeORM's `EntityManager.query` hides the count of UPDATE/DELETE
 * behind a driver-specific tuple). `m` must be transaction-bound, e.g. from `withTenant`.
 * Pass `jsonb` values already `JSON.stringify`-ed (pg would send JS arrays as SQL arrays).
 *
 * The statement goes to the transaction's pg connection as a named prepared statement (its name
 * a hash of the text, see {@link statementName}): each pooled connection parses and rewrites a
 * text once and PostgreSQL may keep its plan, instead of parsing, rewriting (row-level security
 * included) and planning it on every call. Driver errors are thrown as they are; the enclosing
 * `withTenant` maps them.
 */
export async function sql<R = Record<string, unknown>>(m: EntityManager, text: string, params: unknown[] = []): Promise<SqlResult<R>> {
  const qr = m.queryRunner;
  if (!qr) throw new Error('sql() needs a transaction-bound EntityManager');
  // A manager kept past its transaction must not run on the connection's next transaction
  // (another tenant's, perhaps): TypeORM's own query() refuses it the same way.
  if (qr.isReleased) throw new QueryRunnerAlreadyReleasedError();
  const name = statementName(text);
  const tx = transactionOf(m);
  const res = tx ? await runIn(tx, name, text, params) : await send((await qr.connect()) as pg.ClientBase, name, text, params);
  return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
}

/**
 * Holds the write `text` back to go in one message with the COMMIT of `m`'s {@link withTenant}
 * transaction (see `round-trips.ts`); a statement the transaction runs before its end sends it
 * first. Nothing of its result is returned: the statement must check what it expects itself
 * (`weft_expect_rows`), so a wrong count raises and the COMMIT never runs. The error, if any,
 * comes from `withTenant`. Outside such a transaction it runs at once, like {@link sql}.
 */
export async function sqlAtCommit(m: EntityManager, text: string, params: unknown[] = []): Promise<void> {
  const tx = transactionOf(m);
  if (!tx) {
    await sql(m, text, params);
    return;
  }
  if (m.queryRunner?.isReleased) throw new QueryRunnerAlreadyReleasedError();
  await deferToCommit(tx, statementName(text), text, params);
}

const names = new Map<string, string>();
/** Texts given a name at most; past it a new text runs unnamed (a caller building texts from values must not fill every connection with statements). */
const MAX_NAMED = 2_000;

/**
 * The prepared-statement name of `text`: `weft_` and 24 hex digits of its SHA-1, so two texts
 * never share a name on a connection (pg refuses a name reused for another text). Remembered
 * per text; undefined (run it unnamed) once {@link MAX_NAMED} texts have a name.
 */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMED) return undefined;
    name = `weft_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** `JSON.stringify` for a `jsonb` parameter; `undefined` becomes SQL NULL. */
export function jsonb(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

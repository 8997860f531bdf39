import { createRequire } from 'node:module';
import type pg from 'pg';
import type { EntityManager } from 'typeorm';

/** node-postgres's own parameter conversion, which its typings do not declare: the text form it binds (a string, a Buffer for bytea, or null). */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(value: unknown): string | Buffer | null };

/**
 * How a {@link withTenant} transaction saves round trips to PostgreSQL: its opening (BEGIN and
 * the tenant setting) goes in one message with its first statement, and a write marked for the
 * commit ({@link deferToCommit}) goes in one message with its COMMIT. node-postgres does not
 * pipeline, but one simple-protocol message may hold several statements; a statement this
 * connection already prepared (named prepared statements, see `statementName`) runs there as
 * `EXECUTE name(literal, …)`, which keeps its plan. A chain's step is then two round trips
 * instead of four: `BEGIN; set_config(…); EXECUTE lock(…)` and `EXECUTE write(…); COMMIT`.
 *
 * A statement not yet prepared on the connection is sent the usual way (after the opening, on
 * its own), which prepares it for the next time.
 */
export interface OpenTransaction {
  readonly client: pg.ClientBase;
  /** The opening message while it has not been sent. */
  opening?: string;
  /** The write to send with COMMIT, while it has not been sent. */
  deferred?: { text: string; params: unknown[]; name: string | undefined };
}

const open = new WeakMap<EntityManager, OpenTransaction>();

/** Registers `tx` as the transaction of `m` (until {@link closeTransaction}). */
export function openTransaction(m: EntityManager, tx: OpenTransaction): void {
  open.set(m, tx);
}

/** Forgets the transaction of `m`. */
export function closeTransaction(m: EntityManager): void {
  open.delete(m);
}

/** The open transaction of `m`, if {@link withTenant} opened one. */
export function transactionOf(m: EntityManager): OpenTransaction | undefined {
  return open.get(m);
}

/** True when the transaction has sent anything to the server (its opening, at least). */
export function started(tx: OpenTransaction): boolean {
  return tx.opening === undefined;
}

/**
 * Sends what must reach the server before another statement of the transaction: the opening,
 * and a deferred write (a statement after it must see it, so it is no longer the last).
 */
export async function flush(tx: OpenTransaction): Promise<void> {
  if (tx.opening !== undefined) {
    const opening = tx.opening;
    tx.opening = undefined;
    await tx.client.query(opening);
  }
  if (tx.deferred) {
    const { text, params, name } = tx.deferred;
    tx.deferred = undefined;
    await send(tx.client, name, text, params);
  }
}

/**
 * Runs `text` with `params` in the transaction: with its opening in one message when the
 * opening is still pending and the connection prepared `name` for `text`; after {@link flush}
 * otherwise. Resolves the statement's result.
 */
export async function runIn(tx: OpenTransaction, name: string | undefined, text: string, params: unknown[]): Promise<pg.QueryResult> {
  if (tx.deferred) await flush(tx);
  if (tx.opening !== undefined) {
    const call = executeCall(tx.client, name, text, params);
    const opening = tx.opening;
    tx.opening = undefined;
    if (call !== undefined) {
      const results = (await tx.client.query(`${opening}; ${call}`)) as unknown as pg.QueryResult[];
      return results[results.length - 1]!;
    }
    await tx.client.query(opening);
  }
  return send(tx.client, name, text, params);
}

/** Sends `text` the extended way: as the named prepared statement `name`, or unnamed when undefined. */
export function send(client: pg.ClientBase, name: string | undefined, text: string, params: unknown[]): Promise<pg.QueryResult> {
  return name === undefined ? client.query(text, params) : client.query({ name, text, values: params });
}

/**
 * Holds `text` back to be sent with the transaction's COMMIT; any statement the transaction runs
 * first sends it before itself. Its result is never seen: a caller only defers a write whose
 * checks are in the statement (it raises, and the COMMIT after it never runs).
 */
export async function deferToCommit(tx: OpenTransaction, name: string | undefined, text: string, params: unknown[]): Promise<void> {
  if (tx.deferred) await flush(tx);
  tx.deferred = { text, params, name };
}

/**
 * Commits: `[opening;] [EXECUTE deferred;] COMMIT` in one message. Sends nothing when the
 * transaction never reached the server (no statement ran). A deferred write the connection has
 * not prepared is sent on its own first.
 */
export async function commit(tx: OpenTransaction): Promise<void> {
  if (tx.opening !== undefined && !tx.deferred) return;
  const parts: string[] = [];
  if (tx.deferred) {
    const call = executeCall(tx.client, tx.deferred.name, tx.deferred.text, tx.deferred.params);
    if (call === undefined) {
      await flush(tx);
    } else {
      if (tx.opening !== undefined) parts.push(tx.opening);
      parts.push(call);
      tx.opening = undefined;
      tx.deferred = undefined;
    }
  }
  parts.push('COMMIT');
  await tx.client.query(parts.join('; '));
}

/**
 * `EXECUTE name(…)` with `params` written as literals, when connection `client` prepared `name`
 * for exactly `text` and every parameter has a text form; undefined otherwise. Each literal is
 * what node-postgres would send for the parameter (`prepareValue`: dates in ISO form with their
 * offset, arrays as array literals, objects as JSON), quoted by {@link literal}, so PostgreSQL
 * casts it to the parameter's type as it would the bound value.
 */
export function executeCall(client: pg.ClientBase, name: string | undefined, text: string, params: unknown[]): string | undefined {
  if (name === undefined) return undefined;
  const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements;
  if (parsed?.[name] !== text) return undefined;
  const literals = executeLiterals(params);
  if (literals === undefined) return undefined;
  return literals.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${literals.join(', ')})`;
}

/**
 * `params` as the literals of an `EXECUTE name(…)`: what node-postgres would bind for each
 * (`prepareValue`), quoted; undefined when one has no text form that can travel in a message
 * (a Buffer, a string holding NUL).
 */
export function executeLiterals(params: readonly unknown[]): string[] | undefined {
  const literals: string[] = [];
  for (const p of params) {
    const v = prepareValue(p) as unknown;
    if (v === null || v === undefined) literals.push('NULL');
    // A NUL would end the message's text inside the literal: bound, PostgreSQL refuses it as
    // data (22021), which callers rely on; a Buffer (bytea) goes in binary, not as a literal.
    else if (typeof v === 'string' && !v.includes('\0')) literals.push(literal(v));
    else return undefined;
  }
  return literals;
}

/**
 * `s` quoted as an SQL string literal, whatever `standard_conforming_strings` says: quotes
 * doubled, and with backslashes an `E'…'` literal with them doubled too (what `pg.escapeLiteral`
 * writes, with native replaces instead of its loop over every character of a large JSON text).
 */
function literal(s: string): string {
  const quoted = s.replaceAll("'", "''");
  return s.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

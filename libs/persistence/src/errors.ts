import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

/** Error codes of @weft/persistence: one union for the package. */
export type PersistenceErrorCode =
  'UNIQUE_VIOLATION' | 'TRANSIENT' | 'INVALID_CURSOR' | 'INVALID_DATA' | 'LAST_ADMIN_KEY' | 'TOO_MANY_API_KEYS' | 'TENANT_NAME_TAKEN';

/** Base class of every error @weft/persistence throws on purpose; `code` says which. */
export class PersistenceError extends Error {
  constructor(
    readonly code: PersistenceErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
  }
}

/**
 * A unique constraint or unique index rejected a write (SQLSTATE 23505). `constraint` is the
 * index/constraint name (e.g. `runs_idempotency_key`), when the server reported it.
 */
export class UniqueViolation extends PersistenceError {
  constructor(
    readonly constraint: string | undefined,
    message: string,
    cause?: unknown,
  ) {
    super('UNIQUE_VIOLATION', message, cause);
  }
}

/**
 * A write of one event changed another number of rows than it expected: the stored run no longer
 * matches the snapshot the state machine decided on. A bug, never retried; the event rolls back.
 * Raised in JavaScript, or by the database (SQLSTATE {@link WRITE_INVARIANT_SQLSTATE}) for a
 * write sent together with its COMMIT.
 */
export class WriteInvariantError extends Error {
  override name = 'WriteInvariantError';
}

/** The SQLSTATE `weft_expect_rows()` raises (a class of its own, used by no PostgreSQL error). */
export const WRITE_INVARIANT_SQLSTATE = 'WF001';

/**
 * A failure that retrying the whole transaction may cure: serialization failure (40001),
 * deadlock (40P01), lock timeout (55P03), the server shutting down or the connection lost
 * (57P0x, class 08, ECONNRESET, "Connection terminated", pool connect timeout).
 */
export class TransientDbError extends PersistenceError {
  constructor(
    readonly sqlState: string | undefined,
    message: string,
    cause?: unknown,
  ) {
    super('TRANSIENT', message, cause);
  }
}

/**
 * The server refused a value as data: SQLSTATE class 22 (data exception — e.g. 22P05 a NUL
 * character in a `jsonb` string, 22P02 a lone surrogate escape, 22021 a NUL byte in `text`,
 * 22003 a number out of range, 22008 a datetime overflow) or class 54 (program limit exceeded —
 * e.g. a value nested too deeply or too large for an index). Permanent: the same statement fails
 * the same way, so it is never retried. `sqlState` is the server's code.
 */
export class InvalidDataError extends PersistenceError {
  constructor(
    readonly sqlState: string | undefined,
    message: string,
    cause?: unknown,
  ) {
    super('INVALID_DATA', message, cause);
  }
}

/** A pagination cursor that was not produced by this package (or was tampered with). */
export class InvalidCursorError extends PersistenceError {
  constructor(message = 'invalid cursor') {
    super('INVALID_CURSOR', message);
  }
}

/** Revoking this key would leave its tenant without an active admin key (nobody could manage keys again). */
export class LastAdminKeyError extends PersistenceError {
  constructor(message = 'this is the last active admin key of the tenant; create another admin key before revoking it') {
    super('LAST_ADMIN_KEY', message);
  }
}

/** The tenant already holds its most live (not revoked) API keys: `max`; nothing was created. */
export class TooManyApiKeysError extends PersistenceError {
  constructor(readonly max: number) {
    super('TOO_MANY_API_KEYS', `the tenant holds ${max} live API keys, its most; revoke one before creating another`);
  }
}

/**
 * Another tenant holds the name (compared case-insensitively, `tenants_name_unique`):
 * `tenantName` as asked, `existing` that tenant's id and its name as stored; nothing was created.
 */
export class TenantNameTakenError extends PersistenceError {
  constructor(
    readonly tenantName: string,
    readonly existing: { id: string; name: string },
  ) {
    super(
      'TENANT_NAME_TAKEN',
      `tenant name ${JSON.stringify(tenantName)} is taken by tenant ${existing.id}${existing.name === tenantName ? '' : ` (named ${JSON.stringify(existing.name)}; names are compared ignoring case)`}`,
    );
  }
}

const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03', '53300', '53400']);
const TRANSIENT_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN']);
const TRANSIENT_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /client has encountered a connection error/i,
  /connection (?:is )?closed/i,
  /Client was closed and is not queryable/i,
];

/** SQLSTATE classes of values the server can never store: data exception, program limit exceeded. */
const INVALID_DATA_CLASSES = ['22', '54'];

/**
 * Maps a driver (pg) or TypeORM error to a typed {@link PersistenceError}, once, at the edge of
 * persistence: unique violation → {@link UniqueViolation}; serialization
 * failure, deadlock, connection loss → {@link TransientDbError}; a data exception or program
 * limit (SQLSTATE class 22, 54) → {@link InvalidDataError}, which is permanent. Any other error (including
 * errors already mapped, and domain errors thrown by callbacks) is returned unchanged; a
 * non-Error value is wrapped in an Error.
 */
export function mapDriverError(err: unknown): Error {
  if (err instanceof PersistenceError) return err;
  // TypeORM releases a query runner whose connection broke (terminated backend, network); the
  // transaction's next statement then fails with one of these instead of a driver error.
  if (err instanceof QueryRunnerAlreadyReleasedError || err instanceof QueryRunnerProviderAlreadyReleasedError) {
    return new TransientDbError(undefined, err.message, err);
  }
  const driver = (err instanceof QueryFailedError ? err.driverError : err) as { code?: unknown; constraint?: unknown; message?: unknown } | undefined;
  const code = typeof driver?.code === 'string' ? driver.code : undefined;
  const message = typeof driver?.message === 'string' ? driver.message : String(err);
  if (code === WRITE_INVARIANT_SQLSTATE) return new WriteInvariantError(message);
  if (code === '23505') {
    return new UniqueViolation(typeof driver?.constraint === 'string' ? driver.constraint : undefined, message, err);
  }
  if (code !== undefined && code.length === 5 && INVALID_DATA_CLASSES.includes(code.slice(0, 2))) {
    return new InvalidDataError(code, message, err);
  }
  // Messages are only trusted on driver-shaped errors (pg throws plain Errors for a dropped
  // connection), never on our own or a caller's error subclasses.
  const driverShaped = err instanceof QueryFailedError || code !== undefined || (err instanceof Error && err.constructor === Error);
  if (
    isStalePreparedStatement(err) ||
    (code !== undefined && (TRANSIENT_SQLSTATES.has(code) || code.startsWith('08') || TRANSIENT_NODE_CODES.has(code))) ||
    (driverShaped && TRANSIENT_MESSAGES.some((re) => re.test(message)))
  ) {
    return new TransientDbError(code, message, err);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * True for PostgreSQL's refusal of a prepared statement whose result columns changed type since
 * the connection prepared it (an `ALTER TABLE … TYPE` by a migration): the statement fails on
 * that connection until the connection is closed. Such an error is transient (a retry runs on
 * another connection); {@link withTenant} discards the connection. Also true for the
 * {@link TransientDbError} that error was mapped to.
 */
export function isStalePreparedStatement(err: unknown): boolean {
  // A repository bound to a transaction maps the error first; the driver's is its cause.
  const raw = err instanceof TransientDbError && err.cause !== undefined ? err.cause : err;
  const driver = (raw instanceof QueryFailedError ? raw.driverError : raw) as { code?: unknown; message?: unknown } | undefined;
  return driver?.code === '0A000' && typeof driver.message === 'string' && /cached plan must not change result type/i.test(driver.message);
}

/** True for a {@link TransientDbError}: the caller may retry the whole transaction. */
export function isTransientDbError(err: unknown): err is TransientDbError {
  return err instanceof TransientDbError;
}

/** True for an {@link InvalidDataError}: the statement can never succeed with these values. */
export function isInvalidDataError(err: unknown): err is InvalidDataError {
  return err instanceof InvalidDataError;
}

import type { GraphQLResolveInfo } from 'graphql';
import { WeftError } from '@weft/engine';
import type { StoredJsonLoader } from './stored-json.loader.js';
import type { AttemptLogLoader } from './attempt-logs.loader.js';

/** Default of WEFT_MAX_RESPONSE_BYTES: 64 MiB of stored JSON per operation. */
export const MAX_RESPONSE_BYTES_DEFAULT = 64 * 1024 * 1024;

/** The refusal of an operation whose stored JSON would pass WEFT_MAX_RESPONSE_BYTES (BAD_USER_INPUT). */
export class ResponseTooLargeError extends WeftError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    const message =
      `response too large: this operation would return at least ${bytes} bytes of stored JSON, over the limit of ` +
      `${limit} bytes (WEFT_MAX_RESPONSE_BYTES); ask for fewer fields or page tasks/history with first/after`;
    super('BAD_USER_INPUT', message, [{ message: `at least ${bytes} bytes of stored JSON, over the limit of ${limit} (WEFT_MAX_RESPONSE_BYTES)` }]);
  }
}

/**
 * The bytes of stored JSON one operation may still return. Every field that answers with a
 * stored JSON value charges its size (the JSON text as PostgreSQL prints it) before the value is
 * read; the charge that passes the limit refuses the operation, and every later one fails too.
 *
 * The rows that carry those sizes (a run, a page of tasks…) are read through {@link sizing}, and
 * values are read only once no such read is running ({@link whenSized}): every size of the
 * operation is charged first, so an operation that will be refused reads no value at all.
 * Reading a row never waits for a value, so this cannot wait on itself.
 */
export class ResponseBudget {
  private used = 0;
  private reading = 0;
  private idle: (() => void)[] = [];
  /** Set once a charge passed the limit: the operation's answer is this error alone. */
  refused?: ResponseTooLargeError;

  constructor(readonly limit: number) {}

  /**
   * Refuses the answer now when `bytes`, which it will surely charge later (the values of a page
   * its items will each charge), would pass the limit; charges nothing.
   * @throws ResponseTooLargeError when the total would pass the limit (or already did)
   */
  expect(bytes: number): void {
    if (this.refused) throw this.refused;
    if (this.used + bytes > this.limit) {
      this.refused = new ResponseTooLargeError(this.used + bytes, this.limit);
      throw this.refused;
    }
  }

  /** `read` (of rows whose values this answer may charge), counted as running until it settles. */
  async sizing<T>(read: Promise<T>): Promise<T> {
    this.reading++;
    try {
      return await read;
    } finally {
      if (--this.reading === 0) for (const then of this.idle.splice(0)) then();
    }
  }

  /** True while a read of sizes ({@link sizing}) is running. */
  get busy(): boolean {
    return this.reading > 0;
  }

  /** Calls `then` when no read of sizes is running: now, or when the last one settles. */
  whenSized(then: () => void): void {
    if (this.reading === 0) then();
    else this.idle.push(then);
  }

  /**
   * Resolves once every size of the answer is charged: no read of sizes running, and the turn
   * that charged the last of them over. Throws the refusal when the answer was refused, so that
   * a value is read only for an answer still within its budget.
   */
  async charged(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.refused) throw this.refused;
      if (!this.busy) return;
      await new Promise<void>((resolve) => this.whenSized(resolve));
    }
  }

  /** Charges `bytes`; throws {@link ResponseTooLargeError} when the total passes the limit (or already did). */
  charge(bytes: number): void {
    if (this.refused) throw this.refused;
    if (this.used + bytes > this.limit) {
      this.refused = new ResponseTooLargeError(this.used + bytes, this.limit);
      throw this.refused;
    }
    this.used += bytes;
  }
}

/** The per-operation state of a response: its budget, and the loader of its stored values once one is needed. */
export interface ResponseScope {
  budget: ResponseBudget;
  loader?: StoredJsonLoader;
  /** Rows read for this answer, by what was read (see RunsService.sizing). */
  reads?: Map<string, Promise<unknown>>;
  /** The stored attempts of the answer's tasks, read together (see TaskAttemptsResolver). */
  attempts?: AttemptLogLoader;
}

const scopes = new WeakMap<object, ResponseScope>();

/**
 * The scope of the answer `info` belongs to: one per query or mutation (keyed by its context),
 * and one per event of a subscription (keyed by the event, which a subscription's every answer
 * gets afresh), with a budget of `limit` bytes (default {@link MAX_RESPONSE_BYTES_DEFAULT}: a
 * configuration built for a test may lack it) on first use.
 */
export function responseScope(context: object, info: GraphQLResolveInfo, limit: number | undefined): ResponseScope {
  const root = info.rootValue;
  const key = info.operation.operation === 'subscription' && root !== null && typeof root === 'object' ? root : context;
  let scope = scopes.get(key);
  if (!scope) scopes.set(key, (scope = { budget: new ResponseBudget(limit ?? MAX_RESPONSE_BYTES_DEFAULT) }));
  return scope;
}

/** The refusal of the query or mutation whose context this is, if it passed its budget. */
export function refusalOf(context: object | undefined): ResponseTooLargeError | undefined {
  return context ? scopes.get(context)?.budget.refused : undefined;
}

/** Bytes of `value`'s JSON text: what a value already in memory costs the budget. */
export function jsonBytes(value: unknown): number {
  return value === undefined || value === null ? 0 : Buffer.byteLength(JSON.stringify(value));
}

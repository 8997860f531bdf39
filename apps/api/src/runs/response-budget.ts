import type { GraphQLResolveInfo } from 'graphql';
import { WeftError } from '@weft/engine';

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
 */
export class ResponseBudget {
  private used = 0;
  /** Set once a charge passed the limit: the operation's answer is this error alone. */
  refused?: ResponseTooLargeError;

  constructor(readonly limit: number) {}

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

/** The per-operation state of a response: its budget, and whatever else one answer shares. */
export interface ResponseScope<T> {
  budget: ResponseBudget;
  extra: T;
}

const scopes = new WeakMap<object, ResponseScope<unknown>>();

/**
 * The scope of the answer `info` belongs to: one per query or mutation (keyed by its context),
 * and one per event of a subscription (keyed by the event, which a subscription's every answer
 * gets afresh), created with `make` on first use.
 */
export function responseScope<T>(context: object, info: GraphQLResolveInfo, make: () => ResponseScope<T>): ResponseScope<T> {
  const root = info.rootValue;
  const key = info.operation.operation === 'subscription' && root !== null && typeof root === 'object' ? root : context;
  let scope = scopes.get(key) as ResponseScope<T> | undefined;
  if (!scope) scopes.set(key, (scope = make()));
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

import { Logger } from '@nestjs/common';
import { GraphQLError, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { MachineError, WeftError, type Problem } from '@weft/engine';
import { toWeftError } from '@weft/engine/coordinator';
import { PersistenceError } from '@weft/persistence';
import { BusyError } from './busy.error.js';

const log = new Logger('GraphQL');

/** Codes whose message was written for the client (Apollo's request errors and ours). */
const CLIENT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
]);

const TRANSIENT_MESSAGE = 'The service is temporarily unavailable; retry the request';
const INTERNAL_MESSAGE = 'Internal server error';

/**
 * The one error formatter of the API, for HTTP (Apollo `formatError`) and graphql-ws (`onNext`):
 * - a WeftError anywhere in the cause chain: `extensions.code` = its code, plus
 *   `extensions.problems` for BAD_USER_INPUT (never empty: the message when none were listed);
 *   a machine error or a persistence error that escaped its layer is mapped to one first
 *   (transient database failure -> TRANSIENT, bad cursor -> BAD_USER_INPUT, unique -> CONFLICT,
 *   a value refused as data -> BAD_USER_INPUT);
 * - GraphQL's own request errors (parse, validation, variable coercion): kept as they are;
 * - anything else: INTERNAL_SERVER_ERROR with a generic message, logged here and never sent.
 * Extensions other than `code` and `problems` (stack traces, original errors) are dropped.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const base = { message: formatted.message, locations: formatted.locations, path: formatted.path };
  const weft = findWeftError(error);
  if (weft) {
    if (weft.code === 'TRANSIENT') return { ...base, message: weft instanceof BusyError ? weft.message : TRANSIENT_MESSAGE, extensions: { code: 'TRANSIENT' } };
    const extensions: Record<string, unknown> = { code: weft.code };
    if (weft.code === 'BAD_USER_INPUT') extensions.problems = problemsOf(weft.problems, weft.message);
    else if (weft.problems.length > 0) extensions.problems = weft.problems;
    return { ...base, message: weft.message, extensions };
  }
  const code = formatted.extensions?.code;
  const requestError = error instanceof GraphQLError && !error.path;
  if (requestError && (code === undefined || (typeof code === 'string' && CLIENT_CODES.has(code)))) {
    // Without a code only graphql-ws's execution of a bad request gets here (Apollo sets one).
    const c = typeof code === 'string' ? code : 'BAD_USER_INPUT';
    const extensions: Record<string, unknown> = { code: c };
    if (c === 'BAD_USER_INPUT') extensions.problems = problemsOf([], formatted.message);
    return { ...base, extensions };
  }
  log.error(`${formatted.path ? `${formatted.path.join('.')}: ` : ''}${describe(error)}`);
  return { ...base, message: INTERNAL_MESSAGE, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/** Formats the errors of a graphql-ws result with {@link formatError}. */
export function formatExecutionResult(result: ExecutionResult): FormattedExecutionResult {
  const { errors, ...rest } = result;
  if (!errors?.length) return rest;
  return { ...rest, errors: errors.map((e) => formatError(e.toJSON(), e)) };
}

/** Formats the errors graphql-ws sends in an Error message (the operation failed validation). */
export function formatValidationErrors(errors: readonly GraphQLError[]): GraphQLFormattedError[] {
  return errors.map((e) => {
    const json = e.toJSON();
    return formatError({ ...json, extensions: { code: 'GRAPHQL_VALIDATION_FAILED', ...json.extensions } }, e);
  });
}

function findWeftError(error: unknown): WeftError | undefined {
  for (let e = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof WeftError) return e;
    if (e instanceof MachineError) return toWeftError(e);
    if (e instanceof PersistenceError) return fromPersistence(e);
    e = e instanceof GraphQLError ? e.originalError : undefined;
  }
  return undefined;
}

function fromPersistence(e: PersistenceError): WeftError {
  switch (e.code) {
    case 'TRANSIENT':
      return new WeftError('TRANSIENT', e.message);
    case 'INVALID_CURSOR':
      return new WeftError('BAD_USER_INPUT', 'Invalid cursor', [{ path: 'after', message: 'not a cursor from a previous page' }]);
    case 'UNIQUE_VIOLATION':
      return new WeftError('CONFLICT', 'The object already exists');
    case 'LAST_ADMIN_KEY':
    case 'TOO_MANY_API_KEYS':
      return new WeftError('CONFLICT', e.message);
    default:
      // INVALID_DATA: the database refused a value as data (SQLSTATE class 22/54) that the edge
      // checks let through; the driver's text stays in the log.
      log.warn(`${e.code}: ${e.message}`);
      return new WeftError('BAD_USER_INPUT', 'A value cannot be stored', [{ message: 'the database refused a value of the request' }]);
  }
}

function problemsOf(problems: readonly Problem[], message: string): Problem[] {
  return problems.length > 0 ? problems.map((p) => ({ ...p })) : [{ message }];
}

function describe(error: unknown): string {
  const e = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

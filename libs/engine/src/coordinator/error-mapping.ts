import { TransientDbError, UniqueViolation, isInvalidDataError } from '@weft/persistence';
import { MachineError, StoreError, WeftError } from '../index.js';
import { sanitizeText } from './storable.js';

/** Maps a machine rejection to the API's coded error: INVALID_REQUEST → BAD_USER_INPUT; RUN_FINISHED, RUN_ACTIVE, RUN_PAUSED → CONFLICT. */
export function toWeftError(err: MachineError): WeftError {
  switch (err.code) {
    case 'INVALID_REQUEST':
      return new WeftError('BAD_USER_INPUT', err.message);
    case 'RUN_FINISHED':
    case 'RUN_ACTIVE':
    case 'RUN_PAUSED':
      return new WeftError('CONFLICT', err.message);
  }
}

/** A user command's failure as a client-facing error: machine rejections and values the database refused; anything else as it is. */
export function userError(err: unknown, what: string): unknown {
  if (err instanceof MachineError) return toWeftError(err);
  if (isInvalidDataError(err)) return new WeftError('BAD_USER_INPUT', `${what} cannot be stored: ${sanitizeText(err.message, 500)}`);
  return err;
}

/** True for a failure worth retrying the whole event for: a store or connection fault, or a lost idempotency-key race. */
export function isTransient(err: unknown): boolean {
  if (err instanceof StoreError || err instanceof TransientDbError) return true;
  // Two starts with one idempotency key racing past ON CONFLICT (e.g. the winner rolled back and
  // retried): the next attempt finds the winner.
  return err instanceof UniqueViolation && err.constraint === 'runs_idempotency_key';
}

/** The message of any thrown value. */
export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

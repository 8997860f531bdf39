/**
 * The machine's errors (seed 000, step 4). Machine errors are permanent: the same event gives
 * the same answer. A {@link StoreError} is transient: the caller retries the event.
 */
export type MachineErrorCode = 'INVALID_REQUEST' | 'RUN_FINISHED' | 'RUN_ACTIVE';

/** A permanent rejection of an event; nothing is persisted. */
export class MachineError extends Error {
  constructor(
    readonly code: MachineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'MachineError';
  }
}

/** A failure of the Store (loading outputs or signals); transient, retry the event. */
export class StoreError extends Error {
  constructor(override readonly cause: unknown) {
    super(`statemachine store: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StoreError';
  }
}

/** Exhaustiveness guard for discriminated unions. */
export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}

/**
 * The machine's errors. Machine errors are permanent: the same event gives
 * the same answer. A {@link StoreError} is transient: the caller retries the event.
 */
export type MachineErrorCode = 'INVALID_REQUEST' | 'RUN_FINISHED' | 'RUN_ACTIVE' | 'RUN_PAUSED';

/** A permanent rejection of an event; nothing is persisted. */
export class MachineError extends Error {
  /** `code` says which kind of rejection; `message` says why, for the caller to show. */
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
  /** Wraps what the Store rejected with; its message is kept after `statemachine store: `. */
  constructor(override readonly cause: unknown) {
    super(`statemachine store: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StoreError';
  }
}

/**
 * Exhaustiveness guard for a switch over a discriminated union: reached only with a value the
 * types rule out.
 * @throws Error `unexpected value: <x as JSON>` always.
 */
export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}

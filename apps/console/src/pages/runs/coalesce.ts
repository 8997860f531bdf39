/** A call that many triggers share: see {@link coalesce}. */
export interface Coalesced {
  /** Asks for the call; it happens `delayMs` after the first ask not yet served. */
  trigger(): void;
  /** Drops a pending call (on unmount). */
  cancel(): void;
}

/**
 * Runs `fn` once `delayMs` after the first `trigger()`; the triggers that come while it is
 * pending join that one call. Unlike a debounce, a steady stream of triggers (a busy tenant)
 * still gets a call every `delayMs` instead of none until it goes quiet.
 */
export function coalesce(fn: () => void, delayMs: number, timers: Pick<typeof globalThis, 'setTimeout' | 'clearTimeout'> = globalThis): Coalesced {
  let pending: ReturnType<typeof setTimeout> | undefined;
  return {
    trigger() {
      if (pending !== undefined) return;
      pending = timers.setTimeout(() => {
        pending = undefined;
        fn();
      }, delayMs);
    },
    cancel() {
      if (pending !== undefined) timers.clearTimeout(pending);
      pending = undefined;
    },
  };
}

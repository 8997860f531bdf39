/**
 * Node's timers hold at most 2^31-1 ms (about 24.8 days): a longer delay is replaced by 1 ms, with
 * a TimeoutOverflowWarning. Tenant-controlled durations reach 365 days (the validator's
 * `MAX_DURATION_SECONDS`), so every such duration that becomes a Node timer goes through
 * {@link setLongTimeout}.
 */

/** The longest delay one Node timer holds, ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A pending {@link setLongTimeout}. */
export interface LongTimeout {
  /** Cancels it; harmless after it fired or when called twice. */
  clear(): void;
}

/**
 * Calls `fn` once after `ms` milliseconds, for any `ms`: a delay above {@link MAX_TIMER_MS} is
 * waited out as a chain of timers of at most that length each. A negative or NaN `ms` is 0 (as
 * for `setTimeout`); `Infinity` never fires. `chunkMs` (default {@link MAX_TIMER_MS}, clamped to
 * 1..MAX_TIMER_MS) is the longest single timer. The timers keep the process alive, as
 * `setTimeout`'s do.
 */
export function setLongTimeout(fn: () => void, ms: number, chunkMs = MAX_TIMER_MS): LongTimeout {
  const chunk = Math.min(MAX_TIMER_MS, Math.max(1, Math.floor(chunkMs)));
  let remaining = Number.isNaN(ms) || ms < 0 ? 0 : ms;
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const arm = (): void => {
    if (cleared || remaining === Infinity) return;
    const step = Math.min(remaining, chunk);
    remaining -= step;
    timer = setTimeout(remaining > 0 ? arm : fn, step);
  };
  arm();
  return {
    clear() {
      cleared = true;
      clearTimeout(timer);
    },
  };
}

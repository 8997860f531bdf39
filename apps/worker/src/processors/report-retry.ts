/** How the worker retries a report that failed: what the failure means, and the wait between tries. */

/** Times a report failing with an error of no known kind is tried before it counts as refused. */
export const UNKNOWN_REPORT_ATTEMPTS = 20;

/**
 * What a failed report means: `transient` (code TRANSIENT: the database was unavailable — retry
 * the same report while the lease is held), `refused` (any other code: a WeftError such as
 * BAD_USER_INPUT, INVALID_DATA, or a database error's SQLSTATE — the coordinator or the database
 * will never take it), or `unknown` (an error without a code: a library's own error class, a bug).
 */
export function reportErrorKind(err: unknown): 'transient' | 'refused' | 'unknown' {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (code === 'TRANSIENT') return 'transient';
  if (typeof code === 'string' && code !== '') return 'refused';
  return 'unknown';
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

import { randomBytes } from 'node:crypto';

/** A run's place in a trace: its own span (`traceparent` form) and the span it was started from. */
export interface RunTrace {
  /** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`: the run's span. */
  traceparent: string;
  /** The caller's span id, the run span's parent; null when the run starts a trace of its own. */
  callerSpan: string | null;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The parts of a valid W3C `traceparent` value, or undefined (malformed, version ff, all-zero ids). */
export function parseTraceparent(value: string | undefined | null): { traceId: string; spanId: string; flags: string } | undefined {
  const m = TRACEPARENT.exec((value ?? '').trim().toLowerCase());
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return undefined;
  return { traceId: m[2]!, spanId: m[3]!, flags: m[4]! };
}

/**
 * The trace of a new run: continued from `caller` (a `traceparent` value: same trace id and
 * flags, the caller's span as parent) when it is valid, else a new trace (sampled). A malformed
 * `caller` is ignored, as W3C Trace Context says.
 */
export function newRunTrace(caller?: string | null): RunTrace {
  const parent = parseTraceparent(caller);
  const spanId = randomBytes(8).toString('hex');
  if (parent) return { traceparent: `00-${parent.traceId}-${spanId}-${parent.flags}`, callerSpan: parent.spanId };
  return { traceparent: `00-${randomBytes(16).toString('hex')}-${spanId}-01`, callerSpan: null };
}

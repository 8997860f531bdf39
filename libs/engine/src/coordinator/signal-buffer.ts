import { SignalRepository, type Transaction } from '@weft/persistence';
import { WeftError, type Action, type BufferSignal } from '../index.js';

/** Default of {@link SignalBufferCaps.maxSignals}: unconsumed signals one run may buffer. */
export const DEFAULT_MAX_BUFFERED_SIGNALS = 1_000;
/** Default of {@link SignalBufferCaps.maxBytes}: 16 MiB, sixteen signals at the 1 MiB payload limit. */
export const DEFAULT_MAX_BUFFERED_SIGNAL_BYTES = 16 * 1024 * 1024;

/** How much a run may hold in signals sent before a node waited for them. */
export interface SignalBufferCaps {
  /** Unconsumed signals per run. */
  maxSignals: number;
  /** Bytes of their payloads' JSON text as stored, per run (a signal without payload counts 4, `null`). */
  maxBytes: number;
}

/**
 * Refuses a transition that would buffer a signal beyond the run's caps: when `actions` hold a
 * BufferSignal and the run already buffers `maxSignals` unconsumed signals, or its payload
 * would take the buffered bytes past `maxBytes`. Signals delivered to a waiting node are not
 * buffered and never refused. Call it before the actions are written, with the run row locked
 * by the event's transaction `m`: every signal of the run is written under that lock, so two
 * concurrent signals cannot both take the last place.
 * @throws WeftError CONFLICT naming the run, the cap and the current figures; the command then
 * rolls back and the run is unchanged.
 */
export async function refuseOverfullSignalBuffer(
  m: Transaction,
  tenantId: string,
  runId: string,
  actions: readonly Action[],
  caps: SignalBufferCaps,
): Promise<void> {
  const buffered = actions.find((a): a is BufferSignal => a.type === 'BufferSignal');
  if (!buffered) return;
  const now = await new SignalRepository(m).bufferOfRun(tenantId, runId, buffered.payload);
  const holds = `run ${runId} already buffers ${now.count} signal${now.count === 1 ? '' : 's'} not yet consumed (${now.bytes} bytes of payload)`;
  const wait = 'a WAIT_FOR_EVENT node of the run must consume buffered signals before more can be buffered';
  if (now.count + 1 > caps.maxSignals) {
    throw new WeftError('CONFLICT', `Signal refused: ${holds}, the most a run may buffer is ${caps.maxSignals} signals; ${wait}`);
  }
  if (now.bytes + now.incomingBytes > caps.maxBytes) {
    throw new WeftError(
      'CONFLICT',
      `Signal refused: ${holds}, and its ${now.incomingBytes} bytes would exceed the ${caps.maxBytes} bytes of payload a run may buffer; ${wait}`,
    );
  }
}

import type { JsonValue } from '../model/workflow-types.js';
import type { RunContext, BufferedSignal } from './state.js';
import type { Action } from './actions.js';

/** Evaluates `{{ }}` CEL templates in node specs and conditions (implemented by template/resolver.ts). */
export interface TemplateResolver {
  /** Resolves every string in `spec` (recursively); throws a TemplateError on a bad template. */
  resolve(spec: JsonValue, ctx: RunContext, now: Date): JsonValue;
}

/**
 * Read access to run data the machine loads on demand (seed 000 `Store`). Any rejection is
 * wrapped by the machine in a transient {@link StoreError}.
 */
export interface Store {
  /** The outputs of the given completed nodes, by node id. */
  outputs(nodeIds: string[]): Promise<Map<string, JsonValue>>;
  /**
   * The oldest buffered, unconsumed signal with that name, if any, skipping the ids in `skip`
   * (signals consumed earlier in the same transition, not yet persisted). An implementation that
   * ignores `skip` is safe but may leave a second waiter parked until the next signal.
   */
  pendingSignal(name: string, skip?: readonly string[]): Promise<BufferedSignal | undefined>;
}

/** The machine's collaborators; time and ids are injected (STYLE: no ambient clock or randomness). */
export interface Deps {
  templates: TemplateResolver;
  store: Store;
  now: () => Date;
  newId: () => string;
  /**
   * Largest value the machine may compute (a node's resolved input or wait spec, the run output
   * template's result), in UTF-16 code units of its JSON text; default
   * {@link DEFAULT_MAX_VALUE_BYTES} (1 MiB).
   */
  maxValueBytes?: number;
}

/** Default for {@link Deps.maxValueBytes}: 1 MiB. */
export const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;

/** The outcome of applying one event (seed 000 `Transition`). */
export interface Transition {
  actions: Action[];
  /** Why the event changed nothing, e.g. a duplicate or stale report. */
  ignored?: string;
  /** For SignalReceived: whether a waiting node consumed the signal (false: buffered). */
  signalDelivered?: boolean;
}

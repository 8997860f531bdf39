import type { JsonValue, RunStatus } from '../model/workflow-types.js';
import type { TemplateResolver } from '../template/template-resolver.js';
import type { BufferedSignal } from './state.js';
import type { Action } from './actions.js';

/** Re-exported so the machine's collaborators are all named here; defined in template/. */
export type { TemplateResolver };

/**
 * Read access to run data the machine loads on demand. Any rejection is
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
  /**
   * The outputs of a `for_each` node's iterations, in element order (null for one without
   * output) — or, when their JSON text adds up to more than `maxChars`, only that total
   * (`{tooLarge}`), measured without loading them (they may add up to gigabytes).
   */
  iterationOutputs(nodeId: string, maxChars: number): Promise<JsonValue[] | { tooLarge: number }>;
  /** The stored (resolved) input of a task of this run, or undefined when there is no such task. */
  taskInput(taskId: string): Promise<JsonValue | undefined>;
  /** The child run a SUBWORKFLOW task started for `attempt`, if any. */
  childRun(taskId: string, attempt: number): Promise<ChildRun | undefined>;
  /** How many runs the tree of this run holds: the run at its top and every descendant. */
  treeRuns(): Promise<number>;
  /**
   * The version of `workflowId` a new child run would run: `version` if given, else the
   * workflow's default (pinned, else latest); `{error}` saying why none can (unknown workflow or
   * version, deprecated version) — the same rules as starting a run over the API.
   */
  startableVersion(workflowId: string, version?: number): Promise<{ version: number } | { error: string }>;
}

/**
 * What the machine reads of a child run: its id, status, output (when SUCCEEDED) and error, and
 * for a failed child the first of its tasks that failed (node id and error), so the parent's
 * reason can carry the cause rather than only the count of failed tasks.
 */
export interface ChildRun {
  id: string;
  status: RunStatus;
  output: JsonValue | null;
  error: string | null;
  failedTask?: { nodeId: string; error: string | null };
  /**
   * False while the child run is created but its RunStarted not applied yet (the coordinator
   * defers starting grandchildren to their own transactions); then its start fields follow.
   */
  started: boolean;
  workflowId: string;
  version: number;
  input: JsonValue;
  config: JsonValue;
}

/** The machine's collaborators. Time and ids are injected so the machine never reads a clock or draws a random number: the same snapshot and event give the same transition. */
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
  /**
   * The deepest a chain of SUBWORKFLOW child runs may go: a run at this depth cannot start a
   * child (default {@link DEFAULT_MAX_SUBWORKFLOW_DEPTH}, 10).
   */
  maxSubworkflowDepth?: number;
  /**
   * The most runs one tree of child runs may hold, its top run included: a SUBWORKFLOW node of a
   * tree that holds this many cannot start a child (default {@link DEFAULT_MAX_RUN_TREE}, 1,000).
   */
  maxRunTree?: number;
}

/** Default for {@link Deps.maxRunTree}. */
export const DEFAULT_MAX_RUN_TREE = 1_000;

/** Default for {@link Deps.maxSubworkflowDepth}. */
export const DEFAULT_MAX_SUBWORKFLOW_DEPTH = 10;

/** Default for {@link Deps.maxValueBytes}: 1 MiB. */
export const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;

/** The outcome of applying one event: the actions to persist, in order, and what else the caller needs to know. */
export interface Transition {
  actions: Action[];
  /** Why the event changed nothing, e.g. a duplicate or stale report. */
  ignored?: string;
  /** For SignalReceived: whether a waiting node consumed the signal (false: buffered). */
  signalDelivered?: boolean;
  /**
   * For an ignored TimerFired whose task still needs a timer (a retry not due yet): when it must
   * fire. Without it the coordinator clears the timer of an ignored TimerFired.
   */
  rearmAt?: Date;
}

import { TaskStatus, type JsonValue } from './workflow-types.js';

/**
 * What templates read while one run is being decided: the run's input and config, plus a cache
 * of completed nodes' outputs that the state machine fills on demand. Only input and config are
 * stored on the run row; outputs live on task rows and are loaded only when a template names
 * them.
 */
export interface RunContext {
  input: JsonValue;
  config: JsonValue;
  /** Loaded outputs, by node id. */
  tasks: Map<string, StepResult>;
  /**
   * Every reached node's status (and error, when known), by node id, so templates can read
   * `tasks.<id>.status` and `tasks.<id>.error` of nodes whose outputs were not loaded (skipped,
   * failed, waiting…). The machine passes its `RunSnapshot.nodes` here; absent, templates see
   * only the nodes in `tasks`.
   */
  reached?: ReadonlyMap<string, NodeStatus>;
  /**
   * Extra top-level variables of one resolution: a `for_each` iteration's element under its
   * alias, with `<as>Index` and `<as>Count`. They shadow nothing: validation refuses an alias
   * named input, config, tasks or system.
   */
  locals?: Readonly<Record<string, JsonValue>>;
  /**
   * What the definition's `finally` step reads as `run`: the run's id, its decided status and
   * error. Set only once the outcome is decided; validation lets no other template read `run`.
   */
  run?: RunView;
}

/** `run` in the templates of a `finally` step. */
export interface RunView {
  id: string;
  /** The decided status: SUCCEEDED, FAILED, CANCELLED or TIMED_OUT. */
  status: string;
  /** The decided error, or null for a success. */
  error: string | null;
}

/** What templates read of a reached node without loading its output. */
export interface NodeStatus {
  status: TaskStatus;
  /** Why the node failed (its last failure), when known. */
  error?: string;
  /** A `for_each` node's iterations in element order (templates read `failedIterations` of them). */
  iterations?: ReadonlyArray<{ status: TaskStatus }>;
  /** A DO_WHILE node's iteration (0-based) and previous iteration's output (templates read both). */
  loop?: { iteration: number; previous?: JsonValue };
}

/** The indexes of the iterations that failed for good (status FAILED), ascending. */
export function failedIterations(iterations: ReadonlyArray<{ status: TaskStatus }>): number[] {
  const out: number[] = [];
  iterations.forEach((it, i) => {
    if (it.status === TaskStatus.Failed) out.push(i);
  });
  return out;
}

/** A node's result as templates see it under `tasks.<id>`: status, output and failure reason. */
export interface StepResult {
  status: TaskStatus;
  output: JsonValue;
  error?: string;
}

import type { JsonValue } from '../model/workflow-types.js';

/**
 * Events: things that happened to a run; `Machine.apply` consumes one at a time.
 * External events sent to WAIT_FOR_EVENT nodes are called signals.
 */
export type RunEvent =
  RunStarted | NodeCompleted | NodeFailed | TimerFired | SignalReceived | RunRetried | RunCancelled | RunPaused | RunResumed | RunTimedOut | StartTimedOut;

/** A new run was created; `startNodeId` optionally overrides the definition's entry node. */
export interface RunStarted {
  type: 'RunStarted';
  startNodeId?: string;
}

/** A worker finished a task attempt successfully. `attempt` is 0-based. */
export interface NodeCompleted {
  type: 'NodeCompleted';
  taskId: string;
  nodeId: string;
  attempt: number;
  output: JsonValue;
}

/** A worker finished a task attempt with an error (or gave up on it). */
export interface NodeFailed {
  type: 'NodeFailed';
  taskId: string;
  nodeId: string;
  attempt: number;
  error: string;
  /** False when the failure can never succeed on retry (e.g. a bad spec): fail for good now. */
  retryable?: boolean;
}

/** A waiting node's wake-up time passed: a WAIT's timer or a WAIT_FOR_EVENT's timeout. */
export interface TimerFired {
  type: 'TimerFired';
  taskId: string;
  nodeId: string;
}

/** An external signal was sent to the run. */
export interface SignalReceived {
  type: 'SignalReceived';
  name: string;
  payload?: JsonValue;
}

/** The run restarts from a node on `version`, optionally with new input or config. */
export interface RunRetried {
  type: 'RunRetried';
  fromNodeId: string;
  version: number;
  input?: JsonValue;
  config?: JsonValue;
  /**
   * `fromNodeId` is a `for_each` node: run again only its FAILED, SKIPPED and CANCELLED
   * iterations (with their stored inputs), keep its COMPLETED ones, and reset its descendants.
   */
  failedIterationsOnly?: boolean;
  /** The bulk action the event comes from (kept in the history; the machine ignores it). */
  batchId?: string;
}

/** A user cancelled the run. */
export interface RunCancelled {
  type: 'RunCancelled';
  reason?: string;
  /** The bulk action the event comes from (kept in the history; the machine ignores it). */
  batchId?: string;
}

/** An operator paused the run (or its parent run was paused): nothing of it is dispatched until it is resumed. */
export interface RunPaused {
  type: 'RunPaused';
  reason?: string;
  /** Set when the pause came down from the run's parent run. */
  byParent?: boolean;
  /** The bulk action the event comes from (kept in the history; the machine ignores it). */
  batchId?: string;
}

/** An operator resumed a paused run (or its parent run was resumed). */
export interface RunResumed {
  type: 'RunResumed';
  reason?: string;
  /** The bulk action the event comes from (kept in the history; the machine ignores it). */
  batchId?: string;
}

/** The run's deadline (`timeout_seconds`) passed, by the database's clock. */
export interface RunTimedOut {
  type: 'RunTimedOut';
}

/**
 * No worker started attempt `attempt` of a task within its node's `schedule_to_start_seconds`
 * (by the database's clock): the attempt fails as a NodeFailed would, unless it started meanwhile.
 */
export interface StartTimedOut {
  type: 'StartTimedOut';
  taskId: string;
  nodeId: string;
  attempt: number;
}

/** The `type` tag of a {@link RunEvent}. */
export type RunEventType = RunEvent['type'];

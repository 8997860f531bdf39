/**
 * Run and task statuses and node types. `CANCELLED` marks what a user stopped, apart from what
 * failed, so a cancelled run never reads as a failure.
 */

/** A JSON value as stored in PostgreSQL `jsonb` and exchanged over the API. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * The statuses of a run: QUEUED while it waits for a slot of its concurrency key (no task yet),
 * PENDING until started, RUNNING, PAUSED (active, but nothing of it is dispatched until it is
 * resumed), then one of four terminal ones (TIMED_OUT: its `timeout_seconds` passed).
 */
export const RunStatus = {
  Queued: 'QUEUED',
  Pending: 'PENDING',
  Running: 'RUNNING',
  Paused: 'PAUSED',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
  Cancelled: 'CANCELLED',
  TimedOut: 'TIMED_OUT',
} as const;
/** One of the {@link RunStatus} values. */
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** True when no further node may be scheduled for a run in this status. */
export function isRunTerminal(s: RunStatus): boolean {
  return s === RunStatus.Succeeded || s === RunStatus.Failed || s === RunStatus.Cancelled || s === RunStatus.TimedOut;
}

/** The statuses of a task (one reached node, or one `for_each` iteration). */
export const TaskStatus = {
  Pending: 'PENDING',
  Queued: 'QUEUED',
  Running: 'RUNNING',
  Completed: 'COMPLETED',
  Failed: 'FAILED',
  /** A node on a branch that was not taken (an unselected SWITCH edge, or downstream of one). */
  Skipped: 'SKIPPED',
  /** A WAIT or WAIT_FOR_EVENT node parked until its timer fires or its signal arrives. */
  Waiting: 'WAITING',
  /** A task stopped by a user's cancel. */
  Cancelled: 'CANCELLED',
} as const;
/** One of the {@link TaskStatus} values. */
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

/** True for a task with (or on its way to) a worker: PENDING, QUEUED or RUNNING. */
export function isWithWorker(s: string): boolean {
  return s === TaskStatus.Pending || s === TaskStatus.Queued || s === TaskStatus.Running;
}

/** True when the task finished successfully. */
export function isTaskCompleted(s: TaskStatus): boolean {
  return s === TaskStatus.Completed;
}

/** The node types a definition may use. */
export const NodeType = {
  Code: 'CODE',
  Http: 'HTTP',
  Switch: 'SWITCH',
  Fork: 'FORK',
  Join: 'JOIN',
  Wait: 'WAIT',
  WaitForEvent: 'WAIT_FOR_EVENT',
  Subworkflow: 'SUBWORKFLOW',
  /** Runs its `spec.body` (a small DAG) again while its `spec.condition` holds (model/do-while.ts). */
  DoWhile: 'DO_WHILE',
} as const;
/** One of the {@link NodeType} values. */
export type NodeType = (typeof NodeType)[keyof typeof NodeType];

/** Every node type, in declaration order (for messages and checks). */
export const NODE_TYPES: readonly NodeType[] = Object.values(NodeType);

/** True for nodes the coordinator resolves inline instead of dispatching (SWITCH, FORK, JOIN). */
export function isControlFlow(t: NodeType): boolean {
  return t === NodeType.Switch || t === NodeType.Fork || t === NodeType.Join;
}

/**
 * True for the node types a worker executes (HTTP, CODE): only they are dispatched to a queue,
 * produce an output of their own (payload hygiene) and fan out with `for_each`.
 */
export function isWorkerType(t: string): boolean {
  return t === NodeType.Http || t === NodeType.Code;
}

/** True for nodes that park in WAITING until a timer or signal resolves them. */
export function isWait(t: NodeType): boolean {
  return t === NodeType.Wait || t === NodeType.WaitForEvent;
}

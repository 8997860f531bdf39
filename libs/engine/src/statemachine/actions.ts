import type { SwitchDecision } from '../model/switch-decision.js';
import type { WorkflowNode } from '../model/workflow-definition.js';
import type { JsonValue, RunStatus, TaskStatus } from '../model/workflow-types.js';

/**
 * Actions: state changes the machine decided on. The coordinator persists
 * them in order; `applyAction` (in machine.ts) evolves the in-memory snapshot the same way.
 */
export type Action =
  | CreateTask
  | DispatchTask
  | CompleteTask
  | FailTask
  | RetryTask
  | RecordBranches
  | ResolveWait
  | BufferSignal
  | ConsumeSignal
  | ReopenRun
  | CancelTasks
  | FinishRun
  | DecideRun
  | CreateIterations
  | ReleaseIteration
  | SkipIterations
  | ReopenIterations
  | NextLoopIteration
  | StartChildRun
  | RetryChild
  | PauseRun
  | ResumeRun
  | ArmDeadline;

/**
 * Records a reached node as a task: PENDING (followed by DispatchTask), WAITING, or already
 * resolved (COMPLETED for control nodes, SKIPPED, FAILED when its input cannot be resolved).
 */
export interface CreateTask {
  type: 'CreateTask';
  taskId: string;
  node: WorkflowNode;
  status: TaskStatus;
  input?: JsonValue;
  output?: JsonValue;
  error?: string;
  /** SWITCH decision: the selected successors. */
  branches?: string[];
  /** SWITCH: the decision behind `branches` (for the run history; the task stores `branches`). */
  decision?: SwitchDecision;
  /** WAITING: timer or timeout. */
  wakeAt?: Date;
  /** WAITING on WAIT_FOR_EVENT. */
  awaitedSignal?: string;
  /**
   * A DO_WHILE body node's task: the loop iteration it belongs to (set by `Step.emit`). A DO_WHILE
   * node's own task (RUNNING, never dispatched): 0, its first iteration.
   */
  loopIteration?: number;
}

/**
 * The resolved flow limits of one task of a node with `concurrency` or `rate_limit` (HTTP and
 * CODE only). Each key is the group the task counts against: the resolved `key` template (a
 * string of at most 256 characters; a number resolved to its text), or `null` when the node has
 * no key, for the coordinator to fill its default (one group per workflow and node).
 * `rate.perSeconds` is the node's `rate_limit.per_seconds`.
 */
export interface TaskFlow {
  concurrency?: { key: string | null; limit: number };
  rate?: { key: string | null; limit: number; perSeconds: number };
}

/**
 * Sends a PENDING task attempt to a worker, no earlier than `notBefore`. `flow` is set on attempt
 * 0 only, and only for a node with `concurrency` or `rate_limit`: the keys are resolved once,
 * when the node is activated, with its input. A retry (RetryTask) carries no `flow`: the
 * coordinator stores the keys on the task row at this first dispatch and reuses them.
 */
export interface DispatchTask {
  type: 'DispatchTask';
  taskId: string;
  node: WorkflowNode;
  attempt: number;
  input: JsonValue;
  notBefore: Date;
  flow?: TaskFlow;
}

/** An active task attempt finished successfully. */
export interface CompleteTask {
  type: 'CompleteTask';
  taskId: string;
  nodeId: string;
  attempt: number;
  output: JsonValue;
}

/** An active task attempt failed for good. */
export interface FailTask {
  type: 'FailTask';
  taskId: string;
  nodeId: string;
  attempt: number;
  reason: string;
}

/**
 * A failed attempt is retried: the task returns to PENDING with `attempt + 1` and is
 * re-dispatched with its stored input at `notBefore`. It carries no {@link TaskFlow}: the retry
 * counts against the keys stored on the task row at its first dispatch.
 */
export interface RetryTask {
  type: 'RetryTask';
  taskId: string;
  nodeId: string;
  /** The attempt that failed. */
  attempt: number;
  reason: string;
  notBefore: Date;
  /**
   * Set by a resume of a node whose attempts ran out (`on_exhausted: pause`): the attempts the
   * task may make in all from now on (its attempts so far plus the node's `max_attempts`).
   */
  attemptLimit?: number;
}

/**
 * Records which successors a finished non-SWITCH node routes to: after it completed, the targets of its normal edges whose
 * condition held; after it failed for good, the targets of its `on_error` edges whose condition
 * held. Emitted once, in the event that finished the node; never re-evaluated.
 */
export interface RecordBranches {
  type: 'RecordBranches';
  taskId: string;
  nodeId: string;
  branches: string[];
}

/** A WAITING node completed (timer fired, signal arrived) or failed (event timeout). */
export interface ResolveWait {
  type: 'ResolveWait';
  taskId: string;
  nodeId: string;
  status: TaskStatus;
  output?: JsonValue;
  reason?: string;
}

/** Keeps a signal no node is waiting for yet. */
export interface BufferSignal {
  type: 'BufferSignal';
  name: string;
  payload: JsonValue;
}

/** Marks a buffered signal as used by the WAIT_FOR_EVENT task `taskId`. */
export interface ConsumeSignal {
  type: 'ConsumeSignal';
  signalId: string;
  taskId: string;
}

/**
 * Puts a finished run back to RUNNING for a retry: the reset nodes' tasks are deleted and the
 * run moves to `version` with the given input and config.
 */
export interface ReopenRun {
  type: 'ReopenRun';
  version: number;
  input: JsonValue;
  config: JsonValue;
  resetNodes: string[];
}

/** Stops every task that is still active, with status CANCELLED. */
export interface CancelTasks {
  type: 'CancelTasks';
  reason: string;
}

/** Moves the run to a terminal status; `output` is the run output on success. */
export interface FinishRun {
  type: 'FinishRun';
  status: RunStatus;
  reason?: string;
  output?: JsonValue;
}

/**
 * The run's outcome is decided and its definition has a `finally` step: the outcome is recorded
 * (the run stays RUNNING, and a paused run runs again) and the step is dispatched; a FinishRun
 * with the outcome follows once the step ended (see finally.ts).
 */
export interface DecideRun {
  type: 'DecideRun';
  /** SUCCEEDED, FAILED, CANCELLED or TIMED_OUT. */
  status: RunStatus;
  reason?: string;
  /** The run output on success. */
  output?: JsonValue;
}

/**
 * A `for_each` node fans out: its aggregate task `taskId` (RUNNING, never dispatched)
 * and one task per element, in element order, each with its resolved input. The first `dispatch`
 * iterations are PENDING and dispatched at `notBefore`; the others are WAITING for a
 * `max_concurrency` slot. A node with `concurrency` or `rate_limit` gives each iteration its own
 * `flow`, resolved with its element (absent otherwise); iterations are dispatched here or by
 * ReleaseIteration, never by a DispatchTask, so the coordinator stores each iteration's keys on
 * its task row here and reuses them for its dispatch, its release and its retries.
 */
export interface CreateIterations {
  type: 'CreateIterations';
  taskId: string;
  node: WorkflowNode;
  iterations: Array<{ taskId: string; input: JsonValue; flow?: TaskFlow }>;
  dispatch: number;
  notBefore: Date;
  /** A `for_each` node in a DO_WHILE body: the loop iteration its tasks belong to (set by `Step.emit`). */
  loopIteration?: number;
}

/** A WAITING iteration gets a freed `max_concurrency` slot: PENDING, dispatched with its stored input. */
export interface ReleaseIteration {
  type: 'ReleaseIteration';
  taskId: string;
  nodeId: string;
  iteration: number;
  notBefore: Date;
}

/** Iterations still WAITING for a slot are never started (more iterations failed for good than `tolerated_failures` allows, or the run ended): SKIPPED. */
export interface SkipIterations {
  type: 'SkipIterations';
  nodeId: string;
  taskIds: string[];
  reason: string;
}

/**
 * A retry with `failedIterationsOnly`: the aggregate task `taskId` of `for_each` node `nodeId`
 * runs again (RUNNING, its output, error and recorded branches cleared), and so do `iterations` (its FAILED, SKIPPED
 * and CANCELLED ones): each goes back to WAITING at `attempt + 1` with its stored input, error
 * cleared, and may make `attemptLimit` attempts in all (its node's `max_attempts` more). The
 * COMPLETED iterations keep their outputs. ReleaseIteration actions then dispatch the first
 * `max_concurrency` of them.
 */
export interface ReopenIterations {
  type: 'ReopenIterations';
  taskId: string;
  nodeId: string;
  iterations: Array<{ taskId: string; iteration: number; attempt: number; attemptLimit: number }>;
}

/**
 * DO_WHILE node `nodeId` (task `taskId`, RUNNING) runs its body again: the tasks of its body
 * nodes `bodyNodeIds` so far are kept (archived, readable in the API and history, never again in
 * the snapshot), the loop moves to `iteration` with `previous` (the iteration just ended's
 * output), and the body's sources are activated anew after this action.
 */
export interface NextLoopIteration {
  type: 'NextLoopIteration';
  taskId: string;
  nodeId: string;
  iteration: number;
  previous: JsonValue;
  bodyNodeIds: string[];
}

/**
 * A WAITING SUBWORKFLOW task starts its child run `childRunId` for `attempt`: same
 * tenant, `workflowId` at `version`, with `input` and `config`. The coordinator creates the run
 * and applies its RunStarted in the same transaction.
 */
export interface StartChildRun {
  type: 'StartChildRun';
  taskId: string;
  nodeId: string;
  attempt: number;
  childRunId: string;
  workflowId: string;
  version: number;
  input: JsonValue;
  config: JsonValue;
}

/**
 * A SUBWORKFLOW task's child run failed and the retry policy allows another attempt: the task
 * stays WAITING with `attempt + 1` and wakes at `notBefore`, when the next child run starts.
 */
export interface RetryChild {
  type: 'RetryChild';
  taskId: string;
  nodeId: string;
  /** The attempt whose child failed. */
  attempt: number;
  reason: string;
  notBefore: Date;
  /** Set by a resume of a node whose attempts ran out (`on_exhausted: pause`), as on {@link RetryTask}: the task, FAILED, waits again. */
  attemptLimit?: number;
}

/**
 * The run pauses (status PAUSED): its attempts already with workers finish, its timers and
 * signals go on, but nothing of it is dispatched and no child run of it starts until a
 * {@link ResumeRun}. `reason` is kept as the run's pause reason.
 */
export interface PauseRun {
  type: 'PauseRun';
  reason: string;
  /** Who paused it: an operator, its parent run's pause, or a node whose attempts ran out. */
  cause: PauseCause;
}

/** See {@link PauseRun.cause}. */
export type PauseCause = 'operator' | 'parent' | 'exhausted';

/** A paused run runs again (status RUNNING): what waited for the resume is dispatched. */
export interface ResumeRun {
  type: 'ResumeRun';
}

/**
 * Sets the run's deadline (its definition's `timeout_seconds` after the event's now), or clears
 * it (`deadlineAt` null: the version the run now runs has none). Emitted when the run starts and
 * at each retry.
 */
export interface ArmDeadline {
  type: 'ArmDeadline';
  deadlineAt: Date | null;
}

/** The `type` tag of an {@link Action}. */
export type ActionType = Action['type'];

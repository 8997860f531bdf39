import { RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';

/**
 * What templates read (seed 002 "run context"): the run's input and config, plus a cache of
 * completed nodes' outputs filled on demand through the Store. Only input and config are
 * persisted on the run row; outputs live on task rows.
 */
export interface RunContext {
  input: JsonValue;
  config: JsonValue;
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
   * alias, with `<as>Index` and `<as>Count` (DESIGN §6). They shadow nothing: validation refuses
   * an alias named input, config, tasks or system.
   */
  locals?: Readonly<Record<string, JsonValue>>;
}

/** What templates read of a reached node without loading its output. */
export interface NodeStatus {
  status: TaskStatus;
  /** Why the node failed (its last failure), when known. */
  error?: string;
}

/** A node's result as templates see it under `tasks.<id>`. */
export interface StepResult {
  status: TaskStatus;
  output: JsonValue;
  error?: string;
}

/** Per reached node, only what routing needs (seed 000 `NodeState`): no input, no output. */
export interface NodeState {
  taskId: string;
  status: TaskStatus;
  /** 0-based attempt of the current task. */
  attempt: number;
  /** Successors a completed SWITCH selected; `undefined` when never recorded. */
  branches?: string[];
  /** The signal a WAITING WAIT_FOR_EVENT node waits for. */
  awaitedSignal?: string;
  /**
   * When a WAITING SUBWORKFLOW task's retry is due (its RetryChild's `notBefore`): a timer that
   * fires earlier (a late wake-up meant for the failed child) must not start the next child.
   */
  retryAt?: Date;
  /**
   * Why the node failed, when known: set by the actions that fail it (CreateTask with an error,
   * FailTask, a failed ResolveWait). A snapshot loaded from storage may fill it from the task row.
   */
  error?: string;
  /**
   * A `for_each` node's iterations in element order (this state is then the node's aggregate
   * task: RUNNING until every iteration settled). Each has its own task, status, attempt and
   * error; WAITING means held back by `max_concurrency`.
   */
  iterations?: NodeState[];
}

/** The snapshot of one run the machine decides on; actions evolve it as they are emitted. */
export interface RunSnapshot {
  id: string;
  workflowId: string;
  version: number;
  status: RunStatus;
  context: RunContext;
  /** Every node that has been reached, i.e. that has a task, by node id. */
  nodes: Map<string, NodeState>;
  /** 0 for a run started over the API, the parent's depth + 1 for a SUBWORKFLOW's child run. */
  depth?: number;
}

/** A signal buffered for a run before any node waited for it. */
export interface BufferedSignal {
  id: string;
  payload: JsonValue;
}

/** Builds the snapshot of a run that has just been created (status RUNNING, no nodes). */
export function newRunSnapshot(
  id: string,
  workflowId: string,
  version: number,
  input: JsonValue,
  config: JsonValue,
): RunSnapshot {
  return {
    id,
    workflowId,
    version,
    status: RunStatus.Running,
    context: { input, config, tasks: new Map() },
    nodes: new Map(),
  };
}

/** The node's task is with (or on its way to) a worker. */
export function isTaskActive(n: NodeState): boolean {
  return n.status === TaskStatus.Pending || n.status === TaskStatus.Queued || n.status === TaskStatus.Running;
}

/** The node still has to finish before the run can. */
export function isNodeActive(n: NodeState): boolean {
  return isTaskActive(n) || n.status === TaskStatus.Waiting;
}

/**
 * The state a worker report for (`nodeId`, `taskId`) addresses: the node's own task, or, for a
 * `for_each` node, the iteration with that task id (never the aggregate task, which no worker
 * runs). Undefined when neither matches.
 */
export function reportTarget(run: RunSnapshot, nodeId: string, taskId: string): NodeState | undefined {
  const n = run.nodes.get(nodeId);
  if (!n) return undefined;
  if (n.iterations === undefined) return n.taskId === taskId ? n : undefined;
  return n.iterations.find((it) => it.taskId === taskId);
}

/** Fencing: a report is for this node's current task attempt (seed 000 `matches`). */
export function matchesAttempt(n: NodeState | undefined, taskId: string, attempt: number): n is NodeState {
  return n !== undefined && n.taskId === taskId && n.attempt === attempt;
}

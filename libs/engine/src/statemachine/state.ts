import type { RunContext } from '../model/run-context.js';
import { isWithWorker, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';

/** Per reached node, only what routing needs: no input, no output (those stay on the task rows). */
export interface NodeState {
  taskId: string;
  status: TaskStatus;
  /** 0-based attempt of the current task. */
  attempt: number;
  /**
   * The attempts the task may make in all, when a resume granted more than its node's
   * `retry.max_attempts` (`on_exhausted: pause`); undefined: `max_attempts`.
   */
  attemptLimit?: number;
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
  /**
   * A DO_WHILE node's loop: the iteration running (0-based; the last one run once it ended) and
   * the previous iteration's output (null in the first). Its body nodes' states in
   * {@link RunSnapshot.nodes} are the current iteration's.
   */
  loop?: LoopState;
}

/**
 * See {@link NodeState.loop}. `previous` is undefined until loaded: a snapshot read from storage
 * leaves it there (it may be large) and the machine loads it when a template names the loop.
 */
export interface LoopState {
  iteration: number;
  previous?: JsonValue;
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
  /** When the run times out (`timeout_seconds`); undefined without a deadline. */
  deadlineAt?: Date;
  /**
   * The outcome the run will end with, recorded while its definition's `finally` step runs (the
   * run stays RUNNING until then); undefined otherwise. See finally.ts.
   */
  decided?: DecidedOutcome;
}

/** A run's decided outcome, kept while its `finally` step runs. */
export interface DecidedOutcome {
  /** SUCCEEDED, FAILED, CANCELLED or TIMED_OUT. */
  status: RunStatus;
  /** The run's error, absent for a success. */
  reason?: string;
  /** The run output, for a success. */
  output?: JsonValue;
}

/** A signal buffered for a run before any node waited for it. */
export interface BufferedSignal {
  id: string;
  payload: JsonValue;
}

/** Builds the snapshot of a run that has just been created (status RUNNING, no nodes). */
export function newRunSnapshot(id: string, workflowId: string, version: number, input: JsonValue, config: JsonValue): RunSnapshot {
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
  return isWithWorker(n.status);
}

/** The node still has to finish before the run can. */
export function isNodeActive(n: NodeState): boolean {
  return isTaskActive(n) || n.status === TaskStatus.Waiting;
}

/**
 * The state a worker report for (`nodeId`, `taskId`) addresses: the node's own task, or, for a
 * `for_each` node, the iteration with that task id (never the aggregate task, which no worker
 * runs). Undefined when neither matches, and always for a DO_WHILE node (its task runs no worker).
 */
export function reportTarget(run: RunSnapshot, nodeId: string, taskId: string): NodeState | undefined {
  const n = run.nodes.get(nodeId);
  // A DO_WHILE's own task is never dispatched: no worker report addresses it.
  if (!n || n.loop !== undefined) return undefined;
  if (n.iterations === undefined) return n.taskId === taskId ? n : undefined;
  return n.iterations.find((it) => it.taskId === taskId);
}

/**
 * Fencing: true when a report for (`taskId`, `attempt`) addresses `n`'s current task attempt;
 * anything else (a stale attempt, another task, no state) is false.
 */
export function matchesAttempt(n: NodeState | undefined, taskId: string, attempt: number): n is NodeState {
  return n !== undefined && n.taskId === taskId && n.attempt === attempt;
}

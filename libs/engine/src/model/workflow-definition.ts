import { NodeType, type JsonValue } from './workflow-types.js';

/**
 * Retry policy of a worker node: `max_attempts` counts every execution,
 * including the first; attempt n (1-based retry) waits `backoff_seconds * 2^(n-1)` seconds,
 * capped at {@link MAX_RETRY_BACKOFF_MS}.
 */
export interface RetryPolicy {
  max_attempts: number;
  backoff_seconds?: number;
  /**
   * HTTP only: statuses (`404`, `"404"`) and classes (`"4xx"`, `"5xx"`) whose failed attempt fails
   * for good at once; a class never matches 408, 425 or 429 (see model/retry-policy.ts).
   */
  non_retryable?: Array<number | string>;
}

/** A node of the workflow DAG, exactly as written in the definition's YAML/JSON. */
export interface WorkflowNode {
  node_id: string;
  name?: string;
  type: NodeType;
  /** CODE only: `python`, `js` or `node`. */
  runtime?: string;
  /** Free-form, type-dependent; any string in it may hold `{{ }}` templates. */
  spec?: JsonValue;
  retry?: RetryPolicy;
  /** Routes the node to a dedicated worker pool instead of its runtime's queue. */
  queue?: string;
  /** Only these top-level fields of an object output are stored and passed on. */
  output_keep?: string[];
  /** These top-level fields of an object output are dropped before it is stored. */
  output_drop?: string[];
  /** Input and output stay out of the run history and are redacted in the API; successors still get them. */
  sensitive?: boolean;
  /**
   * Dynamic fan-out, HTTP and CODE nodes only: a `{{ }}` template
   * giving an array; the node runs one task (iteration) per element.
   */
  for_each?: string;
  /** The name an iteration's spec templates read its element under (default `item`), plus `<as>Index` and `<as>Count`. */
  as?: string;
  /** At most this many iterations of a `for_each` node are dispatched at a time (default: all). */
  max_concurrency?: number;
  /** With `for_each`: merge the iteration outputs field by field instead of listing them (same reducers as a JOIN). */
  reducers?: { [field: string]: string };
  /**
   * With `for_each`: how many iterations may fail for good while the node still completes (their
   * outputs `null`): an integer, or `"P%"` of the elements rounded down (model/tolerated-failures.ts).
   * Default 0: the first failure skips the iterations not started yet and fails the node.
   */
  tolerated_failures?: number | string;
  /** HTTP and CODE only: at most `limit` of this node's tasks run at once per key, across runs. */
  concurrency?: NodeConcurrency;
  /** HTTP and CODE only: at most `limit` of this node's tasks start per `per_seconds` per key, across runs. */
  rate_limit?: NodeRateLimit;
  /**
   * HTTP, CODE and SUBWORKFLOW only, not with `for_each`: what the node's last failed attempt does. `fail`
   * (default): the node fails for good and routing goes on. `pause`: the task stays FAILED, no
   * error edge is taken, and the run pauses until a resume grants the node `max_attempts` more.
   */
  on_exhausted?: OnExhausted;
  /**
   * HTTP and CODE only: an attempt no worker started this many seconds (1 to
   * {@link MAX_DURATION_SECONDS}) after it became ready (after its retry backoff; time held by
   * flow control counts, time its run was paused does not) fails with `not started within N s`,
   * and the retry policy applies.
   */
  schedule_to_start_seconds?: number;
}

/** What a node's last failed attempt does: see {@link WorkflowNode.on_exhausted}. */
export type OnExhausted = 'fail' | 'pause';

/** The values of a node's `on_exhausted`. */
export const ON_EXHAUSTED: readonly OnExhausted[] = ['fail', 'pause'];

/**
 * A node's `concurrency`: `key`, a `{{ }}` template in the scope of the node's spec (resolved to a
 * string or number when the node, or each `for_each` iteration, is activated); without it, one
 * group per workflow and node. `limit` from 1 to 1,000.
 */
export interface NodeConcurrency {
  key?: string;
  limit: number;
}

/**
 * A node's `rate_limit`: at most `limit` (1 to 100,000) task starts per `per_seconds` (1 to
 * 86,400) per `key`, a template resolved as a node's {@link NodeConcurrency} key is.
 */
export interface NodeRateLimit {
  key?: string;
  limit: number;
  per_seconds: number;
}

/** What a new run does when its concurrency group is full: wait, cancel itself, or cancel the oldest run of the group. */
export type ConcurrencyStrategy = 'queue' | 'cancel_newest' | 'cancel_oldest';
/** Whom a run's concurrency group spans: the workflow's runs, or every run of the tenant with the same key. */
export type ConcurrencyScope = 'workflow' | 'tenant';

/**
 * The definition's `concurrency`: at most `limit` (1 to 1,000) runs of a group active at once.
 * `key` is a `{{ }}` template over `input` and `config` only, resolved once when the run starts;
 * without it, one group. `strategy` defaults to `queue`, `scope` to `workflow`.
 */
export interface RunConcurrency {
  key?: string;
  limit: number;
  strategy?: ConcurrencyStrategy;
  scope?: ConcurrencyScope;
}

/** The most elements a `for_each` may fan out to; a longer array fails the node. */
export const MAX_ITERATIONS = 10_000;

/** The `as` of a `for_each` node: its alias, default `item`. */
export function iterationAlias(n: WorkflowNode): string {
  return n.as || 'item';
}

/**
 * A directed edge. `condition` is a `{{ }}` CEL template evaluated when its source completes (any
 * node type); `on_error: true` makes it an error edge, taken
 * only when its source fails for good, with the condition, if any,
 * evaluated then (`tasks.<from>.error` holds the reason).
 */
export interface WorkflowEdge {
  from: string;
  to: string;
  condition?: string;
  on_error?: boolean;
}

/** The stored definition: what users publish, after YAML/JSON parsing. */
export interface WorkflowDefinition {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  /** Optional run output template; default: the outputs of the sink nodes keyed by node id. */
  output?: JsonValue;
  /** How many of the workflow's runs may be active at once, per key. */
  concurrency?: RunConcurrency;
  /** The default priority of the workflow's runs, 1 (runs first) to 5; 3 when unset. */
  priority?: number;
  /**
   * The longest a run may take, in seconds (1 to {@link MAX_DURATION_SECONDS}), counted on the
   * database's clock from its start (for a run queued for a concurrency slot, from when it got
   * one) and anew at each retry: when it passes, the run's active tasks and child runs are
   * cancelled and it ends TIMED_OUT. None by default.
   */
  timeout_seconds?: number;
  /**
   * The run's exit handler: one HTTP or CODE step run once the run's outcome is decided (it would
   * end SUCCEEDED, FAILED, CANCELLED or TIMED_OUT). The run stays RUNNING until the step ends, then
   * takes the decided outcome (see {@link FinallyStep}).
   */
  finally?: FinallyStep;
}

/**
 * The definition's `finally` step: a worker node (HTTP or CODE) that no edge names, run once per
 * decided outcome. Its templates read `input`, `config`, `tasks.<node>` and, alone of all
 * templates, `run.id`, `run.status` (the decided status) and `run.error` (the decided error, or
 * null). It takes the worker-node fields (`runtime`, `spec`, `retry`, `queue`, payload hygiene,
 * flow limits, `schedule_to_start_seconds`), never `for_each` nor `on_exhausted`.
 */
export type FinallyStep = Omit<WorkflowNode, 'for_each' | 'as' | 'max_concurrency' | 'reducers' | 'tolerated_failures' | 'on_exhausted'>;

/**
 * The longest wait, event timeout or task timeout, in seconds: 365 days. Publishing refuses
 * longer literal values and the machine fails a node whose templated value resolves beyond it.
 */
export const MAX_DURATION_SECONDS = 31_536_000;

/** Cap on a retry's backoff: 10 minutes, in milliseconds. */
export const MAX_RETRY_BACKOFF_MS = 10 * 60 * 1000;

/**
 * The queue a worker node is dispatched on: the node's `queue`
 * lower-cased; else CODE nodes go to their runtime (`py`→`python`, `javascript`/`node`→`js`,
 * default `python`) and other nodes to their lower-cased type (`http`).
 */
export function nodeQueue(n: WorkflowNode): string {
  if (n.queue) return n.queue.toLowerCase();
  const key = (n.type === NodeType.Code ? n.runtime || 'python' : n.type).toLowerCase();
  if (key === 'py') return 'python';
  if (key === 'javascript' || key === 'node') return 'js';
  return key;
}

/** How many times the node may execute: its `retry.max_attempts`, rounded down, at least 1. */
export function maxAttempts(n: WorkflowNode): number {
  const m = n.retry?.max_attempts;
  return m === undefined || !(m >= 1) ? 1 : Math.floor(m);
}

/**
 * The backoff before the given retry (1-based), in milliseconds:
 * `backoff_seconds * 2^(attempt-1)` seconds, capped at 10 minutes; 0 without a backoff.
 */
export function retryDelayMs(n: WorkflowNode, attempt: number): number {
  const base = n.retry?.backoff_seconds;
  if (base === undefined || !(base > 0) || attempt < 1) return 0;
  const delay = base * 1000 * 2 ** (attempt - 1);
  return !Number.isFinite(delay) || delay > MAX_RETRY_BACKOFF_MS ? MAX_RETRY_BACKOFF_MS : delay;
}

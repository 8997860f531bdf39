/**
 * The outcome a node kind hands back to routing. A node-kind file records the node's own state
 * (it emits the CreateTask, ResolveWait, CompleteTask… that say what became of the node) and
 * returns one of these; routing alone decides what follows from it.
 */
import type { WorkflowNode } from '../../model/workflow-definition.js';
import { TaskStatus, type JsonValue } from '../../model/workflow-types.js';
import type { Step } from '../step.js';

/**
 * What became of a node when it was activated or when an event settled it:
 * - `completed`: it finished with `output`. Routing caches the output for templates, records the
 *   node's decision and walks on to its successors (unless the run has finished).
 * - `failed`: it failed for good with `reason`. Routing follows its `on_error` edges, if any;
 *   without one the failure fails the run once nothing is active.
 * - `pending`: it waits (parked, fanned out, a child run under way, a retry not due yet);
 *   nothing follows yet.
 * - `ignored`: the event does not apply to the node now. The transition records `reason`, and
 *   `rearmAt` when the node's timer must fire again at that time.
 */
export type NodeOutcome =
  { kind: 'completed'; output: JsonValue } | { kind: 'failed'; reason: string } | { kind: 'pending' } | { kind: 'ignored'; reason: string; rearmAt?: Date };

/** The outcome of activating a node: a node just reached never ignores its activation. */
export type ActivationOutcome = Exclude<NodeOutcome, { kind: 'ignored' }>;

/** The `pending` outcome (one frozen object; it carries nothing). */
export const PENDING: { readonly kind: 'pending' } = Object.freeze({ kind: 'pending' });

/** The `completed` outcome with the node's `output`. */
export function completed(output: JsonValue): { kind: 'completed'; output: JsonValue } {
  return { kind: 'completed', output };
}

/** The `failed` outcome with the `reason` the node failed for. */
export function failed(reason: string): { kind: 'failed'; reason: string } {
  return { kind: 'failed', reason };
}

/** The `ignored` outcome: why the event changes nothing, and when to fire the timer again. */
export function ignored(reason: string, rearmAt?: Date): NodeOutcome {
  return rearmAt === undefined ? { kind: 'ignored', reason } : { kind: 'ignored', reason, rearmAt };
}

/**
 * Records node `n`, which cannot start, as FAILED with `reason` under a fresh task id (emits one
 * CreateTask; `fields` adds what the task stores, such as the resolved `input`) and returns the
 * `failed` outcome.
 */
export function failActivation(s: Step, n: WorkflowNode, reason: string, fields: { input?: JsonValue } = {}): ActivationOutcome {
  s.emit({ type: 'CreateTask', taskId: s.newId(), node: n, status: TaskStatus.Failed, ...fields, error: reason });
  return failed(reason);
}

/**
 * Why a run failed, in words a user acts on: the nodes that failed (or were cancelled) and their
 * errors, e.g. `node charge failed: HTTP POST https://pay.example.com/charges returned status
 * 500: …`, rather than only how many tasks failed. Pure; bounded in length whatever the errors.
 */
import { TaskStatus } from '../model/workflow-types.js';

/** A node that ended the run unsuccessfully: failed (without an error edge taking it) or cancelled. */
export interface UnsuccessfulNode {
  nodeId: string;
  status: typeof TaskStatus.Failed | typeof TaskStatus.Cancelled;
  /** The node's error, when known. */
  error?: string;
}

/** Nodes named in a run's reason; the others are counted (`and N more`). */
export const MAX_NAMED_NODES = 3;

/** Longest part of one node's error a run's reason repeats, in UTF-16 code units; the rest is cut (`…`). */
export const MAX_NODE_ERROR_CHARS = 1000;

/** `text` cut to `max` code units with `…` appended, never inside a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/** One node's part: `node a failed: <error>`, `node a was cancelled`. */
function part(n: UnsuccessfulNode): string {
  const what = n.status === TaskStatus.Failed ? 'failed' : 'was cancelled';
  const error = n.error?.trim();
  return error ? `node ${n.nodeId} ${what}: ${cut(error, MAX_NODE_ERROR_CHARS)}` : `node ${n.nodeId} ${what}`;
}

/**
 * The reason of a run that ends FAILED because of `nodes` (in the order to name them; at least
 * one): each of the first {@link MAX_NAMED_NODES} as `node <id> failed: <error>` (or `node <id>
 * was cancelled`), joined by `; `, then `; and N more` for the others. Each error is cut to
 * {@link MAX_NODE_ERROR_CHARS}, so the reason stays under 3.5 KB for node ids of at most 128
 * characters.
 *
 * Example: `[{nodeId: 'charge', status: 'FAILED', error: 'card declined'}]` gives
 * `node charge failed: card declined`.
 */
export function unsuccessfulRunReason(nodes: readonly UnsuccessfulNode[]): string {
  const named = nodes.slice(0, MAX_NAMED_NODES).map(part);
  const more = nodes.length - named.length;
  return more > 0 ? `${named.join('; ')}; and ${more} more` : named.join('; ');
}

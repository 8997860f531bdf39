import type { RunState, TaskState } from '@weft/persistence';
import type { NodeState, TaskStatus } from '../index.js';

/**
 * The node states each run's last event left, in this process, keyed by tenant and run, with the
 * run's `event_seq` after that event, so an event need not reload every task of its run. An
 * entry is used only for the event whose locked run row still has that `event_seq`: any event
 * applied elsewhere (another process, a timer applied as a failure) bumps it, and the entry is
 * then ignored. Writes that do not bump it change nothing the node states hold (a claim's
 * RUNNING, leases, wake-ups, which the machine treats alike). `take` removes the entry while an
 * event uses it, so a failed or retried transaction never leaves a half-applied snapshot behind.
 * At most `max` runs (default 1,000), least recently used out first.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, SnapshotEntry>();

  constructor(private readonly max = 1_000) {}

  /** The node states for the event about to be applied at `seq`, or undefined (then load them). */
  take(tenantId: string, runId: string, seq: number): Map<string, NodeState> | undefined {
    const e = this.takeEntry(tenantId, runId);
    return e?.seq === seq ? e.nodes : undefined;
  }

  /** Whether the run has an entry (it stays). */
  has(tenantId: string, runId: string): boolean {
    return this.entries.has(`${tenantId}:${runId}`);
  }

  /**
   * The whole entry of a run, removed (as {@link take} removes it): for an event decided before
   * any lock, whose write checks `seq` itself. Undefined when the run has none.
   */
  takeEntry(tenantId: string, runId: string): SnapshotEntry | undefined {
    const key = `${tenantId}:${runId}`;
    const e = this.entries.get(key);
    if (e) this.entries.delete(key);
    return e;
  }

  /**
   * Keeps the node states committed at `seq`; with `run`, the run row as that event left it and
   * the event's clock reading `at` (an event can then be decided from memory).
   */
  put(tenantId: string, runId: string, seq: number, nodes: Map<string, NodeState>, run?: RunState, at?: Date): void {
    const key = `${tenantId}:${runId}`;
    this.entries.delete(key);
    this.entries.set(key, { seq, nodes, ...(run && at ? { run, at } : {}) });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** What a run's last event in this process left: its node states at `seq`, and maybe its run row. */
export interface SnapshotEntry {
  seq: number;
  nodes: Map<string, NodeState>;
  /** The run row after that event (`eventSeq` = `seq`); absent when the event changed what it cannot tell (a retry's version). */
  run?: RunState;
  /** That event's clock reading. */
  at?: Date;
}

/**
 * The node states of a run from its task rows: one per node, with a `for_each` node's iterations
 * (rows with an `iteration`) attached to its aggregate task in element order.
 */
export function snapshotNodes(rows: readonly TaskState[]): Map<string, NodeState> {
  const nodes = new Map<string, NodeState>();
  const iterations: TaskState[] = [];
  for (const t of rows) {
    if (t.iteration !== null) {
      iterations.push(t);
      continue;
    }
    const n: NodeState = { taskId: t.id, status: t.status as TaskStatus, attempt: t.attempt };
    if (t.branches !== null) n.branches = t.branches;
    if (t.awaitedSignal !== null) n.awaitedSignal = t.awaitedSignal;
    if (t.error !== null) n.error = t.error;
    if (t.retryAt !== null) n.retryAt = t.retryAt;
    if (t.attemptLimit != null) n.attemptLimit = t.attemptLimit;
    // The first iteration has no previous output; a later one's is read when a template names it.
    if (t.loop) n.loop = (t.loop.iteration ?? 0) === 0 ? { iteration: 0, previous: null } : { iteration: t.loop.iteration };
    nodes.set(t.nodeId, n);
  }
  iterations.sort((a, b) => (a.iteration as number) - (b.iteration as number));
  for (const t of iterations) {
    const agg = nodes.get(t.nodeId);
    if (!agg) continue;
    const it: NodeState = { taskId: t.id, status: t.status as TaskStatus, attempt: t.attempt };
    if (t.error !== null) it.error = t.error;
    if (t.attemptLimit != null) it.attemptLimit = t.attemptLimit;
    (agg.iterations ??= []).push(it);
  }
  return nodes;
}

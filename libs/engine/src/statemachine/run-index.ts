/**
 * Internal: facts derived from a run snapshot that the machine keeps up to date event by event, so
 * that one event costs the same in a run of 100 nodes as in one of 10,000. They live
 * beside the snapshot, keyed by its node map, never on it: a snapshot stays plain data (tests
 * compare and clone it) and one built by hand or loaded from storage simply has none yet — each
 * fact is computed from scratch the first time it is needed, then maintained by `applyAction`.
 * A failed event drops them ({@link dropRunIndex}): they are rebuilt on the next one.
 */
import type { NodeState, RunSnapshot } from './state.js';

/** Counts of reached nodes (top level, not `for_each` iterations); see `runCounts`. */
export interface RunCounts {
  /** PENDING, QUEUED, RUNNING or WAITING. */
  active: number;
  /** FAILED (handled failures included). */
  failed: number;
  cancelled: number;
}

/**
 * How far the readiness of an unreached node is known: `count` of its incoming edges, from
 * position `start` on (in the DAG's incoming-edge order, wrapping around), are resolved for good,
 * and `anyActive` tells whether one of them is active. Only ever grows while the sources it read
 * keep their state.
 */
export interface ReadinessProgress {
  start: number;
  count: number;
  anyActive: boolean;
}

/** What is kept per snapshot. */
export interface RunIndex {
  /** Maintained by `applyAction` once present. */
  counts?: RunCounts;
  /**
   * A node last seen active (recorded active by `applyAction`, or found active by readiness): a
   * cheap proof that the run cannot finish yet, checked against the snapshot at every use.
   */
  activeWitness?: string;
  /** Readiness progress per unreached node, valid for the DAG it was computed with. */
  readiness?: { dag: object; byNode: Map<string, ReadinessProgress> };
}

const indexes = new WeakMap<Map<string, NodeState>, RunIndex>();

/** The index of `run` (created empty on first use). */
export function runIndex(run: RunSnapshot): RunIndex {
  let ix = indexes.get(run.nodes);
  if (!ix) {
    ix = {};
    indexes.set(run.nodes, ix);
  }
  return ix;
}

/** Forgets everything derived from `run` (after a rolled-back event); rebuilt on demand. */
export function dropRunIndex(run: RunSnapshot): void {
  indexes.delete(run.nodes);
}

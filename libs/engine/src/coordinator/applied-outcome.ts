import type { HistoryEntry, RunState } from '@weft/persistence';
import type { NodeState, RunEvent, RunStatus, Transition, WorkflowDag } from '../index.js';
import type { ActionWriter, WriteResult } from './action-writer.js';
import type { AppliedOutcome } from './event-outcome.js';
import { buildRunChange } from './run-change.js';
import { runNotes } from './run-notes.js';

/** What an event the machine applied left, for {@link appliedOutcome}. */
export interface AppliedEvent {
  /** The run as the event found it. */
  run: RunState;
  ev: RunEvent;
  transition: Transition;
  /** The run's status and `event_seq` after the event, and its clock reading. */
  status: RunStatus;
  seq: number;
  now: Date;
  /** The writer that wrote (or captured) the event's actions, what it returned, and the history row it wrote with them. */
  writer: ActionWriter;
  written: WriteResult;
  entry: HistoryEntry;
  dag: WorkflowDag;
  /** The run's node states after the event. */
  nodes: Map<string, NodeState>;
}

/**
 * The outcome of event `e` once its writes committed, with no linked work yet (the caller adds
 * the runs it started or ended and the parents it woke): its jobs, its taken attempt, the
 * observer's notes and, built on demand, the change a watcher of the run is sent.
 */
export function appliedOutcome(e: AppliedEvent): AppliedOutcome {
  const { seq, now, written, writer, entry, dag } = e;
  const pause = e.transition.actions.find((a) => a.type === 'PauseRun');
  return {
    kind: 'applied',
    transition: e.transition,
    status: e.status,
    seq,
    now,
    jobs: written.jobs,
    ...(written.taken ? { taken: written.taken } : {}),
    ...(pause ? { paused: { workflowId: e.run.workflowId, cause: pause.cause } } : {}),
    ...(written.released?.length ? { released: written.released } : {}),
    nodes: e.nodes,
    change: () => buildRunChange({ seq, now, patch: written.run, log: writer.log, entry, dag }),
    ...runNotes(e.run, e.ev, e.transition, e.nodes, now),
    nested: [],
    wakes: [],
  };
}

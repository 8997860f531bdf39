import type { RunState } from '@weft/persistence';
import { TaskStatus, type FinishRun, type NodeState, type RunEvent, type Transition } from '../index.js';
import type { FinishedNote, StartedNote } from './event-outcome.js';

/**
 * What the observer is told after commit of event `ev` on run `run`: `started` when `ev` started
 * the run, `finished` when the transition's actions finish it (with its duration on the event
 * clock `now` and the nodes whose task ended FAILED in `nodes`, the states after the event).
 * Each is absent when it does not apply.
 */
export function runNotes(
  run: RunState,
  ev: RunEvent,
  transition: Transition,
  nodes: ReadonlyMap<string, NodeState>,
  now: Date,
): { started?: StartedNote; finished?: FinishedNote } {
  const finish = transition.actions.find((a): a is FinishRun => a.type === 'FinishRun');
  return {
    ...(ev.type === 'RunStarted' ? { started: startedNote(run) } : {}),
    ...(finish ? { finished: finishedNote(run, finish.status, now, nodes, finish.reason) } : {}),
  };
}

/** The note of run `run`'s start; see {@link runNotes}. */
export function startedNote(run: RunState): StartedNote {
  return { workflowId: run.workflowId, version: run.version, parentRunId: run.parentRunId };
}

/** The note of `run` finishing with `status` at `now`, for `reason`; see {@link runNotes}. */
export function finishedNote(run: RunState, status: FinishRun['status'], now: Date, nodes: ReadonlyMap<string, NodeState>, reason?: string): FinishedNote {
  const failedNodes: string[] = [];
  for (const [nodeId, n] of nodes) if (n.status === TaskStatus.Failed) failedNodes.push(nodeId);
  return {
    workflowId: run.workflowId,
    status,
    durationMs: Math.max(0, now.getTime() - run.createdAt.getTime()),
    failedNodes,
    ...(reason === undefined ? {} : { reason }),
    createdAt: run.createdAt,
    finishedAt: now,
    ...(run.traceparent ? { traceparent: run.traceparent } : {}),
    ...(run.traceCallerSpan ? { traceCallerSpan: run.traceCallerSpan } : {}),
  };
}

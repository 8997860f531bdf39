import type { RunState } from '@weft/persistence';
import { TaskStatus, type FinishRun, type NodeState, type RunEvent, type Transition } from '../index.js';
import type { Applied } from './applied.js';

/**
 * Marks `applied` with what the observer is told after commit: `started` when `ev` started the
 * run, `finished` when the transition's actions finish it (with its duration on the event clock
 * `now` and the nodes whose task ended FAILED in `nodes`, the states after the event).
 */
export function noteRunChanges(applied: Applied, run: RunState, ev: RunEvent, transition: Transition, nodes: ReadonlyMap<string, NodeState>, now: Date): void {
  if (ev.type === 'RunStarted') applied.started = { workflowId: run.workflowId, version: run.version, parentRunId: run.parentRunId };
  const finish = transition.actions.find((a): a is FinishRun => a.type === 'FinishRun');
  if (finish) noteFinished(applied, run, finish.status, now, nodes, finish.reason);
}

/** Marks `applied` as finishing `run` with `status`; see {@link noteRunChanges}. */
export function noteFinished(applied: Applied, run: RunState, status: FinishRun['status'], now: Date, nodes: ReadonlyMap<string, NodeState>, reason?: string): void {
  const failedNodes: string[] = [];
  for (const [nodeId, n] of nodes) if (n.status === TaskStatus.Failed) failedNodes.push(nodeId);
  applied.finished = {
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

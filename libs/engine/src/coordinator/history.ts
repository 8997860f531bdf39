import type { HistoryEntry, Json, RunPatch } from '@weft/persistence';
import {
  assertNever,
  decisionText,
  isSensitive,
  nodeQueue,
  REDACTED,
  trimOutput,
  type Action,
  type JsonValue,
  type NodeState,
  type RunEvent,
  type WorkflowDag,
} from '../index.js';

/** What the coordinator records of one event besides the event itself. */
export interface EventRecord {
  /** The run's event sequence number after the event. */
  seq: number;
  ev: RunEvent;
  /** The event's clock reading. */
  now: Date;
  /** The actions the event produced (summarized for the history). */
  actions: readonly Action[];
  /** Their summaries ({@link summarizeAction}), when the caller already made them. */
  summaries?: Json[];
  ignored?: string;
  error?: string;
  patch: RunPatch;
}

/** The history row of an event ({@link EventRecord}) as the history repository writes it. */
export function historyEntry({ seq, ev, now, actions, summaries, ignored, error, patch }: EventRecord): HistoryEntry {
  const { type, ...payload } = ev;
  const e = ev as { nodeId?: string; attempt?: number };
  return {
    seq,
    type,
    payload: payload as JsonValue,
    nodeId: e.nodeId ?? null,
    attempt: e.attempt ?? null,
    at: now,
    actions: summaries ?? actions.map(summarizeAction),
    ...(ignored === undefined ? {} : { ignored }),
    ...(error === undefined ? {} : { error }),
    patch,
  };
}

/**
 * The event as the run history records it (payload hygiene): a NodeCompleted's output trimmed by
 * the node's `output_keep` / `output_drop`, or replaced by {@link REDACTED} for a `sensitive`
 * node (whose successors still receive it through the task); a worker report for a `for_each`
 * iteration also carries `iteration`, the element's index, and one for a DO_WHILE body node
 * `loopIteration`, its loop's iteration (both from the node states before the event; a late report
 * for a task of an ended iteration carries none).
 */
export function historyEvent(ev: RunEvent, dag: WorkflowDag, nodes: ReadonlyMap<string, NodeState>): RunEvent {
  if (ev.type !== 'NodeCompleted' && ev.type !== 'NodeFailed') return ev;
  const at = nodes.get(ev.nodeId)?.iterations?.findIndex((it) => it.taskId === ev.taskId) ?? -1;
  const loopId = dag.loopOf(ev.nodeId);
  // Only a report for the current iteration's task is of the loop's current iteration: a late one
  // for an ended iteration's (archived) task is left untagged rather than misdated.
  const current = at >= 0 || nodes.get(ev.nodeId)?.taskId === ev.taskId;
  const loopIteration = loopId === undefined || !current ? undefined : nodes.get(loopId)?.loop?.iteration;
  const tagged =
    at < 0 && loopIteration === undefined ? ev : { ...ev, ...(at < 0 ? {} : { iteration: at }), ...(loopIteration === undefined ? {} : { loopIteration }) };
  if (ev.type !== 'NodeCompleted') return tagged;
  const node = dag.getNode(ev.nodeId);
  if (isSensitive(node)) return { ...tagged, output: REDACTED } as RunEvent;
  const output = trimOutput(node, ev.output);
  return output === ev.output ? tagged : ({ ...tagged, output } as RunEvent);
}

/**
 * A compact, JSON-safe summary of an action for the run history (no inputs or outputs). A
 * SWITCH's CreateTask says, as `decision`, when no branch was taken (`no branch taken:
 * conditions evaluated: to=a {{…}} → false; …`) or its default was (`default taken: <id>`).
 */
export function summarizeAction(a: Action): { [key: string]: JsonValue } {
  const s = (o: { [key: string]: JsonValue | undefined }) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [key: string]: JsonValue };
  switch (a.type) {
    case 'CreateTask':
      return s({
        type: a.type,
        nodeId: a.node.node_id,
        taskId: a.taskId,
        status: a.status,
        error: a.error,
        branches: a.branches,
        decision: a.decision ? decisionText(a.decision) : undefined,
        wakeAt: a.wakeAt?.toISOString(),
        awaitedSignal: a.awaitedSignal,
        loopIteration: a.loopIteration,
      });
    case 'DispatchTask':
      return s({ type: a.type, nodeId: a.node.node_id, taskId: a.taskId, attempt: a.attempt, queue: nodeQueue(a.node), notBefore: a.notBefore.toISOString() });
    case 'CompleteTask':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt });
    case 'FailTask':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt, reason: a.reason });
    case 'RetryTask':
      return s({
        type: a.type,
        nodeId: a.nodeId,
        taskId: a.taskId,
        attempt: a.attempt,
        reason: a.reason,
        notBefore: a.notBefore.toISOString(),
        attemptLimit: a.attemptLimit,
      });
    case 'RecordBranches':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, branches: a.branches });
    case 'ResolveWait':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, status: a.status, reason: a.reason });
    case 'BufferSignal':
      return s({ type: a.type, name: a.name });
    case 'ConsumeSignal':
      return s({ type: a.type, signalId: a.signalId, taskId: a.taskId });
    case 'ReopenRun':
      return s({ type: a.type, version: a.version, resetNodes: a.resetNodes });
    case 'CancelTasks':
      return s({ type: a.type, reason: a.reason });
    case 'FinishRun':
    case 'DecideRun':
      return s({ type: a.type, status: a.status, reason: a.reason });
    case 'CreateIterations':
      return s({ type: a.type, nodeId: a.node.node_id, taskId: a.taskId, iterations: a.iterations.length, dispatched: a.dispatch });
    case 'ReleaseIteration':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, iteration: a.iteration });
    case 'SkipIterations':
      return s({ type: a.type, nodeId: a.nodeId, skipped: a.taskIds.length, reason: a.reason });
    case 'ReopenIterations':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, iterations: a.iterations.length });
    case 'NextLoopIteration':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, iteration: a.iteration });
    case 'StartChildRun':
      return s({
        type: a.type,
        nodeId: a.nodeId,
        taskId: a.taskId,
        attempt: a.attempt,
        childRunId: a.childRunId,
        workflowId: a.workflowId,
        version: a.version,
      });
    case 'RetryChild':
      return s({ type: a.type, nodeId: a.nodeId, taskId: a.taskId, attempt: a.attempt, reason: a.reason, notBefore: a.notBefore.toISOString() });
    case 'PauseRun':
      return s({ type: a.type, reason: a.reason, cause: a.cause });
    case 'ResumeRun':
      return s({ type: a.type });
    case 'ArmDeadline':
      return s({ type: a.type, deadlineAt: a.deadlineAt?.toISOString() ?? null });
    default:
      return assertNever(a);
  }
}

/**
 * The workflow state machine: one event in, a transition (actions as data) out. No I/O of its
 * own: the clock, ids, templates and on-demand reads come from {@link Deps}. This file handles
 * each event; routing.ts walks the DAG and node-kinds/ says how waiting and fanning nodes
 * activate and settle.
 */
import type { WorkflowDag } from '../model/dag.js';
import { trimOutput } from '../model/payload-hygiene.js';
import { retryDelayMs, type WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { hasActiveNode, liveCounts } from './apply-action.js';
import type { Deps, Transition } from './deps.js';
import { MachineError } from './errors.js';
import type {
  NodeCompleted,
  NodeFailed,
  RunCancelled,
  RunEvent,
  RunRetried,
  RunStarted,
  RunTimedOut,
  SignalReceived,
  StartTimedOut,
  TimerFired,
} from './events.js';
import { Journal } from './journal.js';
import { iterationRetryRefusal, reopenIterations, settleIteration } from './node-kinds/for-each.js';
import type { NodeOutcome } from './node-kinds/outcome.js';
import { settleChildTimer } from './node-kinds/subworkflow.js';
import { signalRefusal } from './node-kinds/signal-names.js';
import { deliverSignal, eventNameProblem, timeOutWaitForEvent } from './node-kinds/wait-for-event.js';
import { wakeWait } from './node-kinds/wait.js';
import { isHandledFailure } from './branches.js';
import { settleLoops } from './loops.js';
import { begin, propagate, routeOutcome } from './routing.js';
import { attemptsLeft, onRunPaused, onRunResumed, pauseOnExhausted } from './pause.js';
import { cancelFinally, runFinally } from './finally.js';
import { dropRunIndex } from './run-index.js';
import { unsuccessfulRunReason, type UnsuccessfulNode } from './run-failure.js';
import { isTaskActive, matchesAttempt, reportTarget, type NodeState, type RunSnapshot } from './state.js';
import { GATHERED_VALUE_FACTOR, Step, errorMessage, isStoreError, sizeProblem, valueProblem } from './step.js';

export { applyAction, runCounts } from './apply-action.js';

/**
 * Decides how one event moves one run forward. Create one per event with the
 * run's snapshot; it is not safe for concurrent use, and the caller serializes events per run
 * (the coordinator holds the run's row lock).
 *
 * `run.context.tasks` is a cache of outputs; a snapshot loaded from the database starts with it
 * empty and the machine loads what templates need through `deps.store`.
 */
export class Machine {
  /** A machine deciding on `run` (which `apply` evolves in place) over `dag`, the DAG of the run's version. */
  constructor(
    private readonly dag: WorkflowDag,
    private readonly run: RunSnapshot,
    private readonly deps: Deps,
  ) {}

  /**
   * Consumes one event and returns the resulting transition; the snapshot then reflects the
   * state the persisted actions produce. On rejection the snapshot is restored and nothing must be
   * persisted.
   * @throws MachineError `INVALID_REQUEST` (unknown node, missing signal name, unresolvable
   * start), `RUN_FINISHED` (signal or cancel on a finished run), `RUN_ACTIVE` (retry with tasks in
   * flight) — permanent; StoreError — transient, retry the event.
   */
  async apply(ev: RunEvent): Promise<Transition> {
    // Records only what this event changes (O(changes), not O(reached nodes)).
    const journal = new Journal(this.run);
    const s = new Step(this.dag, this.run, this.deps, journal);
    try {
      await this.dispatch(s, ev);
      if (s.tr.ignored === undefined) {
        await settleLoops(s);
        await finishIfDone(s);
      }
    } catch (err) {
      journal.restore();
      dropRunIndex(this.run); // the derived counts and readiness saw the undone changes
      throw err;
    }
    return s.tr;
  }

  private async dispatch(s: Step, ev: RunEvent): Promise<void> {
    switch (ev.type) {
      case 'RunStarted':
        return onRunStarted(s, ev);
      case 'NodeCompleted':
        return onNodeCompleted(s, ev);
      case 'NodeFailed':
        return onNodeFailed(s, ev);
      case 'TimerFired':
        return onTimerFired(s, ev);
      case 'SignalReceived':
        return onSignalReceived(s, ev);
      case 'RunRetried':
        return onRunRetried(s, ev);
      case 'RunCancelled':
        return onRunCancelled(s, ev);
      case 'RunPaused':
        return onRunPaused(s, ev);
      case 'RunResumed':
        return onRunResumed(s, ev);
      case 'RunTimedOut':
        return onRunTimedOut(s, ev);
      case 'StartTimedOut':
        return onStartTimedOut(s, ev);
      default: {
        const unknown: never = ev;
        throw new MachineError('INVALID_REQUEST', `unknown event ${JSON.stringify((unknown as { type?: unknown }).type)}`);
      }
    }
  }
}

/**
 * RunStarted: activates the start node (the event's `startNodeId` or the entry node). A second
 * RunStarted for a run whose start node was already reached is ignored.
 * @throws MachineError INVALID_REQUEST for an unknown start node or a routing error.
 */
async function onRunStarted(s: Step, ev: RunStarted): Promise<void> {
  let start: WorkflowNode;
  try {
    start = s.dag.startNode(ev.startNodeId);
  } catch (err) {
    throw new MachineError('INVALID_REQUEST', errorMessage(err));
  }
  if (s.run.nodes.has(start.node_id)) {
    s.ignore(`run already started at ${start.node_id}`);
    return;
  }
  armDeadline(s);
  await begin(s, start);
}

/** Sets the run's deadline from its definition's `timeout_seconds`, counted from now; clears one the definition no longer has. */
function armDeadline(s: Step): void {
  const seconds = s.dag.definition.timeout_seconds;
  if (seconds !== undefined) s.emit({ type: 'ArmDeadline', deadlineAt: new Date(s.now.getTime() + seconds * 1000) });
  else if (s.run.deadlineAt !== undefined) s.emit({ type: 'ArmDeadline', deadlineAt: null });
}

/**
 * RunTimedOut: the run's deadline passed (by the event's clock): every active task is cancelled
 * and the run ends TIMED_OUT with `run exceeded timeout_seconds N`, paused or not (with a
 * `finally` step, that outcome is decided and the step runs first). Ignored for a finished run,
 * for one whose outcome is decided (its `finally` step is bounded by its own timeout), and for
 * one whose deadline is not (or no longer, after a retry) due.
 */
async function onRunTimedOut(s: Step, _ev: RunTimedOut): Promise<void> {
  if (s.terminal() || s.run.decided) {
    s.ignore(s.run.decided ? `run outcome ${s.run.decided.status} decided: its finally step runs` : `run already ${s.run.status}`);
    return;
  }
  if (s.run.deadlineAt === undefined || s.run.deadlineAt.getTime() > s.now.getTime()) {
    s.ignore(s.run.deadlineAt === undefined ? 'run has no deadline' : `deadline not due until ${s.run.deadlineAt.toISOString()}`);
    return;
  }
  const seconds = s.dag.definition.timeout_seconds;
  const reason = seconds === undefined ? 'run exceeded its deadline' : `run exceeded timeout_seconds ${seconds}`;
  s.emit({ type: 'CancelTasks', reason });
  s.endRun({ status: RunStatus.TimedOut, reason });
}

/**
 * NodeCompleted: fenced by (taskId, attempt) — a stale attempt, another task, or an already
 * finished (or cancelled) task is ignored. Otherwise the task completes and routing continues,
 * unless the run already finished (the output is kept, nothing is scheduled). For a `for_each`
 * node the report addresses one iteration (never the aggregate task); see `settleIteration`.
 */
async function onNodeCompleted(s: Step, ev: NodeCompleted): Promise<void> {
  const n = reportTarget(s.run, ev.nodeId, ev.taskId);
  if (!matchesAttempt(n, ev.taskId, ev.attempt) || !isTaskActive(n)) {
    s.ignore(`stale or duplicate completion of ${ev.nodeId} attempt ${ev.attempt}`);
    return;
  }
  // output_keep / output_drop: what is stored is what successors see, so trim before storing.
  const output = trimOutput(s.dag.getNode(ev.nodeId), ev.output);
  s.emit({ type: 'CompleteTask', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, output });
  const outcome: NodeOutcome =
    s.run.nodes.get(ev.nodeId)?.iterations !== undefined ? await settleIteration(s, ev.nodeId, { taskId: ev.taskId, output }) : { kind: 'completed', output };
  await routeOutcome(s, ev.nodeId, outcome);
}

/**
 * NodeFailed: fenced like NodeCompleted. Attempts are 0-based: while `attempt + 1 <
 * max_attempts` (and the run is not finished) the same task is retried with attempt + 1 at now +
 * `retryDelayMs(node, attempt + 1)`; otherwise — or when the worker marked the failure
 * `retryable: false` — it fails for good: without an `on_error` edge its edges stay unresolved;
 * with one, routing continues along the error edges it selects (see `routeOutcome`). A `for_each`
 * iteration retries on its own; one failed for good fails the node once the others settle. A
 * node with `on_exhausted: pause` pauses the run instead of failing on (see pause.ts); a resume
 * may have given its task more attempts than `max_attempts` (`attemptLimit`).
 */
async function onNodeFailed(s: Step, ev: NodeFailed): Promise<void> {
  const n = reportTarget(s.run, ev.nodeId, ev.taskId);
  if (!matchesAttempt(n, ev.taskId, ev.attempt) || !isTaskActive(n)) {
    s.ignore(`stale or duplicate failure of ${ev.nodeId} attempt ${ev.attempt}`);
    return;
  }
  const node = s.dag.getNode(ev.nodeId);
  if (node && !s.terminal() && attemptsLeft(node, n, ev)) {
    s.emit({
      type: 'RetryTask',
      taskId: ev.taskId,
      nodeId: ev.nodeId,
      attempt: ev.attempt,
      reason: ev.error,
      notBefore: new Date(s.now.getTime() + retryDelayMs(node, ev.attempt + 1)),
    });
    return;
  }
  if (node && !s.terminal() && pauseOnExhausted(s, node, n, ev)) return;
  s.emit({ type: 'FailTask', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, reason: ev.error });
  const outcome: NodeOutcome =
    s.run.nodes.get(ev.nodeId)?.iterations !== undefined ? await settleIteration(s, ev.nodeId) : { kind: 'failed', reason: ev.error };
  await routeOutcome(s, ev.nodeId, outcome);
}

/**
 * StartTimedOut: the attempt, if no worker started it yet (still QUEUED or PENDING at that
 * attempt), fails with `not started within N s` as a NodeFailed would (its retry policy and
 * `on_exhausted` apply); one that started, finished or moved on is ignored.
 */
async function onStartTimedOut(s: Step, ev: StartTimedOut): Promise<void> {
  const n = reportTarget(s.run, ev.nodeId, ev.taskId);
  if (!matchesAttempt(n, ev.taskId, ev.attempt) || (n.status !== TaskStatus.Queued && n.status !== TaskStatus.Pending)) {
    s.ignore(`attempt ${ev.attempt} of ${ev.nodeId} started or moved on before its schedule-to-start deadline`);
    return;
  }
  const seconds = s.dag.getNode(ev.nodeId)?.schedule_to_start_seconds;
  const error = seconds === undefined ? 'not started in time' : `not started within ${seconds} s`;
  await onNodeFailed(s, { type: 'NodeFailed', taskId: ev.taskId, nodeId: ev.nodeId, attempt: ev.attempt, error });
}

/**
 * TimerFired on the current task of a WAITING node of a running run: a WAIT completes with
 * `{woke_at}`; for a WAIT_FOR_EVENT it is a timeout and the node fails with `timed out waiting
 * for event "x"`; for a SUBWORKFLOW its child run ended or a retry is due (`settleChildTimer`).
 * Routing then follows the outcome. A timer for another task, a node no longer waiting, or a
 * finished run is ignored.
 * @throws StoreError (transient).
 */
async function onTimerFired(s: Step, ev: TimerFired): Promise<void> {
  const n = s.run.nodes.get(ev.nodeId);
  if (!n || n.taskId !== ev.taskId || n.status !== TaskStatus.Waiting || s.terminal()) {
    s.ignore(`timer for ${ev.nodeId} no longer pending`);
    return;
  }
  await routeOutcome(s, ev.nodeId, await timerOutcome(s, ev, n));
}

/** What a due timer does to waiting node state `n`, by its node kind (a WAIT when in doubt). */
async function timerOutcome(s: Step, ev: TimerFired, n: NodeState): Promise<NodeOutcome> {
  const node = s.dag.getNode(ev.nodeId);
  if (node?.type === NodeType.Subworkflow) return settleChildTimer(s, ev, n, node);
  if (node?.type === NodeType.WaitForEvent) return timeOutWaitForEvent(s, ev, n);
  return wakeWait(s, ev);
}

/**
 * SignalReceived: the oldest node waiting for that name completes with the payload (`{}` when
 * absent) and routing continues; with no waiter the signal is buffered for a later
 * WAIT_FOR_EVENT. `signalDelivered` on the transition tells which.
 * @throws MachineError INVALID_REQUEST without a name, for one that is too long or unstorable, or
 * for one no WAIT_FOR_EVENT node of the run could ever take (saying which names the run waits for,
 * {@link signalRefusal}); RUN_FINISHED on a finished run (`run R is SUCCEEDED: …`); StoreError
 * (transient).
 */
async function onSignalReceived(s: Step, ev: SignalReceived): Promise<void> {
  const badName = eventNameProblem(ev.name);
  if (badName) throw new MachineError('INVALID_REQUEST', badName);
  if (s.terminal()) throw new MachineError('RUN_FINISHED', `run ${s.run.id} is ${s.run.status}: it waits for no signal any more`);
  if (s.run.decided) {
    throw new MachineError('RUN_FINISHED', `run ${s.run.id} is ending ${s.run.decided.status} (its finally step runs): it waits for no signal any more`);
  }
  const refusal = signalRefusal(s, ev.name);
  if (refusal) throw new MachineError('INVALID_REQUEST', refusal);
  const delivered = deliverSignal(s, ev);
  s.tr.signalDelivered = delivered !== undefined;
  if (delivered) await routeOutcome(s, delivered.nodeId, delivered.outcome);
}

/**
 * RunRetried: restarts the run from a node. Resets that node and its descendants (their tasks are
 * deleted), and every reached node the retry's version no longer has (the machine is built with
 * that version's DAG; a leftover FAILED task would fail the run forever), and the `finally` step's
 * task (it runs again at the next outcome), keeps every other result, optionally replaces input/config, and begins again at the
 * node. With `failedIterationsOnly` the node (a `for_each` one) is not reset: only its failed,
 * skipped and cancelled iterations run again (see `reopenIterations`), its descendants are reset.
 * Allowed on a finished run or a running run with nothing active.
 * @throws MachineError RUN_PAUSED on a paused run; RUN_ACTIVE while any task is active;
 * INVALID_REQUEST for an unknown node, and with `failedIterationsOnly` for a node that is no
 * `for_each` node or has no iteration to run again.
 */
async function onRunRetried(s: Step, ev: RunRetried): Promise<void> {
  if (s.run.status === RunStatus.Paused) {
    throw new MachineError('RUN_PAUSED', `run ${s.run.id} is PAUSED: resume it (resumeRun), or cancel it, before retrying`);
  }
  const { active } = liveCounts(s.run);
  if (active > 0) {
    throw new MachineError('RUN_ACTIVE', `${active} task(s) in flight; cancel the run before retrying`);
  }
  const restart = s.dag.getNode(ev.fromNodeId);
  if (!restart) {
    throw new MachineError('INVALID_REQUEST', `node ${ev.fromNodeId} not in workflow definition`);
  }
  if (s.dag.isFinally(ev.fromNodeId)) {
    throw new MachineError(
      'INVALID_REQUEST',
      `node ${ev.fromNodeId} is the finally step: retry from a node of the graph (the step runs again at the next outcome)`,
    );
  }
  const loopId = s.dag.loopOf(ev.fromNodeId);
  if (loopId !== undefined) {
    throw new MachineError(
      'INVALID_REQUEST',
      `node ${ev.fromNodeId} is in the body of DO_WHILE ${loopId}: retry from ${loopId}, which runs its body again from its first iteration`,
    );
  }
  const onlyIterations = ev.failedIterationsOnly === true;
  const refusal = onlyIterations ? iterationRetryRefusal(s, restart) : undefined;
  if (refusal !== undefined) throw new MachineError('INVALID_REQUEST', refusal);
  s.emit({
    type: 'ReopenRun',
    version: ev.version,
    input: ev.input !== undefined ? ev.input : s.run.context.input,
    config: ev.config !== undefined ? ev.config : s.run.context.config,
    resetNodes: resetSet(s, ev.fromNodeId, onlyIterations),
  });
  armDeadline(s);
  if (onlyIterations) reopenIterations(s, restart);
  else await begin(s, restart);
  // A branch that settled after a failure had already ended the run was recorded but never
  // carried forward: walk on from every settled node the retry kept, so its successors run too
  // (nodes below the restarted one wait for it; nodes already reached are left alone).
  // A kept loop's body is its own: its nodes route nowhere outside it.
  const kept = [...s.run.nodes.entries()].filter(([id, n]) => id !== ev.fromNodeId && isSettled(n.status) && s.dag.loopOf(id) === undefined).map(([id]) => id);
  await propagate(
    s,
    kept.flatMap((id) => s.dag.successors(id)),
  );
}

/** COMPLETED, FAILED or SKIPPED: the node's outgoing edges can be decided. */
function isSettled(status: TaskStatus): boolean {
  return status === TaskStatus.Completed || status === TaskStatus.Failed || status === TaskStatus.Skipped;
}

/** `from` (unless `keepFrom`), its descendants, every reached node missing from the DAG, and the `finally` step, each once. */
function resetSet(s: Step, from: string, keepFrom = false): string[] {
  const reset = new Set([...s.dag.descendants(from), ...(keepFrom ? [] : [from])]);
  for (const id of s.run.nodes.keys()) if (!s.dag.getNode(id) || s.dag.isFinally(id)) reset.add(id);
  // A reset loop runs its body again from iteration 0: every iteration's tasks go.
  for (const id of [...reset]) for (const b of s.dag.bodyNodes(id)) reset.add(b.node_id);
  return [...reset];
}

/**
 * RunCancelled: every active task (pending, queued, running, waiting) becomes CANCELLED and the
 * run finishes CANCELLED with the reason (default `cancelled`); with a `finally` step that
 * outcome is decided and the step runs first. A cancel while the `finally` step runs (whatever
 * the decided outcome) stops the step and ends the run at once (see `cancelFinally`). Later reports
 * for those attempts are ignored by fencing.
 * @throws MachineError RUN_FINISHED on a finished run.
 */
async function onRunCancelled(s: Step, ev: RunCancelled): Promise<void> {
  if (s.terminal()) throw new MachineError('RUN_FINISHED', `run is ${s.run.status}`);
  const reason = ev.reason || 'cancelled';
  if (s.run.decided) {
    cancelFinally(s, reason);
    return;
  }
  s.emit({ type: 'CancelTasks', reason });
  s.endRun({ status: RunStatus.Cancelled, reason });
}

/**
 * Finishes the run once nothing is active (a PAUSED run waits for its resume or a cancel): FAILED if any task failed (or was cancelled), with a
 * reason naming those nodes and their errors ({@link unsuccessfulRunReason}), else SUCCEEDED with
 * the run output. A failure that took one of its node's `on_error` edges is
 * handled and does not count: the workflow dealt with it. A run output that cannot be resolved, or is larger than
 * one value may be (`maxValueBytes`; the default output of the sinks, {@link GATHERED_VALUE_FACTOR}
 * times that), fails the run. Each outcome goes through `Step.endRun`: with a `finally` step it is
 * decided, and the run ends once the step ended ({@link runFinally}).
 */
async function finishIfDone(s: Step): Promise<void> {
  // A run that reached no node has not started (QUEUED for its concurrency slot): nothing is done.
  if (s.terminal() || s.run.status === RunStatus.Paused || s.run.nodes.size === 0) return;
  if (!s.run.decided) await decideIfDone(s);
  if (s.run.decided && !s.terminal()) await runFinally(s);
}

/** The outcome of a run with nothing active, ended or decided (see {@link finishIfDone}). */
async function decideIfDone(s: Step): Promise<void> {
  if (hasActiveNode(s.run)) return;
  const counts = liveCounts(s.run);
  const { active, cancelled } = counts;
  if (active > 0) return;
  if (counts.failed > 0 || cancelled > 0) {
    const unsuccessful = unsuccessfulNodes(s);
    if (unsuccessful.length > 0) {
      s.endRun({ status: RunStatus.Failed, reason: unsuccessfulRunReason(unsuccessful) });
      return;
    }
  }
  let output: JsonValue;
  try {
    output = await runOutput(s);
  } catch (err) {
    if (isStoreError(err)) throw err;
    s.failRun(`cannot resolve the run output: ${errorMessage(err)}`);
    return;
  }
  // The default output gathers every sink's output, each up to the largest value: it may be larger, up to a bound.
  const byDefault = s.dag.definition.output === undefined;
  // Each sink's output was stored already: only the size of the whole is new.
  const problem = byDefault ? sizeProblem(output, s.maxValueBytes * GATHERED_VALUE_FACTOR, 'run output') : valueProblem('run output', output, s.maxValueBytes);
  if (problem) {
    s.failRun(byDefault ? `${problem} (the outputs of the sink nodes; an \`output:\` template can pick what the run returns)` : problem);
    return;
  }
  s.endRun({ status: RunStatus.Succeeded, output });
}

/**
 * The nodes that make a finished run FAILED, in the definition's node order: those that failed
 * without one of their `on_error` edges taking the failure, and those that were cancelled, each
 * with its error.
 */
function unsuccessfulNodes(s: Step): UnsuccessfulNode[] {
  const out: UnsuccessfulNode[] = [];
  for (const [nodeId, n] of s.run.nodes) {
    // A body node's failure is its loop's, which names it.
    if (s.dag.loopOf(nodeId) !== undefined) continue;
    if (n.status === TaskStatus.Cancelled || (n.status === TaskStatus.Failed && !isHandledFailure(s, nodeId, n))) {
      out.push({ nodeId, status: n.status, ...(n.error !== undefined ? { error: n.error } : {}) });
    }
  }
  if (out.length < 2) return out;
  const order = new Map(s.dag.nodes.map((n, i) => [n.node_id, i]));
  const at = (id: string) => order.get(id) ?? order.size;
  return out.sort((a, b) => at(a.nodeId) - at(b.nodeId));
}

/**
 * The run output: the definition's `output` template resolved against the run context, or by
 * default an object of the completed sink nodes' outputs keyed by node id (a `sensitive` sink's
 * shown as redacted: `Step.completedOutputs`). Loads only the outputs it reads.
 */
async function runOutput(s: Step): Promise<JsonValue> {
  const template = s.dag.definition.output;
  if (template !== undefined) {
    await s.ensureLoaded(s.dag.outputRefs());
    return s.deps.templates.resolve(template, s.templateContext(), s.now);
  }
  return s.completedOutputs(s.dag.sinkNodes());
}

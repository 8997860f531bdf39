/**
 * SUBWORKFLOW: the node calls another workflow (or its own) like a function. Its task is WAITING
 * while a child run of that workflow runs in the same tenant, and the child's run output becomes
 * the node's output. The machine only decides: StartChildRun asks the coordinator to create the
 * child, and the child's end reaches the parent as a TimerFired on the waiting task (the
 * coordinator sets its `wake_at`), which reads the child through the Store.
 */
import { maxAttempts, retryDelayMs, type WorkflowNode } from '../../model/workflow-definition.js';
import { RunStatus, TaskStatus, type JsonObject, type JsonValue } from '../../model/workflow-types.js';
import type { StartChildRun } from '../actions.js';
import { DEFAULT_MAX_RUN_TREE, type ChildRun } from '../deps.js';
import type { TimerFired } from '../events.js';
import type { NodeState } from '../state.js';
import { errorMessage, isStoreError, storeError, valueProblem, type Step } from '../step.js';
import { completed, failActivation, failed, ignored, PENDING, type ActivationOutcome, type NodeOutcome } from './outcome.js';
import { exhaustedReason } from '../exhausted.js';

/** What a resolved SUBWORKFLOW spec names: the child's workflow, version (optional), input and config. */
export interface ChildSpec {
  workflow: string;
  version?: number;
  input: JsonValue;
  config: JsonValue;
}

/**
 * Reads a resolved SUBWORKFLOW spec: `workflow` a non-empty string, `version` absent, null or a
 * positive 32-bit integer, `input` and `config` objects (a run's input and config are), default
 * `{}`.
 * @throws Error naming the field that is wrong.
 */
export function childSpec(spec: JsonValue): ChildSpec {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw new Error('spec must be an object {workflow, version?, input?, config?}');
  const o = spec as JsonObject;
  if (typeof o.workflow !== 'string' || o.workflow.trim() === '')
    throw new Error(`spec.workflow must be a workflow id, got ${JSON.stringify(o.workflow ?? null)}`);
  const v = o.version;
  if (v !== undefined && v !== null && !(typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 2 ** 31 - 1)) {
    throw new Error(`spec.version must be a positive integer, got ${JSON.stringify(v)}`);
  }
  for (const key of ['input', 'config'] as const) {
    const value = o[key];
    if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) {
      throw new Error(`spec.${key} must be an object (the child run's ${key}), got ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}`);
    }
  }
  return {
    workflow: o.workflow,
    ...(typeof v === 'number' ? { version: v } : {}),
    input: o.input === undefined || o.input === null ? {} : o.input,
    config: o.config === undefined || o.config === null ? {} : o.config,
  };
}

/**
 * Activates SUBWORKFLOW node `n`: resolves its spec, refuses to go deeper than the depth limit
 * (`Deps.maxSubworkflowDepth`, default 10: a run at that depth cannot start a child) or to grow
 * the tree of runs beyond `Deps.maxRunTree` (default 1,000), asks the Store which version the
 * child would run, and records the task WAITING with a StartChildRun for attempt 0: `pending`.
 * Anything that prevents the start (a bad spec, an unknown workflow or version, a deprecated
 * version, the depth or tree limit) records the node FAILED with the reason instead: `failed`.
 * @throws StoreError (transient).
 */
export async function activateSubworkflow(s: Step, n: WorkflowNode): Promise<ActivationOutcome> {
  const fail = (reason: string, input?: JsonValue): ActivationOutcome => failActivation(s, n, `SUBWORKFLOW ${n.node_id}: ${reason}`, { input });
  let input: JsonValue;
  try {
    input = await s.resolveInput(n);
  } catch (err) {
    if (isStoreError(err)) throw err;
    return fail(errorMessage(err));
  }
  const depth = s.run.depth ?? 0;
  if (depth >= s.maxDepth) {
    return fail(
      `cannot start a child run: this run is already at the depth limit of ${s.maxDepth} nested runs ` +
        '(a workflow that starts itself must stop recursing; the limit is WEFT_MAX_SUBWORKFLOW_DEPTH)',
      input,
    );
  }
  const taskId = s.newId();
  const start = await childStart(s, n, taskId, 0, input);
  if ('error' in start) return fail(start.error, input);
  s.emit({ type: 'CreateTask', taskId, node: n, status: TaskStatus.Waiting, input });
  s.emit(start.action);
  return PENDING;
}

/** Why the run's tree cannot take another child run (it holds `maxRunTree` runs), or undefined. */
async function treeFull(s: Step): Promise<string | undefined> {
  const limit = s.deps.maxRunTree ?? DEFAULT_MAX_RUN_TREE;
  let runs: number;
  try {
    runs = await s.deps.store.treeRuns();
  } catch (err) {
    throw storeError(err);
  }
  // Children this event already decided to start are not created yet: count them too.
  runs += s.tr.actions.filter((a) => a.type === 'StartChildRun').length;
  if (runs < limit) return undefined;
  return (
    `cannot start a child run: this tree of runs already holds ${runs} runs, the limit of ${limit} ` +
    '(a workflow that fans out into child runs recursively must stop; the limit is WEFT_MAX_RUN_TREE)'
  );
}

/**
 * The StartChildRun for `attempt` of task `taskId` from its resolved spec, or why there is none:
 * the tree of runs is full, the spec is malformed, or the workflow or version cannot run.
 */
async function childStart(s: Step, n: WorkflowNode, taskId: string, attempt: number, input: JsonValue): Promise<{ action: StartChildRun } | { error: string }> {
  const full = await treeFull(s);
  if (full) return { error: full };
  let spec: ChildSpec;
  try {
    spec = childSpec(input);
  } catch (err) {
    return { error: errorMessage(err) };
  }
  let found: { version: number } | { error: string };
  try {
    found = await s.deps.store.startableVersion(spec.workflow, spec.version);
  } catch (err) {
    throw storeError(err);
  }
  if ('error' in found) return { error: found.error };
  return {
    action: {
      type: 'StartChildRun',
      taskId,
      nodeId: n.node_id,
      attempt,
      childRunId: s.newId(),
      workflowId: spec.workflow,
      version: found.version,
      input: spec.input,
      config: spec.config,
    },
  };
}

/**
 * TimerFired on a WAITING SUBWORKFLOW task (the caller checked it is the node's current task in
 * a running run): the child run of the current attempt ended, or a retry's backoff elapsed.
 * - no child for this attempt yet (after a RetryChild): once the backoff elapsed, the child is
 *   started from the task's stored input (`pending`); an earlier wake-up is `ignored` and its
 *   timer rearmed for the retry;
 * - a child created but not started yet (the coordinator deferred it): started (`pending`);
 * - the child still running: `ignored`;
 * - SUCCEEDED: the node completes with the child's run output, `{}` when it has none
 *   (`completed`), unless that output cannot be stored, which fails the attempt;
 * - FAILED or CANCELLED: the attempt fails with `child run <id> failed: <its error> (node <id>:
 *   <that task's error>)`, naming the child's first failed task when there is one and the child's
 *   error does not name it already (`child run <id> failed: node charge failed: …`). With attempts
 *   left (`retry.max_attempts`) a RetryChild wakes the task after the backoff (at once without
 *   one) to start a new child (`pending`); else the node fails for good (`failed`).
 * @throws StoreError (transient).
 */
export async function settleChildTimer(s: Step, ev: TimerFired, n: NodeState, node: WorkflowNode): Promise<NodeOutcome> {
  let child: ChildRun | undefined;
  try {
    child = await s.deps.store.childRun(n.taskId, n.attempt);
  } catch (err) {
    throw storeError(err);
  }
  if (!child) {
    if (n.retryAt !== undefined && n.retryAt.getTime() > s.now.getTime()) {
      // A wake-up meant for the failed child arrived after its RetryChild: the backoff stands.
      return ignored(`the retry of ${ev.nodeId} is not due until ${n.retryAt.toISOString()}`, n.retryAt);
    }
    return startNextChild(s, ev, n, node);
  }
  if (!child.started) {
    // Created by an event that had already started one level of child runs: start it now.
    s.emit({
      type: 'StartChildRun',
      taskId: n.taskId,
      nodeId: ev.nodeId,
      attempt: n.attempt,
      childRunId: child.id,
      workflowId: child.workflowId,
      version: child.version,
      input: child.input,
      config: child.config,
    });
    return PENDING;
  }
  if (child.status === RunStatus.Running || child.status === RunStatus.Pending) {
    return ignored(`child run ${child.id} of ${ev.nodeId} is still running`);
  }
  if (child.status === RunStatus.Succeeded) {
    const output: JsonValue = child.output ?? {};
    const problem = valueProblem(`the output of child run ${child.id}`, output, s.maxValueBytes);
    if (problem === undefined) {
      s.emit({ type: 'ResolveWait', taskId: n.taskId, nodeId: ev.nodeId, status: TaskStatus.Completed, output });
      return completed(output);
    }
    return childFailed(s, ev, n, node, problem);
  }
  // A child that failed because of its nodes names them in its own error already.
  const named = child.failedTask !== undefined && (child.error ?? '').includes(`node ${child.failedTask.nodeId} failed`);
  const cause = child.failedTask && !named ? ` (node ${child.failedTask.nodeId}: ${child.failedTask.error ?? 'no reason given'})` : '';
  return childFailed(
    s,
    ev,
    n,
    node,
    `child run ${child.id} ${child.status === RunStatus.Cancelled ? 'was cancelled' : 'failed'}: ${child.error ?? 'no reason given'}${cause}`,
  );
}

/**
 * The current attempt's child failed: retry with a new child after the backoff, or fail the node
 * — or, for a node with `on_exhausted: pause`, fail its task, take no edge and pause the run
 * (see pause.ts).
 */
async function childFailed(s: Step, ev: TimerFired, n: NodeState, node: WorkflowNode, reason: string): Promise<NodeOutcome> {
  if (n.attempt + 1 < (n.attemptLimit ?? maxAttempts(node))) {
    const notBefore = new Date(s.now.getTime() + retryDelayMs(node, n.attempt + 1));
    s.emit({ type: 'RetryChild', taskId: n.taskId, nodeId: ev.nodeId, attempt: n.attempt, reason, notBefore });
    if (notBefore.getTime() <= s.now.getTime()) return startNextChild(s, ev, n, node);
    return PENDING;
  }
  s.emit({ type: 'ResolveWait', taskId: n.taskId, nodeId: ev.nodeId, status: TaskStatus.Failed, reason });
  if (node.on_exhausted === 'pause') {
    if (s.run.status !== RunStatus.Paused) s.emit({ type: 'PauseRun', reason: exhaustedReason(ev.nodeId, n.attempt + 1, reason), cause: 'exhausted' });
    return PENDING;
  }
  return failed(reason);
}

/**
 * A resume's retry of SUBWORKFLOW node `nodeId` (`n`, FAILED, its attempts ran out with
 * `on_exhausted: pause`): `attemptLimit` attempts in all, the next one's child started now.
 */
export async function resumeExhaustedChild(s: Step, nodeId: string, n: NodeState, node: WorkflowNode, attemptLimit: number): Promise<void> {
  s.emit({ type: 'RetryChild', taskId: n.taskId, nodeId, attempt: n.attempt, reason: n.error ?? 'failed', notBefore: s.now, attemptLimit });
  await startNextChild(s, { type: 'TimerFired', taskId: n.taskId, nodeId }, n, node);
}

/** Starts the child of the task's current attempt from its stored input; fails the node when it cannot. */
async function startNextChild(s: Step, ev: TimerFired, n: NodeState, node: WorkflowNode): Promise<NodeOutcome> {
  let input: JsonValue | undefined;
  try {
    input = await s.deps.store.taskInput(n.taskId);
  } catch (err) {
    throw storeError(err);
  }
  const start = await childStart(s, node, n.taskId, n.attempt, input ?? null);
  if ('action' in start) {
    s.emit(start.action);
    return PENDING;
  }
  const reason = `SUBWORKFLOW ${ev.nodeId}: ${start.error}`;
  s.emit({ type: 'ResolveWait', taskId: n.taskId, nodeId: ev.nodeId, status: TaskStatus.Failed, reason });
  return failed(reason);
}

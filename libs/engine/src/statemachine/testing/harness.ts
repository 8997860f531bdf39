/**
 * Test harness for the state machine. It plays the coordinator's role: keeps
 * the run snapshot between events, persists what actions write (outputs, buffered signals) in two
 * maps, and builds a fresh Machine per event with an empty output cache, so outputs are only
 * reachable through the Store — exactly as after a reload from the database. Fixed clock, task
 * ids `t001`, `t002`, …. Not exported from the package; free of Jest so it type-checks anywhere.
 */
import { buildDag, type WorkflowDag } from '../../model/dag.js';
import type { FinallyStep, WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../model/workflow-definition.js';
import { NodeType, RunStatus, type JsonValue } from '../../model/workflow-types.js';
import { CelTemplateResolver } from '../../template/resolver.js';
import type { Action, CreateTask, FinishRun } from '../actions.js';
import type { ChildRun, Deps, Store, Transition } from '../deps.js';
import type { RunEvent } from '../events.js';
import { Machine } from '../machine.js';
import { newRunSnapshot, type BufferedSignal, type NodeState, type RunSnapshot } from '../state.js';
import { Step } from '../step.js';

/** A worker (HTTP) node, optionally with a spec and extra fields (retry, …). */
export function task(id: string, spec?: JsonValue, extra: Partial<WorkflowNode> = {}): WorkflowNode {
  return { node_id: id, type: NodeType.Http, ...(spec !== undefined ? { spec } : {}), ...extra };
}
/** A FORK node. */
export function fork(id: string): WorkflowNode {
  return { node_id: id, type: NodeType.Fork };
}
/** A JOIN node. */
export function join(id: string): WorkflowNode {
  return { node_id: id, type: NodeType.Join };
}
/** A SWITCH node. */
export function sw(id: string): WorkflowNode {
  return { node_id: id, type: NodeType.Switch };
}
/** A WAIT node with its spec (`duration_seconds` or `until`). */
export function wait(id: string, spec: JsonValue): WorkflowNode {
  return { node_id: id, type: NodeType.Wait, spec };
}
/** A WAIT_FOR_EVENT node with its spec (`event`, `timeout_seconds`). */
export function waitFor(id: string, spec: JsonValue): WorkflowNode {
  return { node_id: id, type: NodeType.WaitForEvent, spec };
}
/** A `for_each` HTTP node over `over` (a template), with its spec and extra fields (as, max_concurrency, reducers, retry…). */
export function forEach(id: string, over: string, spec?: JsonValue, extra: Partial<WorkflowNode> = {}): WorkflowNode {
  return task(id, spec, { for_each: over, ...extra });
}
/** A SUBWORKFLOW node with its spec (`workflow`, `version`, `input`, `config`) and extra fields (retry…). */
export function subworkflow(id: string, spec: JsonValue, extra: Partial<WorkflowNode> = {}): WorkflowNode {
  return { node_id: id, type: NodeType.Subworkflow, spec, ...extra };
}
/** An unconditional edge. */
export function edge(from: string, to: string): WorkflowEdge {
  return { from, to };
}
/** A conditional edge (leaving a SWITCH or any other node). */
export function cond(from: string, to: string, condition: string): WorkflowEdge {
  return { from, to, condition };
}

/** Node ids of the DispatchTask actions of a transition, in order. */
export function dispatched(tr: Transition): string[] {
  return tr.actions.flatMap((a) => (a.type === 'DispatchTask' ? [a.node.node_id] : []));
}
/** Node ids of the CreateTask actions with `status`, in order. */
export function created(tr: Transition, status: string): string[] {
  return tr.actions.flatMap((a) => (a.type === 'CreateTask' && a.status === status ? [a.node.node_id] : []));
}
/** The actions of one type, typed. */
export function actionsOf<T extends Action['type']>(tr: Transition, type: T): Array<Extract<Action, { type: T }>> {
  return tr.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
}
/** The action types of a transition, in order. */
export function types(tr: Transition): string[] {
  return tr.actions.map((a) => a.type);
}
/** The FinishRun of a transition, if any. */
export function finished(tr: Transition): FinishRun | undefined {
  return actionsOf(tr, 'FinishRun')[0];
}

/** A child run the harness "started" for a StartChildRun; tests end it with {@link Harness.endChild}. */
export interface StoredChild {
  id: string;
  taskId: string;
  attempt: number;
  workflowId: string;
  version: number;
  input: JsonValue;
  status: RunStatus;
  output: JsonValue | null;
  error: string | null;
  failedTask?: { nodeId: string; error: string | null };
  /** False: created but not started yet (the coordinator deferred it). */
  started?: boolean;
}

interface StoredSignal {
  id: string;
  name: string;
  payload: JsonValue;
  consumedBy?: string;
}

/** Construction options: run input/config and the definition-level `output`, `finally` and `timeout_seconds`. */
export interface HarnessOptions {
  input?: JsonValue;
  config?: JsonValue;
  output?: JsonValue;
  finally?: FinallyStep;
  timeout_seconds?: number;
}

/** See the file comment. */
export class Harness implements Store {
  /** The DAG the next event runs on (see {@link publish}). */
  dag: WorkflowDag;
  /** The run's snapshot, kept between events as the coordinator keeps it. */
  readonly run: RunSnapshot;
  /** The real CEL resolver. */
  readonly templates = new CelTemplateResolver();
  /** The fixed clock; tests move it explicitly. */
  now = new Date('2030-01-01T00:00:00.000Z');
  /** Persisted outputs by node id (store map 1). */
  readonly saved = new Map<string, JsonValue>();
  /** Buffered signals in arrival order (store map 2). */
  readonly signals: StoredSignal[] = [];
  /** Every `outputs` call, with the ids asked for. */
  loads: string[][] = [];
  /** Every CreateTask persisted, by node id (the latest one). */
  readonly tasks = new Map<string, CreateTask>();
  /** What `treeRuns` answers, when set (default: this run and its children); Deps `maxRunTree`. */
  treeSize: number | undefined;
  /** Deps `maxRunTree`, when set. */
  maxTree: number | undefined;
  /** Deps `maxSubworkflowDepth`, when set. */
  maxDepth: number | undefined;
  /** Deps `maxValueBytes`, when set. */
  maxValueBytes: number | undefined;
  /** When true, every Store call rejects (a lost database connection). */
  storeDown = false;
  /** When true, `pendingSignal` ignores its `skip` argument (a Store that does not honour it). */
  ignoreSignalSkip = false;
  /** Stored task inputs, by task id. */
  readonly inputsByTask = new Map<string, JsonValue>();
  /** Stored `for_each` iteration outputs, by task id. */
  readonly outputsByTask = new Map<string, JsonValue>();
  /** Iteration task ids of each `for_each` node, in element order. */
  readonly iterationIds = new Map<string, string[]>();
  /** Child runs started, oldest first. */
  readonly children: StoredChild[] = [];
  /** Workflows a SUBWORKFLOW may start: id → default version; `deprecated` lists `id@version`s refused. */
  readonly workflows = new Map<string, number>([['child', 1]]);
  /** `id@version`s that `startableVersion` refuses as deprecated. */
  readonly deprecated = new Set<string>();
  /** Ids handed out before the counter (to control id order). */
  nextIds: string[] = [];
  private ids = 0;

  /** A run of the workflow of `nodes` and `edges` (and `opts.output`), created and not started. */
  constructor(nodes: WorkflowNode[], edges: WorkflowEdge[], opts: HarnessOptions = {}) {
    const def: WorkflowDefinition = {
      nodes,
      edges,
      ...(opts.output !== undefined ? { output: opts.output } : {}),
      ...(opts.finally !== undefined ? { finally: opts.finally } : {}),
      ...(opts.timeout_seconds !== undefined ? { timeout_seconds: opts.timeout_seconds } : {}),
    };
    this.dag = buildDag(def);
    this.run = newRunSnapshot('run-1', 'wf', 1, opts.input ?? {}, opts.config ?? {});
  }

  // Store: answered from the maps above; each call rejects while `storeDown`.

  /** The saved outputs of `nodeIds` (recorded in {@link loads}). */
  async outputs(nodeIds: string[]): Promise<Map<string, JsonValue>> {
    if (this.storeDown) throw new Error('connection lost');
    this.loads.push([...nodeIds]);
    const out = new Map<string, JsonValue>();
    for (const id of nodeIds) if (this.saved.has(id)) out.set(id, this.saved.get(id) as JsonValue);
    return out;
  }

  /** The oldest unconsumed buffered signal named `name`, skipping `skip` (unless `ignoreSignalSkip`). */
  async pendingSignal(name: string, skip: readonly string[] = []): Promise<BufferedSignal | undefined> {
    if (this.storeDown) throw new Error('connection lost');
    const skipped = this.ignoreSignalSkip ? [] : skip;
    const s = this.signals.find((x) => x.name === name && x.consumedBy === undefined && !skipped.includes(x.id));
    return s && { id: s.id, payload: s.payload };
  }

  /** The iteration outputs of `nodeId` in element order, or their total size when over `maxChars`. */
  async iterationOutputs(nodeId: string, maxChars: number): Promise<JsonValue[] | { tooLarge: number }> {
    if (this.storeDown) throw new Error('connection lost');
    const outputs = (this.iterationIds.get(nodeId) ?? []).map((id) => this.outputsByTask.get(id) ?? null);
    const total = outputs.reduce<number>((n, o) => n + JSON.stringify(o).length, 0);
    return total > maxChars ? { tooLarge: total } : outputs;
  }

  /** The stored input of task `taskId`. */
  async taskInput(taskId: string): Promise<JsonValue | undefined> {
    if (this.storeDown) throw new Error('connection lost');
    return this.inputsByTask.get(taskId);
  }

  /** The latest child run started for (`taskId`, `attempt`). */
  async childRun(taskId: string, attempt: number): Promise<ChildRun | undefined> {
    if (this.storeDown) throw new Error('connection lost');
    const c = [...this.children].reverse().find((x) => x.taskId === taskId && x.attempt === attempt);
    return (
      c && {
        id: c.id,
        status: c.status,
        output: c.output,
        error: c.error,
        ...(c.failedTask ? { failedTask: c.failedTask } : {}),
        started: c.started ?? true,
        workflowId: c.workflowId,
        version: c.version,
        input: c.input,
        config: {},
      }
    );
  }

  /** {@link treeSize}, else this run and its children. */
  async treeRuns(): Promise<number> {
    if (this.storeDown) throw new Error('connection lost');
    return this.treeSize ?? 1 + this.children.length;
  }

  /** `version`, else the workflow's default from {@link workflows}; an error for an unknown or deprecated one. */
  async startableVersion(workflowId: string, version?: number): Promise<{ version: number } | { error: string }> {
    if (this.storeDown) throw new Error('connection lost');
    const dflt = this.workflows.get(workflowId);
    if (dflt === undefined) return { error: `workflow ${workflowId} not found` };
    const v = version ?? dflt;
    if (v > dflt) return { error: `workflow ${workflowId} version ${v} not found` };
    if (this.deprecated.has(`${workflowId}@${v}`)) return { error: `workflow ${workflowId} version ${v} is deprecated` };
    return { version: v };
  }

  /** Ends the latest child run of SUBWORKFLOW `nodeId` and fires the parent's timer, as the coordinator does. */
  endChild(
    nodeId: string,
    status: RunStatus,
    result: { output?: JsonValue; error?: string; failedTask?: { nodeId: string; error: string | null } } = {},
  ): Promise<Transition> {
    const n = this.node(nodeId);
    const c = [...this.children].reverse().find((x) => x.taskId === n.taskId);
    if (!c) throw new Error(`no child run for ${nodeId}`);
    c.status = status;
    c.output = result.output ?? null;
    c.error = result.error ?? null;
    if (result.failedTask) c.failedTask = result.failedTask;
    return this.fireTimer(nodeId);
  }

  /** The state of iteration `i` of a `for_each` node. */
  iteration(nodeId: string, i: number): NodeState {
    const it = this.node(nodeId).iterations?.[i];
    if (!it) throw new Error(`node ${nodeId} has no iteration ${i}`);
    return it;
  }

  /** Reports iteration `i`'s current attempt as completed with `output`. */
  completeIteration(nodeId: string, i: number, output: JsonValue = {}): Promise<Transition> {
    const it = this.iteration(nodeId, i);
    return this.try({ type: 'NodeCompleted', taskId: it.taskId, nodeId, attempt: it.attempt, output });
  }

  /** Reports iteration `i`'s current attempt as failed with `error`. */
  failIteration(nodeId: string, i: number, error = 'boom'): Promise<Transition> {
    const it = this.iteration(nodeId, i);
    return this.try({ type: 'NodeFailed', taskId: it.taskId, nodeId, attempt: it.attempt, error });
  }

  /** What a machine of this harness is given: its resolver, itself as the Store, its clock and ids, the limits set. */
  deps(): Deps {
    return {
      templates: this.templates,
      store: this,
      now: () => this.now,
      newId: () => this.nextIds.shift() ?? `t${String(++this.ids).padStart(3, '0')}`,
      ...(this.maxDepth !== undefined ? { maxSubworkflowDepth: this.maxDepth } : {}),
      ...(this.maxTree !== undefined ? { maxRunTree: this.maxTree } : {}),
      ...(this.maxValueBytes !== undefined ? { maxValueBytes: this.maxValueBytes } : {}),
    };
  }

  /** Applies one event on a fresh Machine; persists the transition on success. */
  async try(ev: RunEvent): Promise<Transition> {
    this.run.context.tasks = new Map(); // reloaded snapshot: no outputs cached
    const tr = await new Machine(this.dag, this.run, this.deps()).apply(ev);
    this.persist(tr);
    return tr;
  }

  /**
   * One event's working state over the run as it is (no outputs cached), for calling a node kind
   * directly and reading its outcome. What it emits lands in `step.tr` and evolves the snapshot,
   * but is not persisted: use one harness per direct call, or call it last.
   */
  step(): Step {
    this.run.context.tasks = new Map();
    return new Step(this.dag, this.run, this.deps());
  }

  /** Alias of {@link try} for events expected to succeed. */
  apply(ev: RunEvent): Promise<Transition> {
    return this.try(ev);
  }

  private persist(tr: Transition): void {
    for (const a of tr.actions) {
      switch (a.type) {
        case 'CreateTask':
          this.tasks.set(a.node.node_id, a);
          if (a.output !== undefined) this.saved.set(a.node.node_id, a.output);
          if (a.input !== undefined) this.inputsByTask.set(a.taskId, a.input);
          break;
        case 'CreateIterations':
          this.iterationIds.set(
            a.node.node_id,
            a.iterations.map((it) => it.taskId),
          );
          for (const it of a.iterations) this.inputsByTask.set(it.taskId, it.input);
          break;
        case 'CompleteTask':
          if (this.iterationIds.get(a.nodeId)?.includes(a.taskId)) this.outputsByTask.set(a.taskId, a.output);
          else this.saved.set(a.nodeId, a.output);
          break;
        case 'StartChildRun':
          this.children.push({
            id: a.childRunId,
            taskId: a.taskId,
            attempt: a.attempt,
            workflowId: a.workflowId,
            version: a.version,
            input: a.input,
            status: RunStatus.Running,
            output: null,
            error: null,
          });
          break;
        case 'ResolveWait':
          if (a.output !== undefined) this.saved.set(a.nodeId, a.output);
          break;
        case 'BufferSignal':
          this.signals.push({ id: `s${this.signals.length + 1}`, name: a.name, payload: a.payload });
          break;
        case 'ConsumeSignal': {
          const s = this.signals.find((x) => x.id === a.signalId);
          if (s) s.consumedBy = a.taskId;
          break;
        }
        case 'ReopenIterations':
          this.saved.delete(a.nodeId);
          break;
        case 'NextLoopIteration':
          // The ended iteration's tasks are archived: their outputs are no longer the nodes'.
          for (const id of a.bodyNodeIds) this.saved.delete(id);
          break;
        case 'ReopenRun':
          for (const id of a.resetNodes) {
            this.saved.delete(id);
            this.tasks.delete(id);
            this.iterationIds.delete(id);
          }
          break;
        default:
          break;
      }
    }
  }

  /** The state of a reached node; throws if it was never reached. */
  node(nodeId: string): NodeState {
    const n = this.run.nodes.get(nodeId);
    if (!n) throw new Error(`node ${nodeId} not reached`);
    return n;
  }

  /** Starts the run (at `startNodeId`, else the entry node). */
  start(startNodeId?: string): Promise<Transition> {
    return this.try({ type: 'RunStarted', ...(startNodeId ? { startNodeId } : {}) });
  }

  /** Reports the node's current attempt as completed with `output`. */
  complete(nodeId: string, output: JsonValue = {}): Promise<Transition> {
    const n = this.node(nodeId);
    return this.try({ type: 'NodeCompleted', taskId: n.taskId, nodeId, attempt: n.attempt, output });
  }

  /** Reports the node's current attempt as failed with `error`. */
  fail(nodeId: string, error = 'boom'): Promise<Transition> {
    const n = this.node(nodeId);
    return this.try({ type: 'NodeFailed', taskId: n.taskId, nodeId, attempt: n.attempt, error });
  }

  /** Fires the timer of the node's current task. */
  fireTimer(nodeId: string): Promise<Transition> {
    return this.try({ type: 'TimerFired', taskId: this.node(nodeId).taskId, nodeId });
  }

  /** Sends the run the signal `name` with `payload`. */
  signal(name: string, payload?: JsonValue): Promise<Transition> {
    return this.try({ type: 'SignalReceived', name, ...(payload !== undefined ? { payload } : {}) });
  }

  /** Cancels the run, with `reason` when given. */
  cancel(reason?: string): Promise<Transition> {
    return this.try({ type: 'RunCancelled', ...(reason ? { reason } : {}) });
  }

  /** Retries the run from `nodeId` on the same version, optionally with new input/config, or only its failed iterations. */
  retry(nodeId: string, opts: { input?: JsonValue; config?: JsonValue; version?: number; failedIterationsOnly?: boolean } = {}): Promise<Transition> {
    return this.try({
      type: 'RunRetried',
      fromNodeId: nodeId,
      version: opts.version ?? this.run.version,
      input: opts.input,
      config: opts.config,
      ...(opts.failedIterationsOnly ? { failedIterationsOnly: true } : {}),
    });
  }

  /** Publishes a new definition: later events run on its DAG (pass `version` to `retry`). */
  publish(nodes: WorkflowNode[], edges: WorkflowEdge[]): void {
    this.dag = buildDag({ nodes, edges });
  }

  /** Moves the clock forward. */
  advance(seconds: number): void {
    this.now = new Date(this.now.getTime() + seconds * 1000);
  }
}

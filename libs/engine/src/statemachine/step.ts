/**
 * Internal: the working state of one `Machine.apply` call (the transition being built, the clock
 * reading, the signals consumed) and the helpers every handler shares. Not exported from the package.
 */
import type { WorkflowDag } from '../model/dag.js';
import { isSensitive, REDACTED } from '../model/payload-hygiene.js';
import type { WorkflowNode } from '../model/workflow-definition.js';
import { RunStatus, TaskStatus, isRunTerminal, isTaskCompleted, type JsonValue } from '../model/workflow-types.js';
import type { Action } from './actions.js';
import { findUnstorable, formatBytes } from '../model/storable-json.js';
import { DEFAULT_MAX_SUBWORKFLOW_DEPTH, DEFAULT_MAX_VALUE_BYTES, type Deps, type Transition } from './deps.js';
import { StoreError } from './errors.js';
import { applyAction, hasActiveNode } from './apply-action.js';
import type { Journal } from './journal.js';
import type { RunContext } from '../model/run-context.js';
import type { DecidedOutcome, RunSnapshot } from './state.js';

/**
 * How many times the largest single value a value gathered from many may be: the default run
 * output (every sink's output), a `for_each` node's output (every iteration's), and the resolved
 * inputs of one `for_each` node's iterations together.
 */
export const GATHERED_VALUE_FACTOR = 16;

/** A rejection of the Store, wrapped as transient. */
export function storeError(err: unknown): StoreError {
  return err instanceof StoreError ? err : new StoreError(err);
}

/** True for a transient Store failure: the caller should retry the event. */
export function isStoreError(err: unknown): err is StoreError {
  return err instanceof StoreError;
}

/** The message of any thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Why a value the machine computed cannot be stored, or undefined when it can: a string or key
 * PostgreSQL refuses, a non-JSON value or too deep nesting (`<field> is not storable: NUL
 * character at $.k`), or JSON text longer than `maxBytes` (`resolved input too large: 100 MiB >
 * 1 MiB`, with `sizeField` naming it). Pure: the size is `JSON.stringify`'s length.
 */
export function valueProblem(field: string, value: unknown, maxBytes: number, sizeField = field): string | undefined {
  const bad = findUnstorable(value);
  if (bad) return `${field} is not storable: ${bad.reason} at ${bad.path}`;
  return sizeProblem(value, maxBytes, sizeField);
}

/**
 * Why a value's JSON text is too long (`<sizeField> too large: 2 MiB > 1 MiB`), or undefined.
 * For values made of values already stored (the default run output), where only the size is new.
 */
export function sizeProblem(value: unknown, maxBytes: number, sizeField: string): string | undefined {
  let len: number;
  try {
    len = value === undefined ? 4 : (JSON.stringify(value) ?? 'null').length;
  } catch {
    return `${sizeField} too large: more than ${formatBytes(maxBytes)}`; // beyond V8's longest string
  }
  return len > maxBytes ? `${sizeField} too large: ${formatBytes(len)} > ${formatBytes(maxBytes)}` : undefined;
}

/** One event's working state: the transition being built, the clock reading, the run. */
export class Step {
  /** The transition being built: every action emitted so far, in order. */
  readonly tr: Transition = { actions: [] };
  /** The clock reading of this event (`Deps.now()`, read once): every time the event computes uses it. */
  readonly now: Date;
  /** Ids of buffered signals consumed by this transition (not yet persisted). */
  readonly consumedSignals: string[] = [];

  /** `journal` records every change to the snapshot so a failed event can be undone. */
  constructor(
    readonly dag: WorkflowDag,
    readonly run: RunSnapshot,
    readonly deps: Deps,
    private readonly journal?: Journal,
  ) {
    this.now = deps.now();
  }

  /** Records action `a` on the transition and applies it to the snapshot (through the journal). */
  emit(a: Action): void {
    if ((a.type === 'CreateTask' || a.type === 'CreateIterations') && a.loopIteration === undefined) {
      // A DO_WHILE body node's task belongs to its loop's current iteration.
      const loopId = this.dag.loopOf(a.node.node_id);
      const iteration = loopId === undefined ? undefined : this.run.nodes.get(loopId)?.loop?.iteration;
      if (iteration !== undefined) a = { ...a, loopIteration: iteration };
    }
    this.tr.actions.push(a);
    applyAction(this.run, a, this.journal);
  }

  /** Marks the event as changing nothing, with `reason`. */
  ignore(reason: string): void {
    this.tr.ignored = reason;
  }

  /** The run is SUCCEEDED, FAILED, CANCELLED or TIMED_OUT. */
  terminal(): boolean {
    return isRunTerminal(this.run.status);
  }

  /** A fresh task id from Deps. */
  newId(): string {
    return this.deps.newId();
  }

  /** Caches completed node `nodeId`'s `output` for templates that reference it (through the journal). */
  setOutput(nodeId: string, output: JsonValue): void {
    this.journal?.settingOutput(nodeId);
    this.run.context.tasks.set(nodeId, { status: TaskStatus.Completed, output });
  }

  /**
   * Loads, in one Store call, the outputs of the completed nodes among `refs` that are not cached
   * yet; `undefined` refs means every reached node.
   * @throws StoreError when the Store rejects.
   */
  async ensureLoaded(refs: readonly string[] | undefined): Promise<void> {
    const ids = refs ?? [...this.run.nodes.keys()];
    await this.loadPrevious(ids);
    const missing: string[] = [];
    for (const id of ids) {
      const n = this.run.nodes.get(id);
      if (!this.run.context.tasks.has(id) && n && isTaskCompleted(n.status) && !missing.includes(id)) {
        missing.push(id);
      }
    }
    if (missing.length === 0) return;
    let outputs: Map<string, JsonValue>;
    try {
      outputs = await this.deps.store.outputs(missing);
    } catch (err) {
      throw storeError(err);
    }
    for (const id of missing) this.setOutput(id, outputs.get(id) ?? null);
  }

  /**
   * An object of the outputs of those of `nodes` that completed, keyed by node id, in the order
   * given (a default run or loop iteration output): a `sensitive` node's replaced by
   * {@link REDACTED} (a template may still name it). Loads the outputs it reads.
   * @throws StoreError when the Store rejects.
   */
  async completedOutputs(nodes: readonly WorkflowNode[]): Promise<Record<string, JsonValue>> {
    const ids = nodes
      .map((n) => n.node_id)
      .filter((id) => {
        const st = this.run.nodes.get(id);
        return st !== undefined && isTaskCompleted(st.status);
      });
    await this.ensureLoaded(ids);
    const out: Record<string, JsonValue> = {};
    for (const id of ids) {
      // defineProperty: a node id such as __proto__ is a key like any other.
      Object.defineProperty(out, id, {
        value: isSensitive(this.dag.getNode(id)) ? REDACTED : (this.run.context.tasks.get(id)?.output ?? null),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }

  /**
   * Loads the previous iteration's output (its task's input) of each DO_WHILE among `ids` whose
   * snapshot left it unread, one Store call a loop (a loop names its own tasks rarely more than once).
   * @throws StoreError when the Store rejects.
   */
  private async loadPrevious(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const n = this.run.nodes.get(id);
      if (!n?.loop || n.loop.previous !== undefined) continue;
      let previous: JsonValue | undefined;
      try {
        previous = await this.deps.store.taskInput(n.taskId);
      } catch (err) {
        throw storeError(err);
      }
      this.journal?.touch(n);
      n.loop = { iteration: n.loop.iteration, previous: previous ?? null };
    }
  }

  /** Loads the outputs `node`'s templates may read (its static task refs, or everything). */
  ensureOutputs(node: WorkflowNode): Promise<void> {
    return this.ensureLoaded(this.dag.taskRefs(node.node_id));
  }

  /** The deepest chain of child runs (Deps `maxSubworkflowDepth`, default 10). */
  get maxDepth(): number {
    return this.deps.maxSubworkflowDepth ?? DEFAULT_MAX_SUBWORKFLOW_DEPTH;
  }

  /** Largest JSON text of a value the machine computes (Deps `maxValueBytes`, default 1 MiB). */
  get maxValueBytes(): number {
    return this.deps.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
  }

  /**
   * Resolves the CEL templates of `node.spec` (an absent spec resolves as `{}`) against the run
   * context and checks that the result can be stored.
   * @throws StoreError (transient) while loading outputs; Error naming the node for a template
   * that cannot be resolved; Error `input is not storable: … at $.k` or `resolved input too
   * large: …` for a result the database would refuse (or that is over `maxValueBytes`).
   */
  async resolveInput(node: WorkflowNode, locals?: Readonly<Record<string, JsonValue>>): Promise<JsonValue> {
    const input = await this.resolveSpec(node, locals);
    this.checkInput(input);
    return input;
  }

  /**
   * {@link resolveInput} without the storable check (the caller must call {@link checkInput}).
   * `locals` are extra variables (a `for_each` iteration's element, index and count).
   */
  async resolveSpec(node: WorkflowNode, locals?: Readonly<Record<string, JsonValue>>): Promise<JsonValue> {
    await this.ensureOutputs(node);
    try {
      const ctx = this.templateContext();
      return this.deps.templates.resolve(node.spec ?? {}, locals ? { ...ctx, locals } : ctx, this.now);
    } catch (err) {
      throw new Error(`CEL resolution for node ${node.node_id}: ${errorMessage(err)}`);
    }
  }

  /** @throws Error when a resolved input cannot be stored (see {@link valueProblem}). */
  checkInput(input: JsonValue): void {
    const problem = valueProblem('input', input, this.maxValueBytes, 'resolved input');
    if (problem) throw new Error(problem);
  }

  /**
   * What templates see: the run context (input, config, loaded outputs) plus the status of every
   * reached node, so `tasks.<id>.status` works for nodes whose outputs were never loaded. O(1):
   * the resolver reads the snapshot's node map directly.
   */
  templateContext(): RunContext {
    const { input, config, tasks } = this.run.context;
    const d = this.run.decided;
    // Only the finally step (validation sees to it) reads `run`, once the outcome is decided.
    const run = d ? { run: { id: this.run.id, status: d.status, error: d.reason ?? null } } : {};
    return { input, config, tasks, reached: this.run.nodes, ...run };
  }

  /** Fails the run with `reason` ({@link endRun} FAILED), for a permanent routing error. */
  failRun(reason: string): void {
    this.endRun({ status: RunStatus.Failed, reason });
  }

  /**
   * Ends the run with `outcome`: one FinishRun — or, when the definition has a `finally` step, no
   * outcome is decided yet and the run started (a run QUEUED for its concurrency slot, which
   * reached no node, ran nothing to clean up after), decides it: the tasks still active are
   * cancelled (with the outcome's reason), a DecideRun records the outcome, and the run's deadline
   * is cleared (the step is bounded by its own timeout and retries). The machine then dispatches the step
   * (finally.ts); the run stays RUNNING until it ends.
   */
  endRun(outcome: DecidedOutcome): void {
    if (!this.dag.finallyNode || this.run.decided || this.run.nodes.size === 0) {
      this.emit({ type: 'FinishRun', ...outcome });
      return;
    }
    if (hasActiveNode(this.run)) this.emit({ type: 'CancelTasks', reason: outcome.reason ?? `run ${outcome.status}` });
    this.emit({ type: 'DecideRun', ...outcome });
    if (this.run.deadlineAt !== undefined) this.emit({ type: 'ArmDeadline', deadlineAt: null });
  }
}

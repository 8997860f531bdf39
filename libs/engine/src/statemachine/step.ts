/**
 * Internal: the working state of one `Machine.apply` call (seed 000's `Machine` fields `tr`,
 * `now`, `loaded`) and the helpers every handler shares. Not exported from the package.
 */
import type { WorkflowDag } from '../model/dag.js';
import type { WorkflowNode } from '../model/workflow-definition.js';
import { RunStatus, TaskStatus, isRunTerminal, isTaskCompleted, type JsonValue } from '../model/workflow-types.js';
import type { Action } from './actions.js';
import type { Deps, Transition } from './deps.js';
import { StoreError } from './errors.js';
import { applyAction } from './apply-action.js';
import type { RunContext, RunSnapshot } from './state.js';

/** A rejection of the Store, wrapped as transient. */
export function storeError(err: unknown): StoreError {
  return err instanceof StoreError ? err : new StoreError(err);
}

/** True for a transient Store failure (seed 000 `isStoreError`). */
export function isStoreError(err: unknown): err is StoreError {
  return err instanceof StoreError;
}

/** The message of any thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One event's working state: the transition being built, the clock reading, the run. */
export class Step {
  readonly tr: Transition = { actions: [] };
  readonly now: Date;
  /** Ids of buffered signals consumed by this transition (not yet persisted). */
  readonly consumedSignals: string[] = [];

  constructor(
    readonly dag: WorkflowDag,
    readonly run: RunSnapshot,
    readonly deps: Deps,
  ) {
    this.now = deps.now();
  }

  /** Records an action and applies it to the snapshot (seed 000 `emit`). */
  emit(a: Action): void {
    this.tr.actions.push(a);
    applyAction(this.run, a);
  }

  /** Marks the event as changing nothing, with a reason (seed 000 `ignore`). */
  ignore(reason: string): void {
    this.tr.ignored = reason;
  }

  /** The run is SUCCEEDED, FAILED or CANCELLED. */
  terminal(): boolean {
    return isRunTerminal(this.run.status);
  }

  /** A fresh task id from Deps. */
  newId(): string {
    return this.deps.newId();
  }

  /** Caches a completed node's output for templates that reference it (seed 000 `setOutput`). */
  setOutput(nodeId: string, output: JsonValue): void {
    this.run.context.tasks.set(nodeId, { status: TaskStatus.Completed, output });
  }

  /**
   * Loads, in one Store call, the outputs of the completed nodes among `refs` that are not cached
   * yet; `undefined` refs means every reached node (seed 000 `ensureOutputs`).
   * @throws StoreError when the Store rejects.
   */
  async ensureLoaded(refs: readonly string[] | undefined): Promise<void> {
    const ids = refs ?? [...this.run.nodes.keys()];
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

  /** Loads the outputs `node`'s templates may read (its static task refs, or everything). */
  ensureOutputs(node: WorkflowNode): Promise<void> {
    return this.ensureLoaded(this.dag.taskRefs(node.node_id));
  }

  /**
   * Resolves the CEL templates of `node.spec` (an absent spec resolves as `{}`) against the run
   * context (seed 000 `resolveInput`).
   * @throws StoreError (transient) while loading outputs; Error naming the node for a template
   * that cannot be resolved.
   */
  async resolveInput(node: WorkflowNode): Promise<JsonValue> {
    await this.ensureOutputs(node);
    try {
      return this.deps.templates.resolve(node.spec ?? {}, this.templateContext(), this.now);
    } catch (err) {
      throw new Error(`CEL resolution for node ${node.node_id}: ${errorMessage(err)}`);
    }
  }

  /**
   * What templates see: the run context (input, config, loaded outputs) plus the status of every
   * reached node, so `tasks.<id>.status` works for nodes whose outputs were never loaded. O(1):
   * the resolver reads the snapshot's node map directly.
   */
  templateContext(): RunContext {
    const { input, config, tasks } = this.run.context;
    return { input, config, tasks, reached: this.run.nodes };
  }

  /** Fails the run for a permanent routing error (seed 000 `failRun`). */
  failRun(reason: string): void {
    this.emit({ type: 'FinishRun', status: RunStatus.Failed, reason });
  }
}

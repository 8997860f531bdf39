/**
 * Internal: the undo journal of one `Machine.apply` call. Instead of copying the whole snapshot
 * before an event (O(reached nodes)), the code that mutates it (`applyAction`, `Step.setOutput`)
 * tells the journal first what it is about to change: a node state object, a key of the node
 * map, a key of the output cache. {@link Journal.restore} puts exactly those back, so a rejected
 * event leaves the caller's snapshot as it was: the same Map and NodeState objects (`for_each`
 * iterations included), the same contents, the same key order.
 */
import type { JsonValue } from '../model/workflow-types.js';
import type { StepResult } from '../model/run-context.js';
import type { NodeState, RunSnapshot } from './state.js';

type Entries<V> = Array<[string, V]>;

/** First-touch record of one Map: prior values of the keys set or deleted, and, once a key was deleted, the whole prior order. */
class MapJournal<V> {
  /** Prior value of every key touched (`undefined`: the key was absent). */
  private readonly prior = new Map<string, V | undefined>();
  /** Every entry as it was before the first deletion (deleting and re-adding moves a key). */
  private order?: Entries<V>;

  constructor(readonly map: Map<string, V>) {}

  /** Call before `map.set(key, …)`. */
  setting(key: string): void {
    if (!this.prior.has(key)) this.prior.set(key, this.map.get(key));
  }

  /** Call before `map.delete(key)` or `map.clear()`. O(size) the first time, then O(1). */
  deleting(): void {
    if (this.order) return;
    this.order = [];
    for (const [k, v] of this.map) {
      // A key this event added is not part of the prior order; one it replaced was its prior value.
      if (!this.prior.has(k)) this.order.push([k, v]);
      else if (this.prior.get(k) !== undefined) this.order.push([k, this.prior.get(k) as V]);
    }
  }

  restore(): void {
    if (this.order) {
      this.map.clear();
      for (const [k, v] of this.order) this.map.set(k, v);
      return;
    }
    // Without a deletion, touched keys kept their place; added ones were appended.
    for (const [k, v] of this.prior) {
      if (v === undefined) this.map.delete(k);
      else this.map.set(k, v);
    }
  }
}

/** See the file comment. Create one per event, before the first change. */
export class Journal {
  private readonly status: RunSnapshot['status'];
  private readonly version: number;
  private readonly input: JsonValue;
  private readonly config: JsonValue;
  private readonly deadlineAt: Date | undefined;
  private readonly decided: RunSnapshot['decided'];
  /** Node state objects changed in place, with a copy of their prior contents. */
  private readonly objects = new Map<NodeState, NodeState>();
  private readonly nodes: MapJournal<NodeState>;
  private readonly tasks: MapJournal<StepResult>;

  /** Starts a journal of `run`: records its status, version, input, config, deadline and decided outcome as they are now. */
  constructor(private readonly run: RunSnapshot) {
    this.status = run.status;
    this.deadlineAt = run.deadlineAt;
    this.decided = run.decided;
    this.version = run.version;
    this.input = run.context.input;
    this.config = run.context.config;
    this.nodes = new MapJournal(run.nodes);
    this.tasks = new MapJournal(run.context.tasks);
  }

  /** Call before changing a node state object (a node's or an iteration's) in place. */
  touch(n: NodeState): void {
    if (!this.objects.has(n)) this.objects.set(n, { ...n });
  }

  /** Call before `run.nodes.set(id, …)`. */
  settingNode(id: string): void {
    this.nodes.setting(id);
  }

  /** Call before `run.nodes.delete(…)`. */
  deletingNode(): void {
    this.nodes.deleting();
  }

  /** Call before `run.context.tasks.set(id, …)`. */
  settingOutput(id: string): void {
    this.tasks.setting(id);
  }

  /** Call before `run.context.tasks.delete(…)`. */
  deletingOutput(): void {
    this.tasks.deleting();
  }

  /** Puts back everything recorded, and the run's status, version, input, config, deadline and decided outcome. */
  restore(): void {
    const run = this.run;
    run.status = this.status;
    if (this.deadlineAt) run.deadlineAt = this.deadlineAt;
    else delete run.deadlineAt;
    if (this.decided) run.decided = this.decided;
    else delete run.decided;
    run.version = this.version;
    run.context.input = this.input;
    run.context.config = this.config;
    for (const [obj, copy] of this.objects) {
      for (const key of Object.keys(obj)) if (!(key in copy)) delete (obj as unknown as Record<string, unknown>)[key];
      Object.assign(obj, copy);
    }
    this.nodes.restore();
    this.tasks.restore();
    run.nodes = this.nodes.map;
    run.context.tasks = this.tasks.map;
  }
}

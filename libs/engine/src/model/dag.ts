import { isLoop, loopSpec } from './do-while.js';
import type { StepResult } from './run-context.js';
import { expressionTaskRefs, templatePattern } from './template-syntax.js';
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from './workflow-definition.js';
import { NodeType, isTaskCompleted, type JsonValue } from './workflow-types.js';

/**
 * Extracts `tasks.<id>` and `tasks["<id>"]` references from the `{{ }}` expressions in `texts`
 * in order, duplicates kept. Returns `undefined` when any
 * expression uses `tasks` in another way (e.g. `tasks[input.key]`): the count of static
 * references must equal the count of the word `tasks`, otherwise any output may be read.
 * The word `tasks` outside `{{ }}` is ignored.
 */
export function templateTaskRefs(texts: readonly string[]): string[] | undefined {
  const refs: string[] = [];
  for (const text of texts) {
    for (const expr of text.matchAll(templatePattern())) {
      const found = expressionTaskRefs(expr[1]);
      if (found === undefined) return undefined;
      refs.push(...found);
    }
  }
  return refs;
}

/**
 * Every string in a JSON value, object keys included, depth first, so
 * templates nested deep in a body are found. A bare string yields itself; `undefined` nothing.
 */
export function jsonStrings(v: JsonValue | undefined): string[] {
  const out: string[] = [];
  const walk = (x: JsonValue | undefined): void => {
    if (typeof x === 'string') out.push(x);
    else if (Array.isArray(x)) x.forEach(walk);
    else if (x !== null && typeof x === 'object') {
      for (const [k, val] of Object.entries(x)) {
        out.push(k);
        walk(val);
      }
    }
  };
  walk(v);
  return out;
}

const EMPTY_EDGES: readonly WorkflowEdge[] = Object.freeze([]);

/**
 * An indexed, read-only view of a {@link WorkflowDefinition}: adjacency
 * maps make every graph query O(1) or O(degree). Build once per definition version with
 * {@link buildDag} and share it (the coordinator caches it per workflow version). It does not
 * validate: see `validateDefinition`.
 */
export class WorkflowDag {
  private readonly byId = new Map<string, WorkflowNode>();
  private readonly outgoing = new Map<string, WorkflowEdge[]>();
  private readonly incoming = new Map<string, WorkflowEdge[]>();
  private readonly entry: WorkflowNode | undefined;
  private readonly refs = new Map<string, string[]>();
  private readonly runOutputRefs: string[] | undefined;
  private readonly withErrorEdge = new Set<string>();
  private readonly routed = new Set<string>();
  private readonly incomingPositions = new Map<string, Map<string, number>>();
  private readonly plainSources = new Map<string, boolean>();
  /** The DO_WHILE node of each body node. */
  private readonly loops = new Map<string, string>();
  /** Each DO_WHILE node's body nodes, in spec order. */
  private readonly bodies = new Map<string, WorkflowNode[]>();

  /** Use {@link buildDag}. */
  constructor(readonly definition: WorkflowDefinition) {
    for (const n of definition.nodes) this.byId.set(n.node_id, n);
    // The finally step is found by id (its reports, retries, queue) but is no node of the graph.
    if (definition.finally) this.byId.set(definition.finally.node_id, definition.finally);
    const edges = [...(definition.edges ?? [])];
    // A DO_WHILE's body nodes are found by id and routed over their body edges like any node,
    // but are neither entry nor sink of the graph: the loop starts its body and reads its end.
    for (const n of definition.nodes) {
      if (!isLoop(n)) continue;
      const { bodyNodes, bodyEdges } = loopSpec(n);
      this.bodies.set(n.node_id, bodyNodes);
      for (const b of bodyNodes) {
        if (this.byId.has(b.node_id)) continue;
        this.byId.set(b.node_id, b);
        this.loops.set(b.node_id, n.node_id);
      }
      edges.push(...bodyEdges);
    }
    for (const e of edges) {
      push(this.outgoing, e.from, e);
      push(this.incoming, e.to, e);
      if (e.on_error === true) this.withErrorEdge.add(e.from);
      if (e.on_error === true || e.condition !== undefined) this.routed.add(e.from);
    }
    this.entry = definition.nodes.find((n) => !this.incoming.has(n.node_id));

    for (const [id, n] of this.byId) {
      const texts = jsonStrings(n.spec);
      if (typeof n.for_each === 'string') texts.push(n.for_each); // the array a for_each node fans out over
      // Flow keys resolve in the spec's scope, at the same moment.
      if (typeof n.concurrency?.key === 'string') texts.push(n.concurrency.key);
      if (typeof n.rate_limit?.key === 'string') texts.push(n.rate_limit.key);
      const implicit: string[] = [];
      if (isLoop(n)) {
        // What the loop evaluates after each iteration: its condition and its output.
        const { condition, output } = loopSpec(n);
        texts.length = 0;
        texts.push(condition ?? '', ...jsonStrings(output));
      }
      if (n.type === NodeType.Switch) {
        // A SWITCH reads its conditions and passes a predecessor's output through.
        for (const e of this.outgoingEdges(id)) texts.push(e.condition ?? '');
        for (const e of this.incomingEdges(id)) implicit.push(e.from);
      }
      const refs = templateTaskRefs(texts);
      if (refs) this.refs.set(id, [...refs, ...implicit]);
    }

    this.runOutputRefs = definition.output === undefined ? this.sinkNodes().map((n) => n.node_id) : templateTaskRefs(jsonStrings(definition.output));
  }

  /** Every node, in spec order (the `finally` step is none of them). */
  get nodes(): readonly WorkflowNode[] {
    return this.definition.nodes;
  }

  /**
   * The definition's `finally` step, or undefined: {@link getNode} finds it by its id, but no
   * edge, entry, sink or descendant query ever returns it.
   */
  get finallyNode(): WorkflowNode | undefined {
    return this.definition.finally;
  }

  /** True when `nodeId` is the definition's `finally` step. */
  isFinally(nodeId: string): boolean {
    return this.definition.finally?.node_id === nodeId;
  }

  /** The node with that id, or `undefined`. */
  getNode(id: string): WorkflowNode | undefined {
    return this.byId.get(id);
  }

  /**
   * The workflow entry node: the node `hint` if given, else the first node
   * in spec order without incoming edges.
   * @throws Error when `hint` names no node, the `finally` step or a DO_WHILE body node, or no node lacks incoming edges.
   */
  startNode(hint?: string): WorkflowNode {
    if (hint) {
      const n = this.byId.get(hint);
      if (!n) throw new Error(`start node ${hint} not found in workflow definition`);
      if (this.isFinally(hint)) throw new Error(`start node ${hint} is the finally step: a run cannot start there`);
      const loop = this.loops.get(hint);
      if (loop !== undefined) throw new Error(`start node ${hint} is in the body of DO_WHILE ${loop}: start at ${loop} instead`);
      return n;
    }
    if (this.entry) return this.entry;
    throw new Error('no start node found: ensure workflow has a node with no incoming edges');
  }

  /** The DO_WHILE node whose body holds `nodeId`, or undefined for a node of the graph itself. */
  loopOf(nodeId: string): string | undefined {
    return this.loops.get(nodeId);
  }

  /** DO_WHILE node `loopId`'s body nodes, in spec order (none for another node). */
  bodyNodes(loopId: string): readonly WorkflowNode[] {
    return this.bodies.get(loopId) ?? [];
  }

  /** Every node of the graph and of every DO_WHILE body, in spec order (never the `finally` step). */
  get allNodes(): WorkflowNode[] {
    return this.definition.nodes.flatMap((n) => [n, ...this.bodyNodes(n.node_id)]);
  }

  /** True when the definition has a DO_WHILE node. */
  get hasLoops(): boolean {
    return this.bodies.size > 0;
  }

  /** DO_WHILE node `loopId`'s body nodes without incoming edges: where each iteration starts. */
  bodySources(loopId: string): WorkflowNode[] {
    return this.bodyNodes(loopId).filter((n) => !this.incoming.has(n.node_id));
  }

  /** DO_WHILE node `loopId`'s body nodes without outgoing edges: an iteration's default output. */
  bodySinks(loopId: string): WorkflowNode[] {
    return this.bodyNodes(loopId).filter((n) => !this.outgoing.has(n.node_id));
  }

  /** The nodes directly reachable from `nodeId`, in edge order (edges to unknown nodes skipped). */
  successors(nodeId: string): WorkflowNode[] {
    const out: WorkflowNode[] = [];
    for (const e of this.outgoingEdges(nodeId)) {
      const n = this.byId.get(e.to);
      if (n) out.push(n);
    }
    return out;
  }

  /** The edges leaving `nodeId`, in definition order. */
  outgoingEdges(nodeId: string): readonly WorkflowEdge[] {
    return this.outgoing.get(nodeId) ?? EMPTY_EDGES;
  }

  /** The edges entering `nodeId`, in definition order. */
  incomingEdges(nodeId: string): readonly WorkflowEdge[] {
    return this.incoming.get(nodeId) ?? EMPTY_EDGES;
  }

  /** True when `nodeId` has an outgoing `on_error` edge (its failures are routed). O(1). */
  hasErrorEdge(nodeId: string): boolean {
    return this.withErrorEdge.has(nodeId);
  }

  /** True when `nodeId` has an outgoing `on_error` edge or an edge with a `condition`. O(1). */
  hasRoutedEdge(nodeId: string): boolean {
    return this.routed.has(nodeId);
  }

  /**
   * True when no source of `nodeId`'s incoming edges decides where it routes (a SWITCH, or a node
   * with a conditional or `on_error` edge): whether each incoming edge is resolved and active then
   * follows from its source's status alone. O(1) after an O(in-degree) first call per node.
   */
  hasPlainSources(nodeId: string): boolean {
    let plain = this.plainSources.get(nodeId);
    if (plain === undefined) {
      plain = !this.incomingEdges(nodeId).some((e) => this.routed.has(e.from) || this.byId.get(e.from)?.type === NodeType.Switch);
      this.plainSources.set(nodeId, plain);
    }
    return plain;
  }

  /**
   * The position of the edge `from` → `to` among `to`'s incoming edges (the first such edge), or
   * `undefined`. O(1) after an O(in-degree) index of `to`, built on first use and kept.
   */
  incomingPosition(from: string, to: string): number | undefined {
    let positions = this.incomingPositions.get(to);
    if (!positions) {
      positions = new Map();
      const edges = this.incomingEdges(to);
      for (let i = edges.length - 1; i >= 0; i--) positions.set(edges[i].from, i);
      this.incomingPositions.set(to, positions);
    }
    return positions.get(from);
  }

  /**
   * Every node id reachable from `nodeId`, breadth first, `nodeId` itself excluded (what a
   * retry from `nodeId` resets).
   */
  descendants(nodeId: string): string[] {
    const visited = new Set([nodeId]);
    const queue = [nodeId];
    const result: string[] = [];
    while (queue.length > 0) {
      const cur = queue.shift() as string;
      for (const e of this.outgoingEdges(cur)) {
        if (!visited.has(e.to)) {
          visited.add(e.to);
          queue.push(e.to);
          result.push(e.to);
        }
      }
    }
    return result;
  }

  /**
   * The output of the first completed predecessor of `nodeId` (in incoming-edge order) that has
   * one, from the loaded `tasks`; `undefined` if none (a SWITCH passes it through as its
   * output).
   */
  predecessorOutput(nodeId: string, tasks: ReadonlyMap<string, StepResult>): JsonValue | undefined {
    for (const e of this.incomingEdges(nodeId)) {
      const r = tasks.get(e.from);
      if (r && isTaskCompleted(r.status) && r.output !== undefined) return r.output;
    }
    return undefined;
  }

  /**
   * The node ids whose outputs `nodeId`'s templates may read, duplicates
   * kept; a SWITCH adds its conditions' refs and its predecessors, a `for_each` node its array's. `undefined` when they cannot
   * be determined statically: the caller must load every completed output.
   */
  taskRefs(nodeId: string): string[] | undefined {
    return this.refs.get(nodeId);
  }

  /**
   * The node ids the run output reads: the task refs of the definition's `output` template
   * (`undefined` when dynamic: load every completed output), or, without one, the sink nodes.
   */
  outputRefs(): string[] | undefined {
    return this.runOutputRefs;
  }

  /** The nodes without outgoing edges, in spec order: the default run output's sources. */
  sinkNodes(): WorkflowNode[] {
    return this.definition.nodes.filter((n) => !this.outgoing.has(n.node_id));
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/**
 * Builds the indexed DAG of a definition: adjacency, the entry node (first
 * node in spec order without incoming edges) and the static task references of every node. A
 * missing `edges` list counts as empty. Never throws; validate first.
 */
export function buildDag(def: WorkflowDefinition): WorkflowDag {
  return new WorkflowDag(def);
}

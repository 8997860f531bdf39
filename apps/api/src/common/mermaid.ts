import { loopIterationText, loopProgress } from '@weft/contract';
import { loopBody, type LoopBody } from './loop-body.js';

/**
 * What the picture needs of a definition: the nodes (with type; `for_each` marks a fan-out node,
 * `spec.workflow` names a SUBWORKFLOW node's child workflow, `spec.body` holds a DO_WHILE node's
 * body), edges and the `finally` step.
 */
export interface MermaidGraph {
  nodes: { node_id: string; type?: string; for_each?: unknown; spec?: unknown }[];
  edges: { from: string; to: string; condition?: string; on_error?: boolean }[];
  finally?: { node_id: string; type?: string };
}

/** The label of the links drawn from the sink nodes to the `finally` step. */
export const FINALLY_LINK = 'finally';

/**
 * The links that show the `finally` step, which no edge names: one from each sink node (a node
 * without outgoing edges) to it, labelled {@link FINALLY_LINK}; none without a step.
 */
export function finallyLinks(graph: MermaidGraph): { from: string; to: string }[] {
  const step = graph.finally;
  if (!step || typeof step.node_id !== 'string') return [];
  const sources = new Set((graph.edges ?? []).map((e) => e.from));
  return (graph.nodes ?? []).filter((n) => !sources.has(n.node_id)).map((n) => ({ from: n.node_id, to: step.node_id }));
}

const STATUS_STYLES: Record<string, string> = {
  PENDING: 'fill:#eeeeee,stroke:#999999',
  QUEUED: 'fill:#e3f2fd,stroke:#64b5f6',
  RUNNING: 'fill:#bbdefb,stroke:#1976d2',
  WAITING: 'fill:#fff9c4,stroke:#fbc02d',
  COMPLETED: 'fill:#c8e6c9,stroke:#388e3c',
  FAILED: 'fill:#ffcdd2,stroke:#d32f2f',
  SKIPPED: 'fill:#f5f5f5,stroke:#bdbdbd,stroke-dasharray:3 3',
  CANCELLED: 'fill:#d7ccc8,stroke:#5d4037',
};

/**
 * What the picture of a run knows of each reached node: the status and routing decision of the
 * node's own task (for a `for_each` node its aggregate task, never an iteration).
 */
export interface MermaidTask {
  status: string;
  /** The targets a SWITCH (or conditional edges) chose, when the node recorded a decision. */
  branches?: readonly string[] | null;
  /** For a `for_each` node: how many of its iteration tasks are in each status. */
  iterations?: Readonly<Record<string, number>>;
  /**
   * For a DO_WHILE body node: the 0-based loop iteration its status comes from (its latest); for
   * the DO_WHILE node itself: the iteration running or last run. Absent elsewhere.
   */
  loopIteration?: number | null;
}

/** A task row as {@link mermaidTasks} reads it (TaskEntity has these fields). */
export interface MermaidTaskRow {
  nodeId: string;
  status: string;
  branches?: readonly string[] | null;
  /** 0-based element index of a `for_each` iteration task; null or absent for a node's own task. */
  iteration?: number | null;
  /** 0-based loop iteration of a DO_WHILE body task (and of the DO_WHILE node's own task); null or absent elsewhere. */
  loopIteration?: number | null;
}

/**
 * The node id -> {@link MermaidTask} map {@link toMermaid} takes, from a run's task rows in any
 * order: a node's status and branches come from its task without an iteration (a `for_each`
 * node's aggregate), its iteration rows only add to `iterations`. A node with iteration rows but
 * no aggregate row yet shows no status, only the counts. A DO_WHILE body node has rows in
 * several loop iterations: only those of its latest one count (an older row is passed over, a
 * newer one starts the node afresh).
 */
export function mermaidTasks(rows: Iterable<MermaidTaskRow>): Map<string, MermaidTask> {
  type Entry = { status: string; branches?: readonly string[] | null; iterations?: Record<string, number>; loopIteration?: number | null };
  const out = new Map<string, Entry>();
  for (const t of rows) {
    let entry = out.get(t.nodeId);
    const loop = t.loopIteration ?? null;
    if (entry && loop !== null && entry.loopIteration != null) {
      if (loop < entry.loopIteration) continue;
      if (loop > entry.loopIteration) entry = undefined;
    }
    const looped = loop === null ? {} : { loopIteration: loop };
    if (t.iteration == null) {
      out.set(t.nodeId, { ...entry, ...looped, status: t.status, branches: t.branches ?? null });
    } else {
      if (!entry) entry = { status: '', ...looped };
      out.set(t.nodeId, entry);
      const counts = (entry.iterations ??= {});
      counts[t.status] = (counts[t.status] ?? 0) + 1;
    }
  }
  return out;
}

/** Order the iteration counts are written in: done, in flight, not started, gone wrong. */
const COUNT_ORDER = ['COMPLETED', 'RUNNING', 'QUEUED', 'PENDING', 'WAITING', 'FAILED', 'CANCELLED', 'SKIPPED'];

/**
 * `×5: 3 completed, 1 running, 1 failed`: the number of iterations, then each non-zero count per
 * status (lower case, in {@link COUNT_ORDER}, unknown statuses last); `×0` for none.
 */
export function iterationSummary(counts: Readonly<Record<string, number>>): string {
  const statuses = Object.keys(counts)
    .filter((s) => counts[s]! > 0)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const total = statuses.reduce((n, s) => n + counts[s]!, 0);
  const parts = statuses.map((s) => `${counts[s]} ${s.toLowerCase()}`);
  return `×${total}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

function rank(status: string): number {
  const i = COUNT_ORDER.indexOf(status);
  return i < 0 ? COUNT_ORDER.length : i;
}

/** Terminal statuses after which a node's outgoing edges are decided. */
const SETTLED = new Set(['COMPLETED', 'FAILED', 'SKIPPED', 'CANCELLED']);

/**
 * Whether the run went along an edge: `taken` when the source settled and the edge applied (a
 * normal edge after success, within the recorded branches when there is a decision; an
 * `on_error` edge after a failure) and the target was reached and not skipped; `skipped` when
 * the source settled and the edge did not apply or its target was skipped; `open` otherwise.
 * Inside a DO_WHILE body the target counts as reached only in the source's loop iteration (a
 * target known from an earlier iteration only is not reached yet).
 */
export function edgeState(edge: MermaidGraph['edges'][number], tasks: ReadonlyMap<string, MermaidTask>): 'taken' | 'skipped' | 'open' {
  const source = tasks.get(edge.from);
  if (!source || !SETTLED.has(source.status)) return 'open';
  const found = tasks.get(edge.to);
  const stale = found && source.loopIteration != null && found.loopIteration != null && found.loopIteration < source.loopIteration;
  const target = stale ? undefined : found;
  const applies = edge.on_error ? source.status === 'FAILED' : source.status === 'COMPLETED' && (!source.branches || source.branches.includes(edge.to));
  if (applies && target && target.status !== 'SKIPPED') return 'taken';
  if (!applies || target?.status === 'SKIPPED') return 'skipped';
  return 'open';
}

/**
 * A Mermaid `flowchart TD` of the DAG. With `tasks` (node id -> the
 * task's status and decision, see {@link mermaidTasks}) each reached node shows its status and
 * gets a class per status (nodes never reached stay plain), edges the run went along are drawn
 * thick (`==>`) and edges it did not take dotted and grey; undecided edges stay plain. A
 * `for_each` node's first line adds its iteration counts ({@link iterationSummary}) once it is
 * reached (`×0` over an empty array); a SUBWORKFLOW node is drawn as a subroutine (`[[…]]`) and names its child workflow (and
 * version) when the spec gives them literally, not as templates. A DO_WHILE node is a `subgraph`
 * titled with its id, `do while · max N` (`do while · iteration 3 of 5` and its status once
 * reached, filled in its status colour) holding its body nodes and edges; outer edges join the
 * subgraph, and each body node shows the status of its latest iteration's task and that
 * iteration (`iteration 3`, counted from 1). The definition's `finally` step is
 * a rounded node (`(["…"])`, `finally · HTTP` and its status) with a dotted link labelled
 * `finally` from each sink node ({@link finallyLinks}). Node ids are mapped to
 * `n0, n1…` so any id is safe in Mermaid.
 */
export function toMermaid(graph: MermaidGraph, tasks?: ReadonlyMap<string, MermaidTask>): string {
  const ids = new Map<string, string>();
  const idOf = (nodeId: string) => {
    let id = ids.get(nodeId);
    if (!id) ids.set(nodeId, (id = `n${ids.size}`));
    return id;
  };
  const lines = ['flowchart TD'];
  const styles: string[] = [];
  // Links are numbered in the order they are written (linkStyle counts them so).
  let links = 0;
  const skipped: number[] = [];
  const edgeLine = (e: MermaidGraph['edges'][number], indent: string) => {
    const label = e.on_error ? 'on error' : e.condition;
    const state = tasks ? edgeState(e, tasks) : 'open';
    const arrow = state === 'taken' ? '==>' : state === 'skipped' || e.on_error ? '-.->' : '-->';
    if (state === 'skipped') skipped.push(links);
    links++;
    return `${indent}${idOf(e.from)} ${arrow}${label ? `|"${escape(label)}"|` : ''} ${idOf(e.to)}`;
  };
  const nodeLine = (n: MermaidGraph['nodes'][number], indent: string, inLoop: boolean) => {
    const task = tasks?.get(n.node_id);
    const status = task?.status || undefined;
    const counts = task?.iterations ?? (n.for_each != null && task ? {} : undefined);
    const head = counts ? `${n.node_id} ${iterationSummary(counts)}` : n.node_id;
    const sub = n.type === 'SUBWORKFLOW';
    const type = sub ? [n.type, childWorkflow(n.spec)].filter(Boolean).join(' ') : n.type;
    const at = inLoop && status && task?.loopIteration != null ? `${status} · ${loopIterationText(task.loopIteration)}` : status;
    const label = escape([head, type, at].filter(Boolean).join('<br/>'));
    const shape = sub ? `[["${label}"]]` : `["${label}"]`;
    return `${indent}${idOf(n.node_id)}${shape}${classOf(status)}`;
  };
  const loopLines = (n: MermaidGraph['nodes'][number], body: LoopBody) => {
    const task = tasks?.get(n.node_id);
    const status = task?.status || undefined;
    const bound = body.maxIterations === null ? '' : ` · max ${body.maxIterations}`;
    const progress = status && task?.loopIteration != null ? ` · ${loopProgress(task.loopIteration, body.maxIterations)}` : bound;
    const title = escape([n.node_id, `do while${progress}`, status].filter(Boolean).join('<br/>'));
    const out = [`  subgraph ${idOf(n.node_id)}["${title}"]`];
    for (const b of body.nodes) out.push(nodeLine(b, '    ', true));
    for (const e of body.edges) out.push(edgeLine(e, '    '));
    out.push('  end');
    if (status && STATUS_STYLES[status]) styles.push(`  style ${idOf(n.node_id)} ${STATUS_STYLES[status]}`);
    return out;
  };
  for (const n of graph.nodes ?? []) {
    const body = loopBody(n);
    if (body) lines.push(...loopLines(n, body));
    else lines.push(nodeLine(n, '  ', false));
  }
  const step = graph.finally;
  if (step && typeof step.node_id === 'string') {
    const status = tasks?.get(step.node_id)?.status || undefined;
    const label = escape([step.node_id, `finally · ${step.type ?? ''}`.trim(), status].filter(Boolean).join('<br/>'));
    lines.push(`  ${idOf(step.node_id)}(["${label}"])${classOf(status)}`);
  }
  for (const e of graph.edges ?? []) lines.push(edgeLine(e, '  '));
  for (const l of finallyLinks(graph)) lines.push(`  ${idOf(l.from)} -.->|"${FINALLY_LINK}"| ${idOf(l.to)}`);
  if (skipped.length) lines.push(`  linkStyle ${skipped.join(',')} stroke:#bdbdbd,color:#9e9e9e`);
  lines.push(...styles);
  if (tasks) {
    const used = new Set([...tasks.values()].map((t) => t.status));
    for (const [status, style] of Object.entries(STATUS_STYLES)) {
      if (used.has(status)) lines.push(`  classDef ${status.toLowerCase()} ${style}`);
    }
  }
  return lines.join('\n');
}

/** `:::running` for a status with a style; empty for none (unreached) or an unknown one. */
function classOf(status: string | undefined): string {
  return status && STATUS_STYLES[status] ? `:::${status.toLowerCase()}` : '';
}

/** `payments` or `payments@2` from a SUBWORKFLOW spec, when `workflow` is a string without a template. */
export function childWorkflow(spec: unknown): string | undefined {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
  const { workflow, version } = spec as { workflow?: unknown; version?: unknown };
  if (typeof workflow !== 'string' || !workflow || workflow.includes('{{')) return undefined;
  return Number.isInteger(version) ? `${workflow}@${version}` : workflow;
}

function escape(text: string): string {
  return text.replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' ');
}

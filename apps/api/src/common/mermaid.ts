/** What the picture needs of a definition: the nodes (with type) and edges. */
export interface MermaidGraph {
  nodes: { node_id: string; type?: string }[];
  edges: { from: string; to: string; condition?: string; on_error?: boolean }[];
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

/** What the picture of a run knows of each reached node: its task's status and routing decision. */
export interface MermaidTask {
  status: string;
  /** The targets a SWITCH (or conditional edges) chose, when the node recorded a decision. */
  branches?: readonly string[] | null;
}

/** Terminal statuses after which a node's outgoing edges are decided. */
const SETTLED = new Set(['COMPLETED', 'FAILED', 'SKIPPED', 'CANCELLED']);

/**
 * Whether the run went along an edge: `taken` when the source settled and the edge applied (a
 * normal edge after success, within the recorded branches when there is a decision; an
 * `on_error` edge after a failure) and the target was reached and not skipped; `skipped` when
 * the source settled and the edge did not apply or its target was skipped; `open` otherwise.
 */
export function edgeState(
  edge: MermaidGraph['edges'][number],
  tasks: ReadonlyMap<string, MermaidTask>,
): 'taken' | 'skipped' | 'open' {
  const source = tasks.get(edge.from);
  if (!source || !SETTLED.has(source.status)) return 'open';
  const target = tasks.get(edge.to);
  const applies = edge.on_error
    ? source.status === 'FAILED'
    : source.status === 'COMPLETED' && (!source.branches || source.branches.includes(edge.to));
  if (applies && target && target.status !== 'SKIPPED') return 'taken';
  if (!applies || target?.status === 'SKIPPED') return 'skipped';
  return 'open';
}

/**
 * A Mermaid `flowchart TD` of the DAG (seed 003's HistoryMermaid). With `tasks` (node id -> the
 * task's status and decision) each reached node shows its status and gets a class per status
 * (nodes never reached stay plain), edges the run went along are drawn thick (`==>`) and edges
 * it did not take dotted and grey; undecided edges stay plain. Node ids are mapped to
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
  for (const n of graph.nodes ?? []) {
    const status = tasks?.get(n.node_id)?.status;
    const label = [n.node_id, n.type, status].filter(Boolean).join('<br/>');
    lines.push(`  ${idOf(n.node_id)}["${escape(label)}"]${status && STATUS_STYLES[status] ? `:::${status.toLowerCase()}` : ''}`);
  }
  const skipped: number[] = [];
  (graph.edges ?? []).forEach((e, i) => {
    const label = e.on_error ? 'on error' : e.condition;
    const state = tasks ? edgeState(e, tasks) : 'open';
    const arrow = state === 'taken' ? '==>' : state === 'skipped' || e.on_error ? '-.->' : '-->';
    if (state === 'skipped') skipped.push(i);
    lines.push(`  ${idOf(e.from)} ${arrow}${label ? `|"${escape(label)}"|` : ''} ${idOf(e.to)}`);
  });
  if (skipped.length) lines.push(`  linkStyle ${skipped.join(',')} stroke:#bdbdbd,color:#9e9e9e`);
  if (tasks) {
    const used = new Set([...tasks.values()].map((t) => t.status));
    for (const [status, style] of Object.entries(STATUS_STYLES)) {
      if (used.has(status)) lines.push(`  classDef ${status.toLowerCase()} ${style}`);
    }
  }
  return lines.join('\n');
}

function escape(text: string): string {
  return text.replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' ');
}

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

/**
 * A Mermaid `flowchart TD` of the DAG (seed 003's HistoryMermaid). With `statuses` (node id ->
 * task status) each reached node shows its status and gets a class per status; nodes never
 * reached stay plain. Node ids are mapped to `n0, n1…` so any id is safe in Mermaid.
 */
export function toMermaid(graph: MermaidGraph, statuses?: ReadonlyMap<string, string>): string {
  const ids = new Map<string, string>();
  const idOf = (nodeId: string) => {
    let id = ids.get(nodeId);
    if (!id) ids.set(nodeId, (id = `n${ids.size}`));
    return id;
  };
  const lines = ['flowchart TD'];
  for (const n of graph.nodes ?? []) {
    const status = statuses?.get(n.node_id);
    const label = [n.node_id, n.type, status].filter(Boolean).join('<br/>');
    lines.push(`  ${idOf(n.node_id)}["${escape(label)}"]${status && STATUS_STYLES[status] ? `:::${status.toLowerCase()}` : ''}`);
  }
  for (const e of graph.edges ?? []) {
    const label = e.on_error ? 'on error' : e.condition;
    const arrow = e.on_error ? '-.->' : '-->';
    lines.push(`  ${idOf(e.from)} ${arrow}${label ? `|"${escape(label)}"|` : ''} ${idOf(e.to)}`);
  }
  if (statuses) {
    const used = new Set(statuses.values());
    for (const [status, style] of Object.entries(STATUS_STYLES)) {
      if (used.has(status)) lines.push(`  classDef ${status.toLowerCase()} ${style}`);
    }
  }
  return lines.join('\n');
}

function escape(text: string): string {
  return text.replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' ');
}

import type { Graph } from '../../api/graph.js';

/** What {@link DagView} draws and how it reports a choice. */
export interface DagViewProps {
  graph: Graph;
  /** Accessible name of the drawing, e.g. "DAG of run …". */
  label: string;
  /** The node shown as selected. */
  selectedNodeId?: string | null;
  /** Called when a node is chosen (click, Enter or Space); without it nodes are not focusable. */
  onSelectNode?: (nodeId: string) => void;
  /** For SUBWORKFLOW nodes: the child runs they started, newest last; each is linked from the node. */
  childRuns?: ReadonlyMap<string, readonly { runId: string; status: string }[]>;
}

/**
 * Placeholder drawing: one button per node. Each node element carries `data-node-id` and
 * `data-status` (the contract the browser tests rely on).
 */
export function DagView(props: DagViewProps) {
  return (
    <ul aria-label={props.label}>
      {props.graph.nodes.map((n) => (
        <li key={n.id} data-node-id={n.id} data-status={n.status ?? 'UNREACHED'}>
          <button type="button" onClick={() => props.onSelectNode?.(n.id)}>{n.id} {n.status}</button>
        </li>
      ))}
    </ul>
  );
}

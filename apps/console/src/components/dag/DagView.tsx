import { Fragment, useId, useLayoutEffect, useMemo, useRef } from 'react';
import type { Graph } from '../../api/graph.js';
import { DagChildLinks } from './DagChildLinks.js';
import { DagEdge, DagMarkers } from './DagEdge.js';
import { DagLegend } from './DagLegend.js';
import { DagNode } from './DagNode.js';
import { distinctNodes, isPlan, layoutDag, tooManyToDraw } from './layout.js';
import { StatusBadge } from '../StatusBadge.js';
import './dag.css';

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

/** Below this share of its natural size the drawing stops shrinking and scrolls sideways instead. */
const MIN_SCALE = 0.85;

/**
 * A DAG drawn top to bottom in SVG (laid out by dagre, see layout.ts), scaled down to the width
 * of its container and scrolling sideways once that would make it too small to read, with a
 * legend under it. Each node element (`<g>`) carries `data-node-id` and `data-status` (the
 * status, or `UNREACHED`), each edge `data-from`, `data-to` and `data-state`. A DO_WHILE node
 * is a box (`.dag-loop`, drawn under everything else) around its body's nodes, which carry
 * `data-loop` (the loop's id) and, in a run, `data-loop-iteration` (0-based, as the API counts).
 * Above MAX_DRAWN_NODES (layout.ts) nodes nothing is laid out: a plain list of the nodes stands in
 * (see {@link DagNodeList}).
 */
export function DagView(props: DagViewProps) {
  const { graph, childRuns, selectedNodeId, onSelectNode } = props;
  const tooMany = tooManyToDraw(graph);
  const layout = useMemo(() => (tooMany ? null : layoutDag(graph, { childRuns })), [tooMany, graph, childRuns]);
  const prefix = `dag${useId().replace(/[^a-zA-Z0-9]/g, '')}`;
  const scroller = useRef<HTMLDivElement>(null);
  const shape = layout ? layout.nodes.map((n) => n.node.id).join('\n') : '';
  const focusId = selectedNodeId ?? graph.nodes[0]?.id;

  // A drawing wider than its box opens scrolled to the selected node (else the first, the entry),
  // once per set of nodes: a run's updates redraw it without moving the reader's scroll.
  useLayoutEffect(() => {
    const box = scroller.current;
    if (!layout) return;
    const target = layout.nodes.find((n) => n.node.id === focusId);
    const svg = box?.querySelector('svg');
    if (!box || !svg || !target || box.scrollWidth <= box.clientWidth) return;
    const scale = svg.clientWidth / layout.width;
    box.scrollLeft = (target.x + target.width / 2) * scale - box.clientWidth / 2;
  }, [shape]); // not on focusId or layout: only a new set of nodes re-centres

  if (!layout) return <DagNodeList graph={graph} label={props.label} selectedNodeId={selectedNodeId} onSelectNode={onSelectNode} />;
  if (!layout.nodes.length) return <p className="muted">This graph has no nodes.</p>;

  const minWidth = Math.min(layout.width, Math.round(layout.width * MIN_SCALE));
  return (
    <figure className="dag">
      {/* Without focusable nodes the box itself takes the focus, so the keyboard can scroll it. */}
      <div className="dag-scroll" ref={scroller} {...(onSelectNode ? {} : { tabIndex: 0, role: 'region', 'aria-label': `${props.label}, scrollable` })}>
        <svg
          className="dag-svg"
          role="group"
          aria-label={props.label}
          viewBox={`0 0 ${layout.width} ${layout.height}`}
          width={layout.width}
          height={layout.height}
          style={{ minWidth }}
        >
          <DagMarkers prefix={prefix} />
          {/* A loop's box goes under the edges and nodes of its body. */}
          <g className="dag-loops">
            {layout.nodes
              .filter((n) => n.container)
              .map((n) => (
                <DagNode key={n.node.id} item={n} plan={layout.plan} selected={n.node.id === selectedNodeId} onSelect={onSelectNode} />
              ))}
          </g>
          <g className="dag-edges">
            {layout.edges.map((e) => (
              <DagEdge key={e.key} item={e} markerPrefix={prefix} />
            ))}
          </g>
          <g className="dag-nodes">
            {layout.nodes
              .filter((n) => !n.container)
              .map((n) => (
                <Fragment key={n.node.id}>
                  <DagNode item={n} plan={layout.plan} selected={n.node.id === selectedNodeId} onSelect={onSelectNode} />
                  <DagChildLinks item={n} />
                </Fragment>
              ))}
          </g>
        </svg>
      </div>
      <figcaption>
        <DagLegend layout={layout} />
      </figcaption>
    </figure>
  );
}

/**
 * A graph too big to draw: how many nodes it has, then each node's id, type and status in the
 * API's order. The items carry `data-node-id` and `data-status` as the drawn nodes do; with
 * `onSelectNode` each id is a toggle button.
 */
function DagNodeList(props: Pick<DagViewProps, 'graph' | 'label' | 'selectedNodeId' | 'onSelectNode'>) {
  const { graph, selectedNodeId, onSelectNode } = props;
  const nodes = distinctNodes(graph);
  const plan = isPlan(graph);
  return (
    <div className="dag dag-too-many">
      <p className="notice">This DAG has {nodes.length} nodes: too many to draw here.</p>
      <ul className="dag-node-list" aria-label={props.label}>
        {nodes.map((n) => (
          <li key={n.id} data-node-id={n.id} data-status={n.status ?? 'UNREACHED'} className={n.id === selectedNodeId ? 'selected' : undefined}>
            {onSelectNode ? (
              <button type="button" className="quiet mono" aria-pressed={n.id === selectedNodeId} onClick={() => onSelectNode(n.id)}>
                {n.id}
              </button>
            ) : (
              <code>{n.id}</code>
            )}{' '}
            <span className="muted">{n.type}</span> {!plan && <StatusBadge status={n.status} />}
          </li>
        ))}
      </ul>
    </div>
  );
}

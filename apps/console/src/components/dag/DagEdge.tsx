import { edgePath, type PositionedEdge } from './layout.js';
import { FONT } from './text.js';

/** The arrowhead marker id of an edge state, unique to one drawing (`prefix`). */
export function markerId(prefix: string, state: string): string {
  return `${prefix}-arrow-${state.toLowerCase()}`;
}

/**
 * One edge: TAKEN thick and solid in the accent colour, SKIPPED dashed grey, OPEN thin; an
 * arrowhead at the target; its condition or "on error" on a label. Carries `data-from`,
 * `data-to` and `data-state`.
 */
export function DagEdge(props: { item: PositionedEdge; markerPrefix: string }) {
  const { edge, points, label } = props.item;
  const state = edge.state.toLowerCase();
  return (
    <g className={`dag-edge dag-edge-${state}${edge.onError ? ' dag-edge-error' : ''}`} data-from={edge.from} data-to={edge.to} data-state={edge.state}>
      <path className="dag-edge-line" d={edgePath(points)} markerEnd={`url(#${markerId(props.markerPrefix, edge.state)})`} />
      {label && (
        <g className="dag-edge-label" transform={`translate(${label.x - label.width / 2},${label.y - label.height / 2})`}>
          <title>{`${edge.from} → ${edge.to}: ${label.full}`}</title>
          <rect width={label.width} height={label.height} rx={4} />
          <text x={label.width / 2} y={label.height / 2} fontSize={FONT.other} textAnchor="middle" dominantBaseline="central">
            {label.text}
          </text>
        </g>
      )}
    </g>
  );
}

/** The arrowheads, one per edge state, coloured by CSS like their lines. */
export function DagMarkers(props: { prefix: string }) {
  return (
    <defs>
      {['TAKEN', 'SKIPPED', 'OPEN'].map((state) => (
        <marker
          key={state}
          id={markerId(props.prefix, state)}
          className={`dag-arrow dag-arrow-${state.toLowerCase()}`}
          viewBox="0 0 10 10"
          refX={9}
          refY={5}
          markerWidth={state === 'TAKEN' ? 11 : 9}
          markerHeight={state === 'TAKEN' ? 11 : 9}
          markerUnits="userSpaceOnUse"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" />
        </marker>
      ))}
    </defs>
  );
}

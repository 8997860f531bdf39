import type { CSSProperties } from 'react';
import { statusClass } from './DagNode.js';
import type { DagLayout } from './layout.js';

/** Which statuses, node kinds and edge states a drawing uses, each with its look and its word. */
export function DagLegend(props: { layout: DagLayout }) {
  const { layout } = props;
  const statuses = [...new Set(layout.nodes.map((n) => n.node.status).filter((s) => s !== null))];
  const unreached = !layout.plan && layout.nodes.some((n) => n.node.status === null);
  const sub = layout.nodes.some((n) => n.node.type === 'SUBWORKFLOW');
  const loop = layout.nodes.some((n) => n.container);
  const states = new Set(layout.edges.map((e) => e.edge.state));
  const edgeWords: [string, string][] = [
    ['TAKEN', 'edge taken'],
    ['SKIPPED', 'edge skipped'],
    ['OPEN', layout.plan ? 'edge' : 'edge not decided yet'],
  ];
  return (
    <ul className="dag-legend" aria-label="Legend">
      {statuses.map((s) => (
        <li key={s}>
          <span
            className="dag-swatch"
            style={{ '--node-bg': `var(--s-${statusClass(s)}, var(--bg-alt))`, '--node-fg': `var(--s-${statusClass(s)}-fg, var(--fg))` } as CSSProperties}
            aria-hidden="true"
          />
          {s.toLowerCase()}
        </li>
      ))}
      {unreached && (
        <li>
          <span className="dag-swatch dag-swatch-unreached" aria-hidden="true" />
          not reached
        </li>
      )}
      {sub && (
        <li>
          <span className="dag-swatch dag-swatch-sub" aria-hidden="true" />
          double border: subworkflow
        </li>
      )}
      {loop && (
        <li>
          <span className="dag-swatch dag-swatch-loop" aria-hidden="true" />
          box around nodes: a do while loop and its body
        </li>
      )}
      {edgeWords
        .filter(([state]) => states.has(state as 'TAKEN'))
        .map(([state, word]) => (
          <li key={state}>
            <svg className={`dag-legend-line dag-edge dag-edge-${state.toLowerCase()}`} width="30" height="10" viewBox="0 0 30 10" aria-hidden="true">
              <line className="dag-edge-line" x1="1" y1="5" x2="29" y2="5" />
            </svg>
            {word}
          </li>
        ))}
    </ul>
  );
}

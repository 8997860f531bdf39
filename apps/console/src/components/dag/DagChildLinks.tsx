import type { CSSProperties, ReactNode } from 'react';
import { Link, useInRouterContext } from 'react-router';
import { statusClass, lineBaseline } from './DagNode.js';
import type { PositionedNode } from './layout.js';
import { FONT, LINE_HEIGHT, PAD_X, textWidth } from './text.js';

/**
 * The child runs of a SUBWORKFLOW node, drawn as links over the lower lines of its box (SVG
 * `<a>` elements, each its own tab stop right after the node): `/runs/<id>`, through the router
 * when there is one.
 */
export function DagChildLinks(props: { item: PositionedNode }) {
  const { item } = props;
  const inRouter = useInRouterContext();
  const links = item.lines.map((line, i) => ({ line, i })).filter(({ line }) => line.kind === 'link' && line.runId);
  if (!links.length) return null;
  const status = statusClass(item.node.status);
  const style = { '--node-fg': `var(--s-${status}-fg, var(--fg))` } as CSSProperties;
  return (
    <g className="dag-links" style={style} transform={`translate(${item.x},${item.y})`}>
      {links.map(({ line, i }) => {
        const href = `/runs/${encodeURIComponent(line.runId!)}`;
        const body: ReactNode = (
          <>
            <rect className="dag-link-bg" x={PAD_X - 3} y={lineBaseline(i) - 11} width={textWidth(line.text, FONT.other) + 6} height={LINE_HEIGHT - 1} rx={3} />
            <text className="dag-line dag-line-link" x={PAD_X} y={lineBaseline(i)} fontSize={FONT.other}>
              {line.text}
            </text>
          </>
        );
        const label = `Child run ${line.runId} of ${item.node.id}, ${line.runStatus ?? 'status unknown'}`;
        return inRouter ? (
          <Link key={line.runId} className="dag-link" to={href} aria-label={label}>
            {body}
          </Link>
        ) : (
          <a key={line.runId} className="dag-link" href={href} aria-label={label}>
            {body}
          </a>
        );
      })}
    </g>
  );
}

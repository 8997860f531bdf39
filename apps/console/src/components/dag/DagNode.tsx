import type { CSSProperties, KeyboardEvent } from 'react';
import type { PositionedNode } from './layout.js';
import { fontSizeOf, LINE_HEIGHT, nodeAriaLabel, PAD_X, PAD_Y } from './text.js';

/** The CSS name of a status (`COMPLETED` → `completed`); a null status is `unreached`. */
export function statusClass(status: string | null): string {
  return status ? status.toLowerCase().replace(/[^a-z0-9_-]/g, '') : 'unreached';
}

/** Baseline of line `i` inside the box. */
export function lineBaseline(i: number): number {
  return PAD_Y + (i + 1) * LINE_HEIGHT - 4;
}

/**
 * One node's box: filled with its status colour (`--s-<status>`, text `--s-<status>-fg`),
 * dashed while unreached, a double border for a SUBWORKFLOW; a DO_WHILE box around its body
 * (`container`) is filled lighter so the body's nodes stand out, its lines a header at the top. With `onSelect` it is a toggle
 * button (focusable, Enter and Space choose it). Carries `data-node-id` and `data-status`.
 * Link lines are left out: {@link DagChildLinks} draws them over the box.
 */
export function DagNode(props: { item: PositionedNode; plan: boolean; selected: boolean; onSelect?: (nodeId: string) => void }) {
  const { item, plan, selected, onSelect } = props;
  const { node, width, height } = item;
  const status = statusClass(node.status);
  const label = nodeAriaLabel(node, plan);
  const style = { '--node-bg': `var(--s-${status}, var(--bg-alt))`, '--node-fg': `var(--s-${status}-fg, var(--fg))` } as CSSProperties;
  const classes = ['dag-node', plan ? 'dag-plan' : node.status ? 'dag-reached' : 'dag-unreached'];
  if (node.type === 'SUBWORKFLOW') classes.push('dag-sub');
  if (item.container) classes.push('dag-loop');
  if (selected) classes.push('dag-selected');
  if (onSelect) classes.push('dag-selectable');

  const interactive = onSelect
    ? {
        role: 'button',
        tabIndex: 0,
        'aria-pressed': selected,
        onClick: () => onSelect(node.id),
        onKeyDown: (e: KeyboardEvent) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            onSelect(node.id);
          }
        },
      }
    : { role: 'img' };

  return (
    <g
      className={classes.join(' ')}
      style={style}
      transform={`translate(${item.x},${item.y})`}
      data-node-id={node.id}
      data-status={node.status ?? 'UNREACHED'}
      data-loop={node.loop ?? undefined}
      data-loop-iteration={node.loopIteration ?? undefined}
      aria-label={label}
      {...interactive}
    >
      <title>{label}</title>
      <rect className="dag-ring dag-focus-ring" x={-7} y={-7} width={width + 14} height={height + 14} rx={13} />
      <rect className="dag-ring dag-selected-ring" x={-4} y={-4} width={width + 8} height={height + 8} rx={11} />
      <rect className="dag-box" width={width} height={height} rx={8} />
      {node.type === 'SUBWORKFLOW' && <rect className="dag-box-inner" x={3.5} y={3.5} width={width - 7} height={height - 7} rx={5} />}
      {item.lines.map((line, i) =>
        line.kind === 'link' ? null : (
          <text key={i} className={`dag-line dag-line-${line.kind}`} x={PAD_X} y={lineBaseline(i)} fontSize={fontSizeOf(line.kind)} aria-hidden="true">
            {line.text}
          </text>
        ),
      )}
    </g>
  );
}

import { loopIterationText, loopProgress } from '@weft/contract';
import type { GraphEdge, GraphNode } from '../../api/graph.js';

/**
 * The words drawn on a node and on an edge, and how much room they take. Pure: the layout sizes
 * the boxes from these lines, the view draws them, and neither measures text in the browser.
 */

/** One child run a SUBWORKFLOW node links to. */
export interface ChildRunRef {
  runId: string;
  status: string;
}

/** What a line says, which decides its font and whether it is a link. */
export type LineKind = 'id' | 'meta' | 'status' | 'detail' | 'link' | 'more';

export interface NodeLine {
  kind: LineKind;
  text: string;
  /** For a `link` line: the child run it opens, and that run's status. */
  runId?: string;
  runStatus?: string;
}

/** Font sizes (px) the view uses; the estimates below assume them. */
export const FONT = { id: 13, other: 12 } as const;
/** Vertical distance between two lines' baselines. */
export const LINE_HEIGHT = 16;
/** Padding inside a node box. */
export const PAD_X = 12;
export const PAD_Y = 9;
export const MIN_NODE_WIDTH = 132;
/** Longest line drawn in full; longer ones end with … (the full text is in the node's title). */
export const MAX_LINE_CHARS = 34;
/** Child runs listed on a SUBWORKFLOW node before "+N more". */
export const MAX_CHILD_LINKS = 5;
/** Longest edge label drawn in full; longer ones end with … (the full text is in the edge's title). */
export const MAX_LABEL_CHARS = 24;

/**
 * Width of a line in px, over- rather than under-estimated: 0.62 em per character fits a
 * monospace font exactly and every common sans-serif with room to spare.
 */
export function textWidth(text: string, fontSize: number): number {
  return Math.ceil([...text].length * fontSize * 0.62);
}

export function fontSizeOf(kind: LineKind): number {
  return kind === 'id' ? FONT.id : FONT.other;
}

/** `text` cut to `max` characters, ending with … when cut. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** "×5: 3 completed, 2 running" for a reached for_each node, in the order the API lists them. */
export function iterationSummary(iterations: readonly { status: string; count: number }[]): string {
  const shown = iterations.filter((i) => i.count > 0);
  const total = shown.reduce((sum, i) => sum + i.count, 0);
  if (!shown.length) return '×0 iterations';
  return `×${total}: ${shown.map((i) => `${i.count} ${i.status.toLowerCase()}`).join(', ')}`;
}

/** Splits `text` after commas so that no line is longer than `max` characters where it can. */
export function wrapAtCommas(text: string, max: number): string[] {
  const parts = text.split(/(?<=,) /);
  const lines: string[] = [];
  for (const part of parts) {
    const last = lines.length - 1;
    if (last >= 0 && [...lines[last]].length + 1 + [...part].length <= max) lines[last] = `${lines[last]} ${part}`;
    else lines.push(part);
  }
  return lines;
}

/** The status word a node shows: its task's status, "not reached" without one (unless a plan). */
export function statusWord(status: string | null): string {
  return status ?? 'NOT REACHED';
}

/** A run id as a link shows it: its first 8 characters. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** The type line of a node: `HTTP`, `HTTP · for each`, `do while · max 5` for a DO_WHILE node. */
export function typeWord(node: GraphNode): string {
  if (node.type === 'DO_WHILE') return node.maxIterations == null ? 'do while' : `do while · max ${node.maxIterations}`;
  return node.forEach ? `${node.type} · for each` : node.type;
}

/**
 * Where a reached loop is: `iteration 3 of 5` for a DO_WHILE node, `iteration 3` for a body
 * node (the iteration its status comes from); null elsewhere and before it is reached.
 */
export function loopWord(node: GraphNode): string | null {
  if (node.loopIteration == null || node.status === null) return null;
  return node.type === 'DO_WHILE' ? loopProgress(node.loopIteration, node.maxIterations) : loopIterationText(node.loopIteration);
}

/**
 * The lines of a node's box, top to bottom: id, type, status (not on a plan: a version's graph
 * has no statuses), a loop's iteration, for_each iterations, the child workflow, and the child
 * runs as links.
 */
export function nodeLines(node: GraphNode, opts: { plan: boolean; childRuns?: readonly ChildRunRef[] }): NodeLine[] {
  const lines: NodeLine[] = [{ kind: 'id', text: node.id }];
  lines.push({ kind: 'meta', text: typeWord(node) });
  if (!opts.plan) lines.push({ kind: 'status', text: statusWord(node.status) });
  const loop = opts.plan ? null : loopWord(node);
  if (loop) lines.push({ kind: 'detail', text: loop });
  if (node.forEach && node.iterations) {
    for (const text of wrapAtCommas(iterationSummary(node.iterations), MAX_LINE_CHARS)) lines.push({ kind: 'detail', text });
  }
  if (node.type === 'SUBWORKFLOW') {
    lines.push({ kind: 'detail', text: node.childWorkflow ? `calls ${node.childWorkflow}` : 'calls a workflow named at run time' });
    const runs = opts.childRuns ?? [];
    for (const run of runs.slice(-MAX_CHILD_LINKS)) {
      lines.push({ kind: 'link', text: `run ${shortId(run.runId)} ${run.status}`, runId: run.runId, runStatus: run.status });
    }
    if (runs.length > MAX_CHILD_LINKS) lines.push({ kind: 'more', text: `+${runs.length - MAX_CHILD_LINKS} earlier child runs` });
  }
  return lines.map((l) => ({ ...l, text: clip(l.text, MAX_LINE_CHARS) }));
}

/** Size of a node's box holding `lines`. */
export function boxSize(lines: readonly NodeLine[]): { width: number; height: number } {
  const widest = Math.max(...lines.map((l) => textWidth(l.text, fontSizeOf(l.kind))));
  return { width: Math.max(MIN_NODE_WIDTH, widest + 2 * PAD_X), height: lines.length * LINE_HEIGHT + 2 * PAD_Y };
}

/** The condition as written, without its `{{ }}`; "on error" for an error edge. */
export function edgeLabel(edge: GraphEdge): string | null {
  if (edge.onError) return 'on error';
  if (!edge.label) return null;
  const m = /^\s*\{\{\s*([\s\S]*?)\s*\}\}\s*$/.exec(edge.label);
  return m ? m[1] : edge.label.trim();
}

/**
 * The accessible name of a node: "fetch_order, HTTP, COMPLETED" (then the loop's iteration, the
 * loop a body node is in, for_each counts, the child workflow).
 */
export function nodeAriaLabel(node: GraphNode, plan: boolean): string {
  const parts = [node.id, node.type === 'DO_WHILE' ? `DO_WHILE, ${typeWord(node)}` : node.type];
  if (!plan) parts.push(statusWord(node.status));
  const loop = plan ? null : loopWord(node);
  if (loop) parts.push(loop);
  if (node.loop) parts.push(`in loop ${node.loop}`);
  if (node.forEach) parts.push(node.iterations ? `for each ${iterationSummary(node.iterations)}` : 'for each');
  if (node.type === 'SUBWORKFLOW' && node.childWorkflow) parts.push(`calls ${node.childWorkflow}`);
  return parts.join(', ');
}

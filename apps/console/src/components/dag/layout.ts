import dagre from '@dagrejs/dagre';
import type { Graph, GraphEdge, GraphNode } from '../../api/graph.js';
import { boxSize, clip, edgeLabel, FONT, MAX_LABEL_CHARS, nodeLines, textWidth, type ChildRunRef, type NodeLine } from './text.js';

/**
 * Where everything of a DAG goes: dagre ranks it top to bottom, this turns its answer into
 * boxes (top-left corner and size), edge polylines (from the bottom of the source box to the top
 * of the target box) and label boxes, all inside [0, width] × [0, height]. No DOM, no React.
 */

export interface Point {
  x: number;
  y: number;
}

export interface PositionedNode {
  node: GraphNode;
  /** Top-left corner of the box. */
  x: number;
  y: number;
  width: number;
  height: number;
  lines: NodeLine[];
}

export interface EdgeLabelBox {
  /** What is drawn (clipped); `full` is the whole label, for a tooltip. */
  text: string;
  full: string;
  /** Centre of the label. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PositionedEdge {
  edge: GraphEdge;
  /** Unique among the graph's edges (two edges may join the same pair of nodes). */
  key: string;
  points: Point[];
  label: EdgeLabelBox | null;
}

export interface DagLayout {
  width: number;
  height: number;
  nodes: PositionedNode[];
  edges: PositionedEdge[];
  /** True for a version's graph (no node has a status): nodes are drawn without status words. */
  plan: boolean;
}

export interface LayoutOptions {
  childRuns?: ReadonlyMap<string, readonly ChildRunRef[]>;
}

/** Room around the drawing, so outlines and arrowheads at the border are not cut. */
export const MARGIN = 16;
const LABEL_PAD_X = 6;
const LABEL_HEIGHT = 18;

/**
 * Above this many nodes a DAG is not laid out: dagre takes seconds on a thousand nodes and
 * overflows the stack on a few thousand, and nobody reads such a drawing anyway.
 */
export const MAX_DRAWN_NODES = 300;

/** The graph's distinct node ids, in the API's order. */
export function distinctNodes(graph: Graph): GraphNode[] {
  const seen = new Set<string>();
  return graph.nodes.filter((n) => !seen.has(n.id) && (seen.add(n.id), true));
}

/** True when the graph has more (distinct) nodes than `limit`: DagView lists them instead of drawing. */
export function tooManyToDraw(graph: Graph, limit: number = MAX_DRAWN_NODES): boolean {
  return distinctNodes(graph).length > limit;
}

/** A version's graph, or a run's before anything was reached: no node has a status. */
export function isPlan(graph: Graph): boolean {
  return graph.nodes.every((n) => n.status === null);
}

export function layoutDag(graph: Graph, opts: LayoutOptions = {}): DagLayout {
  const plan = isPlan(graph);
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 48, edgesep: 14, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));

  const known = new Set<string>();
  const lines = new Map<string, NodeLine[]>();
  for (const node of graph.nodes) {
    if (known.has(node.id)) continue;
    known.add(node.id);
    const own = nodeLines(node, { plan, childRuns: opts.childRuns?.get(node.id) });
    lines.set(node.id, own);
    g.setNode(node.id, boxSize(own));
  }

  // An edge naming a node the graph does not have cannot be drawn; dagre would invent the node.
  const edges = graph.edges.map((edge, i) => ({ edge, key: `e${i}` })).filter(({ edge }) => known.has(edge.from) && known.has(edge.to));
  const labels = new Map<string, { text: string; full: string; width: number }>();
  for (const { edge, key } of edges) {
    const full = edgeLabel(edge);
    const text = full === null ? null : clip(full, MAX_LABEL_CHARS);
    const width = text === null ? 0 : textWidth(text, FONT.other) + 2 * LABEL_PAD_X;
    if (full !== null && text !== null) labels.set(key, { text, full, width });
    g.setEdge(edge.from, edge.to, text === null ? {} : { width, height: LABEL_HEIGHT, labelpos: 'c' }, key);
  }

  dagre.layout(g);

  const nodes: PositionedNode[] = [...known].map((id) => {
    const n = g.node(id);
    const node = graph.nodes.find((x) => x.id === id)!;
    return { node, x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height, lines: lines.get(id)! };
  });
  const positioned: PositionedEdge[] = edges.map(({ edge, key }) => {
    const e = g.edge(edge.from, edge.to, key);
    const points = (e.points ?? []).map((p: Point) => ({ x: p.x, y: p.y }));
    const l = labels.get(key);
    const label = l && typeof e.x === 'number' ? { text: l.text, full: l.full, x: e.x, y: e.y, width: l.width, height: LABEL_HEIGHT } : null;
    return { edge, key, points: points.length >= 2 ? points : straight(nodes, edge), label };
  });

  attachPorts(nodes, positioned);
  return translate({ nodes, edges: positioned, plan });
}

/** Distance a port keeps from a box's corner. */
const PORT_INSET = 12;

/**
 * Moves every edge's ends onto the bottom side of its source and the top side of its target.
 * dagre ends an edge wherever it meets the box, which for a shallow edge is the box's side: the
 * line then runs along the rank and can cut through a neighbouring box. A box with several edges
 * on a side spreads their ends over its middle, ordered by where each edge goes, so none cross
 * at the box.
 */
function attachPorts(nodes: PositionedNode[], edges: PositionedEdge[]): void {
  const byId = new Map(nodes.map((n) => [n.node.id, n]));
  const group = (pick: (e: PositionedEdge) => string) => {
    const groups = new Map<string, PositionedEdge[]>();
    for (const e of edges) groups.set(pick(e), [...(groups.get(pick(e)) ?? []), e]);
    return groups;
  };
  const place = (n: PositionedNode, list: PositionedEdge[], end: 'start' | 'end') => {
    const at = (e: PositionedEdge) => (end === 'start' ? 0 : e.points.length - 1);
    const toward = (e: PositionedEdge) => e.points[end === 'start' ? 1 : e.points.length - 2].x;
    const sorted = [...list].sort((a, b) => toward(a) - toward(b));
    sorted.forEach((e, i) => {
      const x =
        sorted.length === 1
          ? Math.min(Math.max(e.points[at(e)].x, n.x + PORT_INSET), n.x + n.width - PORT_INSET)
          : n.x + n.width * (0.15 + (0.7 * (i + 0.5)) / sorted.length);
      e.points[at(e)] = { x, y: end === 'start' ? n.y + n.height : n.y };
    });
  };
  for (const [id, list] of group((e) => e.edge.from)) place(byId.get(id)!, list, 'start');
  for (const [id, list] of group((e) => e.edge.to)) place(byId.get(id)!, list, 'end');
}

/** A straight segment between the two boxes, should dagre give no points. */
function straight(nodes: PositionedNode[], edge: GraphEdge): Point[] {
  const a = nodes.find((n) => n.node.id === edge.from)!;
  const b = nodes.find((n) => n.node.id === edge.to)!;
  return [
    { x: a.x + a.width / 2, y: a.y + a.height },
    { x: b.x + b.width / 2, y: b.y },
  ];
}

/** Moves everything so the drawing starts at (MARGIN, MARGIN), and measures it. */
function translate(layout: Omit<DagLayout, 'width' | 'height'>): DagLayout {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const n of layout.nodes) {
    xs.push(n.x, n.x + n.width);
    ys.push(n.y, n.y + n.height);
  }
  for (const e of layout.edges) {
    for (const p of e.points) {
      xs.push(p.x);
      ys.push(p.y);
    }
    if (e.label) {
      xs.push(e.label.x - e.label.width / 2, e.label.x + e.label.width / 2);
      ys.push(e.label.y - e.label.height / 2, e.label.y + e.label.height / 2);
    }
  }
  if (!xs.length) return { ...layout, width: 2 * MARGIN, height: 2 * MARGIN };
  const dx = MARGIN - Math.min(...xs);
  const dy = MARGIN - Math.min(...ys);
  return {
    plan: layout.plan,
    width: Math.ceil(Math.max(...xs) + dx + MARGIN),
    height: Math.ceil(Math.max(...ys) + dy + MARGIN),
    nodes: layout.nodes.map((n) => ({ ...n, x: n.x + dx, y: n.y + dy })),
    edges: layout.edges.map((e) => ({
      ...e,
      points: e.points.map((p) => ({ x: p.x + dx, y: p.y + dy })),
      label: e.label && { ...e.label, x: e.label.x + dx, y: e.label.y + dy },
    })),
  };
}

/**
 * An SVG path through `points`: straight from the first to the middle of the first segment,
 * then a quadratic curve around each inner point, then straight to the last (which is where the
 * arrowhead sits).
 */
export function edgePath(points: readonly Point[]): string {
  if (points.length < 2) return '';
  const f = (n: number) => Math.round(n * 10) / 10;
  const [first, ...rest] = points;
  let d = `M${f(first.x)},${f(first.y)}`;
  if (points.length === 2) return `${d} L${f(rest[0].x)},${f(rest[0].y)}`;
  for (let i = 1; i < points.length - 1; i++) {
    const p = points[i];
    const next = points[i + 1];
    const mid = i === points.length - 2 ? next : { x: (p.x + next.x) / 2, y: (p.y + next.y) / 2 };
    if (i === 1) {
      const start = { x: (first.x + p.x) / 2, y: (first.y + p.y) / 2 };
      d += ` L${f(start.x)},${f(start.y)}`;
    }
    d += ` Q${f(p.x)},${f(p.y)} ${f(mid.x)},${f(mid.y)}`;
  }
  return d;
}

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
  /** True for a DO_WHILE node drawn as a box around its body: its lines are a header at the top. */
  container: boolean;
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

/** Room between a loop's box and its body, at the sides and the bottom. */
export const LOOP_PAD = 14;

/** A level of the drawing laid out on its own: the top level, or one DO_WHILE body. */
interface Level {
  nodes: PositionedNode[];
  edges: PositionedEdge[];
}

/**
 * Lays out `graph` top to bottom. A DO_WHILE node with body nodes (nodes whose `loop` names it)
 * becomes a box around them: its body is laid out first on its own, the box sized to hold its
 * lines as a header above the body, then the box is placed like any node and the body moved into
 * it. Body nodes come right after their loop in `nodes`, body edges after the top-level edges;
 * an edge between a body and the outside (which a definition cannot have) is not drawn.
 */
export function layoutDag(graph: Graph, opts: LayoutOptions = {}): DagLayout {
  const plan = isPlan(graph);
  const all = distinctNodes(graph);
  const loops = new Set(all.filter((n) => n.type === 'DO_WHILE' && !n.loop).map((n) => n.id));
  const levelOf = new Map(all.map((n) => [n.id, n.loop && loops.has(n.loop) ? n.loop : '']));
  // An edge naming a node the graph does not have cannot be drawn; dagre would invent the node.
  const edges = graph.edges.map((edge, i) => ({ edge, key: `e${i}` })).filter(({ edge }) => levelOf.has(edge.from) && levelOf.has(edge.to));
  const ofLevel = (level: string) => ({
    nodes: all.filter((n) => levelOf.get(n.id) === level),
    edges: edges.filter(({ edge }) => levelOf.get(edge.from) === level && levelOf.get(edge.to) === level),
  });
  const lineOf = (node: GraphNode) => nodeLines(node, { plan, childRuns: opts.childRuns?.get(node.id) });

  const bodies = new Map<string, { level: Level; width: number; height: number }>();
  const boxes = new Map<string, { width: number; height: number }>();
  for (const id of loops) {
    const { nodes, edges: inner } = ofLevel(id);
    if (!nodes.length) continue;
    const level = placeLevel(nodes, inner, lineOf, new Map());
    const b = bounds(level);
    const body = { level: shift(level, -b.minX, -b.minY), width: b.maxX - b.minX, height: b.maxY - b.minY };
    bodies.set(id, body);
    const header = boxSize(lineOf(all.find((n) => n.id === id)!));
    boxes.set(id, { width: Math.max(header.width, body.width + 2 * LOOP_PAD), height: header.height + body.height + LOOP_PAD });
  }

  const top = ofLevel('');
  const outer = placeLevel(top.nodes, top.edges, lineOf, boxes);
  const nodes: PositionedNode[] = [];
  const innerEdges: PositionedEdge[] = [];
  for (const n of outer.nodes) {
    const body = bodies.get(n.node.id);
    if (!body) {
      nodes.push(n);
      continue;
    }
    nodes.push({ ...n, container: true });
    const header = boxSize(n.lines).height;
    const placed = shift(body.level, n.x + (n.width - body.width) / 2, n.y + header);
    nodes.push(...placed.nodes);
    innerEdges.push(...placed.edges);
  }
  return translate({ nodes, edges: [...outer.edges, ...innerEdges], plan });
}

/**
 * One level laid out by dagre (positions as dagre gives them): each node sized from its lines,
 * or as `sizes` says (a loop's box around its body), edges from the bottom of their source to
 * the top of their target.
 */
function placeLevel(
  graphNodes: readonly GraphNode[],
  edges: readonly { edge: GraphEdge; key: string }[],
  lineOf: (node: GraphNode) => NodeLine[],
  sizes: ReadonlyMap<string, { width: number; height: number }>,
): Level {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 48, edgesep: 14, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  const lines = new Map<string, NodeLine[]>();
  for (const node of graphNodes) {
    const own = lineOf(node);
    lines.set(node.id, own);
    g.setNode(node.id, sizes.get(node.id) ?? boxSize(own));
  }
  const labels = new Map<string, { text: string; full: string; width: number }>();
  for (const { edge, key } of edges) {
    const full = edgeLabel(edge);
    const text = full === null ? null : clip(full, MAX_LABEL_CHARS);
    const width = text === null ? 0 : textWidth(text, FONT.other) + 2 * LABEL_PAD_X;
    if (full !== null && text !== null) labels.set(key, { text, full, width });
    g.setEdge(edge.from, edge.to, text === null ? {} : { width, height: LABEL_HEIGHT, labelpos: 'c' }, key);
  }

  dagre.layout(g);

  const nodes: PositionedNode[] = graphNodes.map((node) => {
    const n = g.node(node.id);
    return { node, x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height, lines: lines.get(node.id)!, container: false };
  });
  const positioned: PositionedEdge[] = edges.map(({ edge, key }) => {
    const e = g.edge(edge.from, edge.to, key);
    const points = (e.points ?? []).map((p: Point) => ({ x: p.x, y: p.y }));
    const l = labels.get(key);
    const label = l && typeof e.x === 'number' ? { text: l.text, full: l.full, x: e.x, y: e.y, width: l.width, height: LABEL_HEIGHT } : null;
    return { edge, key, points: points.length >= 2 ? points : straight(nodes, edge), label };
  });

  attachPorts(nodes, positioned);
  return { nodes, edges: positioned };
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

/** The smallest box holding every node, edge point and edge label of `level`; all 0 when it is empty. */
function bounds(level: Level): { minX: number; minY: number; maxX: number; maxY: number } {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const n of level.nodes) {
    xs.push(n.x, n.x + n.width);
    ys.push(n.y, n.y + n.height);
  }
  for (const e of level.edges) {
    for (const p of e.points) {
      xs.push(p.x);
      ys.push(p.y);
    }
    if (e.label) {
      xs.push(e.label.x - e.label.width / 2, e.label.x + e.label.width / 2);
      ys.push(e.label.y - e.label.height / 2, e.label.y + e.label.height / 2);
    }
  }
  if (!xs.length) return { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  return { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
}

/** `level` moved by (dx, dy). */
function shift(level: Level, dx: number, dy: number): Level {
  return {
    nodes: level.nodes.map((n) => ({ ...n, x: n.x + dx, y: n.y + dy })),
    edges: level.edges.map((e) => ({
      ...e,
      points: e.points.map((p) => ({ x: p.x + dx, y: p.y + dy })),
      label: e.label && { ...e.label, x: e.label.x + dx, y: e.label.y + dy },
    })),
  };
}

/** Moves everything so the drawing starts at (MARGIN, MARGIN), and measures it. */
function translate(layout: Omit<DagLayout, 'width' | 'height'>): DagLayout {
  if (!layout.nodes.length && !layout.edges.length) return { ...layout, width: 2 * MARGIN, height: 2 * MARGIN };
  const b = bounds(layout);
  const moved = shift(layout, MARGIN - b.minX, MARGIN - b.minY);
  return {
    plan: layout.plan,
    width: Math.ceil(b.maxX - b.minX + 2 * MARGIN),
    height: Math.ceil(b.maxY - b.minY + 2 * MARGIN),
    nodes: moved.nodes,
    edges: moved.edges,
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

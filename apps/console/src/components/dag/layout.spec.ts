import type { Graph, GraphEdge, GraphNode } from '../../api/graph.js';
import { distinctNodes, edgePath, isPlan, layoutDag, MARGIN, MAX_DRAWN_NODES, tooManyToDraw, type DagLayout, type PositionedNode } from './layout.js';
import { clip, iterationSummary, nodeAriaLabel, nodeLines, wrapAtCommas } from './text.js';

function node(id: string, extra: Partial<GraphNode> = {}): GraphNode {
  return {
    id,
    type: 'CODE',
    status: null,
    forEach: false,
    iterations: null,
    childWorkflow: null,
    loop: null,
    maxIterations: null,
    loopIteration: null,
    ...extra,
  };
}

function edge(from: string, to: string, extra: Partial<GraphEdge> = {}): GraphEdge {
  return { from, to, label: null, onError: false, state: 'OPEN', ...extra };
}

/** order-flow.yaml as the API draws a run of it that took the small-order branch. */
const orderFlow: Graph = {
  nodes: [
    node('fetch_order', { type: 'HTTP', status: 'COMPLETED' }),
    node('is_large', { type: 'SWITCH', status: 'COMPLETED' }),
    node('approval', { type: 'WAIT_FOR_EVENT' }),
    node('ship', { status: 'RUNNING' }),
  ],
  edges: [
    edge('fetch_order', 'is_large', { state: 'TAKEN' }),
    edge('is_large', 'approval', { label: '{{tasks.fetch_order.output.total > 1000}}', state: 'SKIPPED' }),
    edge('is_large', 'ship', { label: '{{tasks.fetch_order.output.total <= 1000}}', state: 'TAKEN' }),
    edge('approval', 'ship'),
  ],
};

/** A wider graph: a fan-out of six, a join, an error path, a for_each and a subworkflow. */
const wide: Graph = {
  nodes: [
    node('start', { type: 'FORK' }),
    ...['a', 'b', 'c', 'd', 'e', 'f'].map((id) => node(id, { type: 'HTTP' })),
    node('join', { type: 'JOIN' }),
    node('each', {
      type: 'HTTP',
      forEach: true,
      status: 'RUNNING',
      iterations: [
        { status: 'COMPLETED', count: 3 },
        { status: 'RUNNING', count: 2 },
      ],
    }),
    node('child', { type: 'SUBWORKFLOW', childWorkflow: 'payments@2', status: 'COMPLETED' }),
    node('compensate'),
  ],
  edges: [
    ...['a', 'b', 'c', 'd', 'e', 'f'].flatMap((id) => [edge('start', id), edge(id, 'join')]),
    edge('join', 'each'),
    edge('each', 'child'),
    edge('each', 'compensate', { onError: true, label: 'on error' }),
    edge('start', 'join', { label: '{{input.skip_checks == true}}' }),
  ],
};

const byId = (layout: DagLayout, id: string): PositionedNode => layout.nodes.find((n) => n.node.id === id)!;
const centreY = (n: PositionedNode) => n.y + n.height / 2;

function onBorder(p: { x: number; y: number }, n: PositionedNode, tolerance = 1): boolean {
  const inside = p.x >= n.x - tolerance && p.x <= n.x + n.width + tolerance && p.y >= n.y - tolerance && p.y <= n.y + n.height + tolerance;
  const nearEdge =
    Math.abs(p.x - n.x) <= tolerance ||
    Math.abs(p.x - (n.x + n.width)) <= tolerance ||
    Math.abs(p.y - n.y) <= tolerance ||
    Math.abs(p.y - (n.y + n.height)) <= tolerance;
  return inside && nearEdge;
}

function overlap(a: { x: number; y: number; width: number; height: number }, b: typeof a): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

describe.each([
  ['order-flow', orderFlow],
  ['wide', wide],
])('layoutDag(%s)', (_name, graph) => {
  const layout = layoutDag(graph, { childRuns: new Map([['child', [{ runId: '0193aa00-0000-7000-8000-000000000001', status: 'SUCCEEDED' }]]]) });

  it('places every node and every edge', () => {
    expect(layout.nodes.map((n) => n.node.id).sort()).toEqual(graph.nodes.map((n) => n.id).sort());
    expect(layout.edges).toHaveLength(graph.edges.length);
  });

  it('ranks downward along every edge', () => {
    for (const { edge: e } of layout.edges) {
      const from = byId(layout, e.from);
      const to = byId(layout, e.to);
      expect(to.y).toBeGreaterThanOrEqual(from.y + from.height);
      expect(centreY(to)).toBeGreaterThan(centreY(from));
    }
  });

  it('lets no two nodes overlap', () => {
    for (const [i, a] of layout.nodes.entries()) {
      for (const b of layout.nodes.slice(i + 1))
        expect({ pair: [a.node.id, b.node.id], overlap: overlap(a, b) }).toEqual({ pair: [a.node.id, b.node.id], overlap: false });
    }
  });

  it('draws every edge label inside the drawing, cut at its end when long, with its whole text kept', () => {
    for (const { edge, label } of layout.edges) {
      if (!label) continue;
      expect(label.x - label.width / 2).toBeGreaterThanOrEqual(0);
      expect(label.y - label.height / 2).toBeGreaterThanOrEqual(0);
      expect(label.x + label.width / 2).toBeLessThanOrEqual(layout.width);
      expect(label.y + label.height / 2).toBeLessThanOrEqual(layout.height);
      expect(label.full).toBe(edge.onError ? 'on error' : edge.label!.replace(/^\{\{\s*|\s*\}\}$/g, ''));
      if (label.text !== label.full) expect(label.text).toBe(`${label.full.slice(0, label.text.length - 1)}…`);
    }
  });

  it('lets no edge label overlap a node', () => {
    for (const { label } of layout.edges) {
      if (!label) continue;
      const box = { x: label.x - label.width / 2, y: label.y - label.height / 2, width: label.width, height: label.height };
      for (const n of layout.nodes) expect(overlap(box, n)).toBe(false);
    }
  });

  it('starts every edge on its source box and ends it on its target box, with at least two points', () => {
    for (const { edge: e, points } of layout.edges) {
      expect(points.length).toBeGreaterThanOrEqual(2);
      expect(onBorder(points[0], byId(layout, e.from))).toBe(true);
      expect(onBorder(points[points.length - 1], byId(layout, e.to))).toBe(true);
    }
  });

  it('leaves every source from its bottom side and enters every target from its top side', () => {
    for (const { edge: e, points } of layout.edges) {
      const from = byId(layout, e.from);
      const to = byId(layout, e.to);
      expect(points[0].y).toBeCloseTo(from.y + from.height, 5);
      expect(points[points.length - 1].y).toBeCloseTo(to.y, 5);
    }
  });

  it('gives the edges that share a side of a box distinct ends', () => {
    for (const n of layout.nodes) {
      const outs = layout.edges.filter((e) => e.edge.from === n.node.id).map((e) => e.points[0].x);
      const ins = layout.edges.filter((e) => e.edge.to === n.node.id).map((e) => e.points[e.points.length - 1].x);
      expect(new Set(outs).size).toBe(outs.length);
      expect(new Set(ins).size).toBe(ins.length);
    }
  });

  it('keeps everything inside the drawing, with a margin', () => {
    for (const n of layout.nodes) {
      expect(n.x).toBeGreaterThanOrEqual(MARGIN - 0.01);
      expect(n.y).toBeGreaterThanOrEqual(MARGIN - 0.01);
      expect(n.x + n.width).toBeLessThanOrEqual(layout.width - MARGIN + 1);
      expect(n.y + n.height).toBeLessThanOrEqual(layout.height - MARGIN + 1);
    }
    for (const { points } of layout.edges) {
      for (const p of points) {
        expect(p.x).toBeGreaterThanOrEqual(0);
        expect(p.y).toBeGreaterThanOrEqual(0);
        expect(p.x).toBeLessThanOrEqual(layout.width);
        expect(p.y).toBeLessThanOrEqual(layout.height);
      }
    }
  });

  it('makes every box wide enough for its longest line', () => {
    for (const n of layout.nodes) {
      const longest = Math.max(...n.lines.map((l) => [...l.text].length));
      expect(n.width).toBeGreaterThanOrEqual(longest * 7);
    }
  });
});

describe('layoutDag labels and lines', () => {
  const layout = layoutDag(wide, { childRuns: new Map([['child', [{ runId: '0193aa00-0000-7000-8000-000000000001', status: 'SUCCEEDED' }]]]) });

  it('labels a condition without its braces and an error edge "on error"', () => {
    const labels = layout.edges.map((e) => e.label?.full ?? null);
    expect(labels).toContain('input.skip_checks == true');
    expect(labels).toContain('on error');
    expect(layout.edges.filter((e) => e.label === null)).toHaveLength(14);
  });

  it('puts the iteration counts on a for_each node and the child run links on a SUBWORKFLOW node', () => {
    expect(byId(layout, 'each').lines.map((l) => l.text)).toContain('×5: 3 completed, 2 running');
    const child = byId(layout, 'child').lines;
    expect(child.find((l) => l.kind === 'detail')?.text).toBe('calls payments@2');
    expect(child.filter((l) => l.kind === 'link')).toEqual([
      { kind: 'link', text: 'run 0193aa00 SUCCEEDED', runId: '0193aa00-0000-7000-8000-000000000001', runStatus: 'SUCCEEDED' },
    ]);
  });

  it('says "NOT REACHED" on a run\'s unreached node, and no status at all on a plan', () => {
    expect(byId(layout, 'start').lines.map((l) => l.text)).toEqual(['start', 'FORK', 'NOT REACHED']);
    const plan: Graph = { nodes: [node('x', { type: 'HTTP' })], edges: [] };
    expect(isPlan(plan)).toBe(true);
    expect(layoutDag(plan).nodes[0].lines.map((l) => l.text)).toEqual(['x', 'HTTP']);
  });

  it('draws an empty graph as an empty box and skips an edge to a node it does not have', () => {
    expect(layoutDag({ nodes: [], edges: [] })).toMatchObject({ nodes: [], edges: [], width: 2 * MARGIN, height: 2 * MARGIN });
    const dangling = layoutDag({ nodes: [node('a')], edges: [edge('a', 'ghost')] });
    expect(dangling.nodes).toHaveLength(1);
    expect(dangling.edges).toHaveLength(0);
  });

  it('keeps two edges between the same pair apart', () => {
    const twice = layoutDag({
      nodes: [node('a'), node('b')],
      edges: [edge('a', 'b', { label: '{{x}}' }), edge('a', 'b', { onError: true, label: 'on error' })],
    });
    expect(twice.edges.map((e) => e.key)).toEqual(['e0', 'e1']);
    expect(twice.edges[0].points).not.toEqual(twice.edges[1].points);
  });
});

describe('text', () => {
  it('summarises iterations in the order given, leaving out empty counts', () => {
    expect(
      iterationSummary([
        { status: 'COMPLETED', count: 3 },
        { status: 'FAILED', count: 0 },
        { status: 'RUNNING', count: 2 },
      ]),
    ).toBe('×5: 3 completed, 2 running');
  });

  it('wraps a long summary after commas', () => {
    const lines = wrapAtCommas('×12: 3 completed, 2 running, 4 waiting, 1 failed, 2 skipped', 30);
    expect(lines.join(' ')).toBe('×12: 3 completed, 2 running, 4 waiting, 1 failed, 2 skipped');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(30);
  });

  it('names a node by id, type and status', () => {
    expect(nodeAriaLabel(node('fetch_order', { type: 'HTTP', status: 'COMPLETED' }), false)).toBe('fetch_order, HTTP, COMPLETED');
    expect(nodeAriaLabel(node('approval', { type: 'WAIT_FOR_EVENT' }), false)).toBe('approval, WAIT_FOR_EVENT, NOT REACHED');
    expect(nodeAriaLabel(node('fetch_order', { type: 'HTTP' }), true)).toBe('fetch_order, HTTP');
  });

  it('lists at most five child runs, the newest, and says how many more', () => {
    const runs = Array.from({ length: 7 }, (_, i) => ({ runId: `run-${i}-0000000000`, status: 'SUCCEEDED' }));
    const lines = nodeLines(node('s', { type: 'SUBWORKFLOW', status: 'COMPLETED' }), { plan: false, childRuns: runs });
    expect(lines.filter((l) => l.kind === 'link').map((l) => l.runId)).toEqual(runs.slice(2).map((r) => r.runId));
    expect(lines.at(-1)).toEqual({ kind: 'more', text: '+2 earlier child runs' });
  });
});

describe('edgePath', () => {
  it('draws a straight line between two points and a curve through more', () => {
    expect(
      edgePath([
        { x: 0, y: 0 },
        { x: 10, y: 20 },
      ]),
    ).toBe('M0,0 L10,20');
    const d = edgePath([
      { x: 0, y: 0 },
      { x: 10, y: 20 },
      { x: 10, y: 40 },
      { x: 0, y: 60 },
    ]);
    expect(d.startsWith('M0,0 L5,10 Q10,20')).toBe(true);
    expect(d.endsWith('0,60')).toBe(true);
    expect(edgePath([{ x: 1, y: 1 }])).toBe('');
  });
});

describe('clip', () => {
  it('cuts a long text at its end with an ellipsis, within the limit', () => {
    expect(clip('tasks.fetch_order.output.total > 1000', 20)).toBe('tasks.fetch_order.o…');
    expect(clip('short', 20)).toBe('short');
  });
});

describe('tooManyToDraw', () => {
  const chain = (n: number): Graph => ({
    nodes: Array.from({ length: n }, (_, i) => node(`n${i}`)),
    edges: Array.from({ length: Math.max(0, n - 1) }, (_, i) => edge(`n${i}`, `n${i + 1}`)),
  });

  it('draws up to MAX_DRAWN_NODES nodes and lists anything bigger', () => {
    expect(MAX_DRAWN_NODES).toBe(300);
    expect(tooManyToDraw(orderFlow)).toBe(false);
    expect(tooManyToDraw(chain(MAX_DRAWN_NODES))).toBe(false);
    expect(tooManyToDraw(chain(MAX_DRAWN_NODES + 1))).toBe(true);
    expect(tooManyToDraw(chain(3000))).toBe(true);
  });

  it('counts distinct node ids, as the drawing does', () => {
    const repeated: Graph = { nodes: [...chain(3).nodes, node('n1'), node('n2')], edges: [] };
    expect(distinctNodes(repeated).map((n) => n.id)).toEqual(['n0', 'n1', 'n2']);
    expect(tooManyToDraw(repeated, 3)).toBe(false);
    expect(tooManyToDraw(repeated, 2)).toBe(true);
  });
});

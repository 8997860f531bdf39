import type { Graph, GraphEdge, GraphNode } from '../../api/graph.js';
import { layoutDag, LOOP_PAD, MARGIN, type DagLayout, type PositionedNode } from './layout.js';
import { boxSize, nodeAriaLabel, nodeLines } from './text.js';

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

/** A poll as the API draws a run of it in its third iteration: check done there, wait_a_bit still from the second. */
const polling: Graph = {
  nodes: [
    node('start', { type: 'HTTP', status: 'COMPLETED' }),
    node('poll', { type: 'DO_WHILE', status: 'RUNNING', maxIterations: 5, loopIteration: 2 }),
    node('check', { type: 'HTTP', status: 'COMPLETED', loop: 'poll', loopIteration: 2 }),
    node('wait_a_bit', { type: 'WAIT', status: 'COMPLETED', loop: 'poll', loopIteration: 1 }),
    node('branch_b', { type: 'CODE', loop: 'poll' }),
    node('report'),
  ],
  edges: [
    edge('start', 'poll', { state: 'TAKEN' }),
    edge('poll', 'report'),
    edge('check', 'wait_a_bit', { label: '{{tasks.check.output.retry}}' }),
    edge('check', 'branch_b'),
  ],
};

const byId = (layout: DagLayout, id: string): PositionedNode => layout.nodes.find((n) => n.node.id === id)!;
const inside = (inner: { x: number; y: number; width?: number; height?: number }, box: PositionedNode, top: number) =>
  inner.x >= box.x && inner.x + (inner.width ?? 0) <= box.x + box.width && inner.y >= box.y + top && inner.y + (inner.height ?? 0) <= box.y + box.height;

describe('a DO_WHILE loop in the drawing', () => {
  const layout = layoutDag(polling);
  const loop = byId(layout, 'poll');
  const header = boxSize(loop.lines).height;

  it('draws the loop as a box around its body, the body under its header, the body nodes right after it', () => {
    expect(layout.nodes.map((n) => [n.node.id, n.container])).toEqual([
      ['start', false],
      ['poll', true],
      ['check', false],
      ['wait_a_bit', false],
      ['branch_b', false],
      ['report', false],
    ]);
    for (const id of ['check', 'wait_a_bit', 'branch_b']) expect(inside(byId(layout, id), loop, header)).toBe(true);
    const body = layout.edges.find((e) => e.edge.from === 'check' && e.edge.to === 'wait_a_bit')!;
    for (const p of body.points) expect(inside(p, loop, header)).toBe(true);
    const label = body.label!; // x and y are its centre
    expect(inside({ ...label, x: label.x - label.width / 2, y: label.y - label.height / 2 }, loop, header)).toBe(true);
    // The body sits LOOP_PAD above the bottom of the box at most (its lowest node or edge).
    const lowest = Math.max(...['check', 'wait_a_bit', 'branch_b'].map((id) => byId(layout, id).y + byId(layout, id).height));
    expect(loop.y + loop.height - lowest).toBeGreaterThanOrEqual(LOOP_PAD - 0.01);
  });

  it('joins the outer edges to the top and the bottom of the box, and keeps the box clear of other nodes', () => {
    const into = layout.edges.find((e) => e.edge.to === 'poll')!;
    const out = layout.edges.find((e) => e.edge.from === 'poll')!;
    expect(into.points.at(-1)!.y).toBeCloseTo(loop.y);
    expect(out.points[0]!.y).toBeCloseTo(loop.y + loop.height);
    expect(byId(layout, 'report').y).toBeGreaterThan(loop.y + loop.height);
    expect(byId(layout, 'start').y + byId(layout, 'start').height).toBeLessThan(loop.y);
    expect(Math.min(...layout.nodes.map((n) => n.x))).toBeGreaterThanOrEqual(MARGIN);
    expect(Math.max(...layout.nodes.map((n) => n.x + n.width))).toBeLessThanOrEqual(layout.width - MARGIN);
  });

  it("says where a run's loop is: the loop's iteration of its bound, each body node the iteration of its status", () => {
    expect(loop.lines.map((l) => l.text)).toEqual(['poll', 'do while · max 5', 'RUNNING', 'iteration 3 of 5']);
    expect(byId(layout, 'wait_a_bit').lines.map((l) => l.text)).toEqual(['wait_a_bit', 'WAIT', 'COMPLETED', 'iteration 2']);
    expect(byId(layout, 'branch_b').lines.map((l) => l.text)).toEqual(['branch_b', 'CODE', 'NOT REACHED']);
    expect(nodeAriaLabel(polling.nodes[1]!, false)).toBe('poll, DO_WHILE, do while · max 5, RUNNING, iteration 3 of 5');
    expect(nodeAriaLabel(polling.nodes[2]!, false)).toBe('check, HTTP, COMPLETED, iteration 3, in loop poll');
  });

  it('shows only the bound on a plan, and draws a loop without body nodes as a plain node', () => {
    const plan = { ...polling, nodes: polling.nodes.map((n) => ({ ...n, status: null, loopIteration: null })) };
    expect(nodeLines(plan.nodes[1]!, { plan: true }).map((l) => l.text)).toEqual(['poll', 'do while · max 5']);
    const empty = layoutDag({ nodes: [node('poll', { type: 'DO_WHILE' }), node('next')], edges: [edge('poll', 'next')] });
    expect(empty.nodes.map((n) => n.container)).toEqual([false, false]);
    expect(byId(empty, 'poll').lines.map((l) => l.text)).toEqual(['poll', 'do while']);
  });

  it('leaves out an edge between a body and the outside, which it cannot draw', () => {
    const crossing = layoutDag({ ...polling, edges: [...polling.edges, edge('start', 'check')] });
    expect(crossing.edges.map((e) => `${e.edge.from}->${e.edge.to}`).sort()).toEqual(['check->branch_b', 'check->wait_a_bit', 'poll->report', 'start->poll']);
  });
});

import { describe, expect, it } from '@jest/globals';
import { WeftError, type Problem } from '../errors.js';
import { buildDag } from './dag.js';
import { loadDefinition, parseDefinition, validateDefinition } from './validate.js';

/** Seed 002, step 1: the order flow, exactly as users write it. */
const ORDER_FLOW = `
nodes:
  - node_id: fetch_order          # unique id, used in templates as tasks.fetch_order
    name: Fetch order
    type: HTTP
    retry: {max_attempts: 3, backoff_seconds: 2}
    spec:
      url: "https://shop.example.com/orders/{{input.order_id}}"
      method: GET

  - node_id: is_large
    name: Large order?
    type: SWITCH

  - node_id: approval
    name: Manager approval
    type: WAIT_FOR_EVENT
    spec: {event: "approve-{{input.order_id}}", timeout_seconds: 86400}

  - node_id: ship
    name: Ship
    type: CODE
    runtime: python
    spec:
      code: |
        def handler(input):
            return {"shipped": True, "order": input["order"]}
      order: "{{tasks.fetch_order.output}}"

edges:
  - {from: fetch_order, to: is_large}
  - {from: is_large, to: approval, condition: "{{tasks.fetch_order.output.total > 1000}}"}
  - {from: is_large, to: ship,     condition: "{{tasks.fetch_order.output.total <= 1000}}"}
  - {from: approval, to: ship}
`;

function problemsOf(fn: () => unknown): Problem[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(WeftError);
    expect((e as WeftError).code).toBe('BAD_USER_INPUT');
    return (e as WeftError).problems;
  }
  throw new Error('expected a WeftError');
}

describe('loading definitions', () => {
  it('accepts the seed 002 order flow in YAML', () => {
    const def = loadDefinition(ORDER_FLOW);
    expect(def.nodes.map((n) => n.node_id)).toEqual(['fetch_order', 'is_large', 'approval', 'ship']);
    expect(def.nodes[0].retry).toEqual({ max_attempts: 3, backoff_seconds: 2 });
    expect(def.edges[1].condition).toBe('{{tasks.fetch_order.output.total > 1000}}');
    expect(buildDag(def).taskRefs('ship')).toEqual(['fetch_order']);
  });

  it('accepts JSON, and a single node without edges', () => {
    const def = loadDefinition('{"nodes": [{"node_id": "a", "type": "HTTP", "spec": {"url": "https://x"}}]}');
    expect(def.edges).toEqual([]);
    expect(def.nodes[0].spec).toEqual({ url: 'https://x' });
  });

  it('reports a YAML syntax error as one problem with its line and column', () => {
    const problems = problemsOf(() => loadDefinition('nodes:\n  - node_id: a\n    type: [HTTP\n'));
    expect(problems).toHaveLength(1);
    expect(problems[0].message).toMatch(/^YAML syntax error: .* at line \d+, column \d+$/);
    expect(problems[0].path).toMatch(/^line \d+, column \d+$/);
  });

  it('reports a duplicate YAML key with its line', () => {
    const problems = problemsOf(() => parseDefinition('nodes: []\nnodes: []\n'));
    expect(problems).toEqual([expect.objectContaining({ message: expect.stringMatching(/unique.*line 2, column 1/) })]);
  });

  it('throws every problem with the count in the message', () => {
    let err: WeftError | undefined;
    try {
      loadDefinition('nodes:\n  - {node_id: a, type: HTTPS}\n  - {node_id: a, type: HTTP}\n');
    } catch (e) {
      err = e as WeftError;
    }
    expect(err?.message).toBe(`invalid workflow definition: ${err?.problems.length} problem(s)`);
    expect(err?.problems.length).toBeGreaterThanOrEqual(3); // unknown type, duplicate id, missing url
  });
});

describe('validateDefinition lists every problem', () => {
  it('finds all the mistakes of a badly broken definition, each with its node id', () => {
    const def = parseDefinition(`
nodes:
  - {node_id: start, type: FORK}
  - {node_id: dup, type: HTTP, spec: {url: "https://x"}}
  - {node_id: dup, type: HTTP, spec: {url: "https://y"}}
  - {node_id: weird, type: HTTPS, spec: {url: "https://x"}}
  - {node_id: code, type: CODE, runtime: ruby, spec: {}}
  - {node_id: nap, type: WAIT, spec: {}}
  - {node_id: hear, type: WAIT_FOR_EVENT, spec: {timeout_seconds: 5}}
  - node_id: flaky
    type: HTTP
    retry: {max_attempts: 0, backoff_seconds: -1}
    spec: {url: "https://x/{{input.id +}}"}
  - {node_id: nourl, type: HTTP, spec: {method: GET}}
  - {node_id: x, type: HTTP, spec: {url: "https://x"}}
  - {node_id: y, type: HTTP, spec: {url: "https://y"}}
  - {node_id: lonely, type: HTTP, spec: {url: "https://z"}}
  - {type: HTTP, spec: {url: "https://anon"}}
edges:
  - {from: start, to: dup}
  - {from: start, to: weird, condition: "{{input.n >}}"}
  - {from: start, to: code}
  - {from: start, to: nap}
  - {from: start, to: hear}
  - {from: start, to: flaky}
  - {from: start, to: nourl}
  - {from: start, to: ghost}
  - {from: x, to: y}
  - {from: y, to: x}
output: {total: "{{tasks.flaky.output.n * }}"}
`);
    const problems = validateDefinition(def);
    const expected: Array<{ nodeId?: string; path?: string; message: RegExp }> = [
      { nodeId: 'dup', path: 'nodes[2].node_id', message: /duplicate node_id "dup"/ },
      { nodeId: 'weird', path: 'nodes[3].type', message: /unknown node type "HTTPS"/ },
      { nodeId: 'code', path: 'nodes[4].spec.code', message: /CODE node requires spec.code/ },
      { nodeId: 'code', path: 'nodes[4].runtime', message: /unknown CODE runtime "ruby"/ },
      { nodeId: 'nap', path: 'nodes[5].spec', message: /WAIT node requires spec.duration_seconds or spec.until/ },
      { nodeId: 'hear', path: 'nodes[6].spec.event', message: /WAIT_FOR_EVENT node requires spec.event/ },
      { nodeId: 'flaky', path: 'nodes[7].retry.max_attempts', message: /integer >= 1/ },
      { nodeId: 'flaky', path: 'nodes[7].retry.backoff_seconds', message: /number >= 0/ },
      { nodeId: 'flaky', path: 'nodes[7].spec.url', message: /CEL syntax error in \{\{ input\.id \+ \}\}/ },
      { nodeId: 'nourl', path: 'nodes[8].spec.url', message: /HTTP node requires spec.url/ },
      { nodeId: 'start', path: 'edges[1].condition', message: /CEL syntax error in \{\{ input\.n > \}\}/ },
      { nodeId: 'start', path: 'edges[7].to', message: /edge to unknown node "ghost"/ },
      { nodeId: 'x', path: 'edges', message: /cycle through nodes x, y/ },
      { nodeId: 'x', message: /"x" cannot be reached from the entry node "start"/ },
      { nodeId: 'y', message: /"y" cannot be reached from the entry node "start"/ },
      { nodeId: 'lonely', message: /second entry point.*FORK/ },
      { path: 'nodes[12].node_id', message: /node_id is required/ },
      { path: 'output.total', message: /CEL syntax error in/ },
    ];
    for (const e of expected) {
      expect(problems).toContainEqual(expect.objectContaining({ ...e, message: expect.stringMatching(e.message) }));
    }
    expect(problems).toHaveLength(expected.length);
  });

  it('rejects shapes that are not a definition', () => {
    expect(validateDefinition('nodes')).toEqual([expect.objectContaining({ message: expect.stringMatching(/must be an object/) })]);
    expect(validateDefinition(null)).toHaveLength(1);
    expect(validateDefinition({ nodes: { a: 1 } })).toContainEqual(expect.objectContaining({ path: 'nodes', message: expect.stringMatching(/must be a list/) }));
    expect(validateDefinition({ nodes: [], edges: 'x' })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'edges', message: expect.stringMatching(/must be a list/) }),
        expect.objectContaining({ path: 'nodes', message: expect.stringMatching(/at least one node/) }),
      ]),
    );
    expect(validateDefinition({ nodes: ['a', { node_id: 3, type: 'HTTP' }] })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'nodes[0]', message: 'a node must be an object' }),
        expect.objectContaining({ path: 'nodes[1].node_id', message: 'node_id must be a string' }),
      ]),
    );
  });

  it('reports a graph without an entry node', () => {
    const problems = validateDefinition({
      nodes: [{ node_id: 'a', type: 'FORK' }, { node_id: 'b', type: 'FORK' }],
      edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }],
    });
    expect(problems).toContainEqual(expect.objectContaining({ message: 'no entry node: every node has an incoming edge' }));
    expect(problems).toContainEqual(expect.objectContaining({ nodeId: 'a', message: expect.stringMatching(/cycle/) }));
  });

  it('reports a self-loop, an edge from an unknown node and a condition without a template', () => {
    const problems = validateDefinition({
      nodes: [{ node_id: 'a', type: 'SWITCH' }, { node_id: 'b', type: 'FORK' }],
      edges: [{ from: 'a', to: 'b', condition: 'true' }, { from: 'b', to: 'b' }, { from: 'nobody', to: 'b' }],
    });
    expect(problems).toContainEqual(expect.objectContaining({ nodeId: 'a', path: 'edges[0].condition', message: expect.stringMatching(/must be a \{\{ \}\} CEL template/) }));
    expect(problems).toContainEqual(expect.objectContaining({ nodeId: 'b', message: expect.stringMatching(/cycle through nodes b/) }));
    expect(problems).toContainEqual(expect.objectContaining({ nodeId: 'nobody', path: 'edges[2].from', message: 'edge from unknown node "nobody"' }));
  });

  it('checks wait values that are not templated, and accepts templated ones', () => {
    const problems = validateDefinition({
      nodes: [
        { node_id: 'f', type: 'FORK' },
        { node_id: 'w1', type: 'WAIT', spec: { until: 'tomorrow' } },
        { node_id: 'w2', type: 'WAIT', spec: { duration_seconds: 'soon' } },
        { node_id: 'w3', type: 'WAIT', spec: { duration_seconds: '{{input.delay}}' } },
        { node_id: 'w4', type: 'WAIT', spec: { until: '2030-01-01T00:00:00Z' } },
        { node_id: 'e', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: -1 } },
      ],
      edges: ['w1', 'w2', 'w3', 'w4', 'e'].map((to) => ({ from: 'f', to })),
    });
    expect(problems.map((p) => [p.nodeId, p.path])).toEqual([
      ['w1', 'nodes[1].spec.until'],
      ['w2', 'nodes[2].spec.duration_seconds'],
      ['e', 'nodes[5].spec.timeout_seconds'],
    ]);
  });

  it('refuses values JSON cannot hold', () => {
    const def = parseDefinition('nodes:\n  - {node_id: a, type: HTTP, spec: {url: "https://x", n: .inf}}\n');
    expect(validateDefinition(def)).toEqual([expect.objectContaining({ nodeId: 'a', path: 'nodes[0].spec.n' })]);
  });
});

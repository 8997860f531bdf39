import { describe, expect, it } from '@jest/globals';
import { WeftError, type Problem } from '../errors.js';
import { buildDag } from './dag.js';
import { definitionSizeProblem, loadDefinition, parseDefinition, validateDefinition } from './validate.js';

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
  it('accepts the order flow in YAML', () => {
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

  it('finds duplicate keys in one pass: the first in the text, among a mapping of 60,000 keys', () => {
    const keys = Array.from({ length: 60_000 }, (_, i) => `k${i.toString(36)}`);
    const flow = `nodes: []\nbig: {${keys.join(',')}}\n`;
    expect(Object.keys((parseDefinition(flow) as unknown as { big: object }).big)).toHaveLength(60_000);
    expect(problemsOf(() => parseDefinition(`${flow}deep: {a: {b: 1, b: 2}}\nbig: 1\n`))).toEqual([
      { path: 'line 3, column 18', message: 'YAML syntax error: Map keys must be unique at line 3, column 18' },
    ]);
    expect(problemsOf(() => parseDefinition(`nodes: [{x: 1, x: 1}]\n`))).toEqual([
      { path: 'line 1, column 16', message: 'YAML syntax error: Map keys must be unique at line 1, column 16' },
    ]);
  });

  it('refuses a billion-laughs document of nested aliases as one problem, not a crash', () => {
    // Nine levels of ten aliases each: 10^9 strings if expanded.
    const levels = ['a: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `l${i}: &l${i} [${Array(10)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    const source = `nodes:\n  - {node_id: a, type: HTTP, spec: {url: "https://x", bomb: *l8}}\n`;
    const problems = problemsOf(() => loadDefinition(`${levels.join('\n')}\n${source}`));
    expect(problems).toEqual([{ message: expect.stringContaining('too many alias expansions') }]);
    expect(problems[0].message).not.toMatch(/resource exhaustion/);
  });

  it('refuses more than 100 aliases in all, and finds a self-containing one under a re-used anchor name', () => {
    const anchors = (n: number) => Array.from({ length: n }, (_, i) => `&a${i} 1`).join(', ');
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `*a${i}`).join(', ');
    expect(parseDefinition(`nodes: []\nx: [${anchors(100)}]\ny: [${aliases(100)}]\n`)).toMatchObject({ y: Array(100).fill(1) });
    expect(problemsOf(() => parseDefinition(`nodes: []\nx: [${anchors(101)}]\ny: [${aliases(101)}]\n`))).toEqual([
      { message: 'YAML error: too many alias expansions (more than 100); do not nest anchors and aliases' },
    ]);
    expect(problemsOf(() => parseDefinition('x: &n [1]\ny: [*n, &n [*n]]\n'))).toEqual([
      { path: 'line 2, column 13', message: 'YAML error: alias *n refers to a node that contains it' },
    ]);
    expect(parseDefinition('x: &n [1]\ny: [*n, &n [2], *n]\n')).toEqual({ x: [1], y: [[1], [2], [2]] });
  });

  it('refuses aliases that expand a small text past 1,000,000 characters of JSON, and keeps modest ones', () => {
    // 99 aliases of one anchor of 12,000 items: about 49 KB of text, about 4.8 MB as JSON.
    const wide = (items: number) =>
      `nodes: []\nbig: &b [${Array(items).fill('x').join(',')}]\n${Array.from({ length: 99 }, (_, i) => `k${i}: *b`).join('\n')}\n`;
    expect(problemsOf(() => parseDefinition(wide(12_000)))).toEqual([
      { message: 'YAML error: its aliases expand the definition to more than 1,000,000 characters of JSON; write the repeated parts once, or fewer times' },
    ]);
    // 100 copies of 1,000 items: about 400 KB as JSON.
    expect(parseDefinition(wide(1_000))).toMatchObject({ k98: Array(1_000).fill('x') });
  });

  it('turns any other YAML conversion error into a problem: unresolved and self-containing aliases', () => {
    expect(problemsOf(() => parseDefinition('nodes: *missing\n'))).toEqual([{ message: expect.stringMatching(/^YAML error: Unresolved alias/) }]);
    expect(problemsOf(() => parseDefinition('nodes: &n [*n]\n'))).toEqual([
      { path: 'line 1, column 12', message: 'YAML error: alias *n refers to a node that contains it' },
    ]);
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
    expect(validateDefinition({ nodes: { a: 1 } })).toContainEqual(
      expect.objectContaining({ path: 'nodes', message: expect.stringMatching(/must be a list/) }),
    );
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
      nodes: [
        { node_id: 'a', type: 'FORK' },
        { node_id: 'b', type: 'FORK' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    });
    expect(problems).toContainEqual(expect.objectContaining({ message: 'no entry node: every node has an incoming edge' }));
    expect(problems).toContainEqual(expect.objectContaining({ nodeId: 'a', message: expect.stringMatching(/cycle/) }));
  });

  it('reports a self-loop, an edge from an unknown node and a condition without a template', () => {
    const problems = validateDefinition({
      nodes: [
        { node_id: 'a', type: 'SWITCH' },
        { node_id: 'b', type: 'FORK' },
      ],
      edges: [
        { from: 'a', to: 'b', condition: 'true' },
        { from: 'b', to: 'b' },
        { from: 'nobody', to: 'b' },
      ],
    });
    expect(problems).toContainEqual(
      expect.objectContaining({ nodeId: 'a', path: 'edges[0].condition', message: expect.stringMatching(/must be a \{\{ \}\} CEL template/) }),
    );
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
    const def = parseDefinition('nodes:\n  - {node_id: a, type: HTTP, spec: {url: "https://x", body: {n: .inf}}}\n');
    expect(validateDefinition(def)).toEqual([expect.objectContaining({ nodeId: 'a', path: 'nodes[0].spec.body.n' })]);
  });
});

/** A valid one-node definition plus `extra` fields on the node; `edges` empty. */
function oneNode(extra: Record<string, unknown>, spec: Record<string, unknown> = { url: 'https://x' }, type = 'HTTP'): unknown {
  return { nodes: [{ node_id: 'a', type, spec, ...extra }], edges: [] };
}
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

describe('node fields: for_each and SUBWORKFLOW', () => {
  it('accepts a for_each HTTP node with an alias, a concurrency limit and reducers, and a SUBWORKFLOW node', () => {
    expect(messages(oneNode({ for_each: '{{ input.items }}', as: 'employer', max_concurrency: 2, reducers: { total: 'add' } }))).toEqual([]);
    expect(messages(oneNode({}, { workflow: 'billing', version: 2, input: { amount: '{{ input.total }}' } }, 'SUBWORKFLOW'))).toEqual([]);
    expect(messages(oneNode({}, { workflow: '{{ input.which }}' }, 'SUBWORKFLOW'))).toEqual([]);
  });

  it('names what is wrong with a for_each, its alias, its concurrency limit and its reducers', () => {
    expect(messages(oneNode({ for_each: 'input.items', as: 'input', max_concurrency: 0, reducers: { total: 'sum' } }))).toEqual([
      'nodes[0].for_each: for_each must be one {{ }} template giving an array, e.g. "{{ input.employers }}"',
      'nodes[0].as: as must be a name made of letters, digits and "_" (not starting with a digit), other than input, config, tasks, system, run and CEL\'s reserved words (true, false, null, in, …); got "input"',
      'nodes[0].max_concurrency: max_concurrency must be an integer from 1 to 10000',
      'nodes[0].reducers.total: unknown reducer "sum" for field "total" of for_each node a; expected one of add, append, union, min, max, merge, and, or, concat, replace',
    ]);
    expect(messages(oneNode({ for_each: '{{ input.items', as: '9lives', max_concurrency: 1.5 }))).toEqual([
      'nodes[0].for_each: for_each must be one {{ }} template giving an array, e.g. "{{ input.employers }}"',
      'nodes[0].as: as must be a name made of letters, digits and "_" (not starting with a digit), other than input, config, tasks, system, run and CEL\'s reserved words (true, false, null, in, …); got "9lives"',
      'nodes[0].max_concurrency: max_concurrency must be an integer from 1 to 10000',
      'nodes[0].for_each: unclosed template: the {{ at column 1 has no closing }}',
    ]);
    expect(messages(oneNode({ for_each: '{{ tasks.nope.output }}' }))).toEqual([
      'nodes[0].for_each: template {{ tasks.nope.output }} references unknown node "nope"',
    ]);
  });

  it('refuses for_each on a node that no worker runs, and as, max_concurrency or reducers without for_each', () => {
    expect(messages(oneNode({ for_each: '{{ input.items }}' }, { duration_seconds: 1 }, 'WAIT'))).toEqual([
      'nodes[0].for_each: for_each applies to HTTP and CODE nodes only, not to a WAIT node',
    ]);
    expect(messages(oneNode({ as: 'x', max_concurrency: 2, reducers: { n: 'add' } }))).toEqual([
      'nodes[0].as: as applies to a for_each node only; this node has no for_each',
      'nodes[0].max_concurrency: max_concurrency applies to a for_each node only; this node has no for_each (to cap how many of its tasks run at once across runs, use concurrency: {limit})',
      'nodes[0].reducers: reducers applies to a for_each node only; this node has no for_each',
    ]);
  });

  it('refuses an alias CEL could not read: a reserved word', () => {
    for (const as of ['true', 'null', 'in', 'while']) {
      expect(messages(oneNode({ for_each: '{{ input.items }}', as }))).toEqual([
        `nodes[0].as: as must be a name made of letters, digits and "_" (not starting with a digit), other than input, config, tasks, system, run and CEL's reserved words (true, false, null, in, …); got "${as}"`,
      ]);
    }
  });

  it('takes a queue name an operator can type, and refuses any other', () => {
    expect(messages(oneNode({ queue: 'Payments.EU-1_b' }))).toEqual([]);
    expect(messages(oneNode({ queue: 'a b' }))).toEqual([
      `nodes[0].queue: queue "a b" is not a queue name: 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
    ]);
    expect(messages(oneNode({ queue: 'q'.repeat(65) }))).toHaveLength(1);
    expect(messages(oneNode({ queue: '-lead' }))).toHaveLength(1);
    expect(messages(oneNode({ queue: 'x\ny' }))).toHaveLength(1);
  });

  it('refuses a queue name with white space around it: no worker serves " gpu "', () => {
    for (const queue of [' GPU ', 'gpu ', '\tgpu']) {
      expect(validateDefinition(oneNode({ queue }))).toEqual([
        {
          nodeId: 'a',
          path: 'nodes[0].queue',
          message: `queue ${JSON.stringify(queue)} is not a queue name: 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
        },
      ]);
    }
  });

  it('refuses unknown SUBWORKFLOW spec fields, an input or config that is not an object, and a queue', () => {
    expect(messages(oneNode({ queue: 'payments' }, { workflow: 'billing', inputs: { a: 1 }, input: [1], config: 'x' }, 'SUBWORKFLOW'))).toEqual([
      'nodes[0].queue: queue applies to HTTP and CODE nodes only, not to a SUBWORKFLOW node',
      'nodes[0].spec.inputs: unknown field "inputs" in a SUBWORKFLOW spec (did you mean "input"?); expected one of workflow, version, input, config',
      "nodes[0].spec.input: a SUBWORKFLOW node's spec.input must be an object (the child run's input)",
      "nodes[0].spec.config: a SUBWORKFLOW node's spec.config must be an object (the child run's config)",
    ]);
    expect(messages(oneNode({}, { workflow: 'billing', input: '{{ input.order }}', config: '{{ config }}' }, 'SUBWORKFLOW'))).toEqual([]);
  });

  it('requires a SUBWORKFLOW node to name its workflow, and a version to be a positive integer', () => {
    expect(messages(oneNode({}, { input: {} }, 'SUBWORKFLOW'))).toEqual([
      'nodes[0].spec.workflow: a SUBWORKFLOW node requires spec.workflow (a non-empty string)',
    ]);
    expect(messages(oneNode({}, { workflow: 'billing', version: 2 ** 40 }, 'SUBWORKFLOW'))).toEqual([
      "nodes[0].spec.version: a SUBWORKFLOW node's spec.version must be a positive integer (omit it for the default version)",
    ]);
    expect(messages(oneNode({}, { workflow: 'billing', version: 0 }, 'SUBWORKFLOW'))).toEqual([
      "nodes[0].spec.version: a SUBWORKFLOW node's spec.version must be a positive integer (omit it for the default version)",
    ]);
  });
});

describe('fields: payload hygiene, error edges, unknown fields', () => {
  it('refuses output_keep, output_drop and sensitive on nodes whose output is not their own (FORK, JOIN, SWITCH, WAIT)', () => {
    const problems = validateDefinition({
      nodes: [
        { node_id: 'f', type: 'FORK', output_keep: ['a'] },
        { node_id: 'w', type: 'WAIT_FOR_EVENT', spec: { event: 'go' }, sensitive: true },
        { node_id: 'j', type: 'JOIN', output_drop: ['x'] },
      ],
      edges: [
        { from: 'f', to: 'w' },
        { from: 'w', to: 'j' },
      ],
    });
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'nodes[0].output_keep: output_keep applies to HTTP and CODE nodes only, not to a FORK node',
      'nodes[1].sensitive: sensitive applies to HTTP and CODE nodes only, not to a WAIT_FOR_EVENT node',
      'nodes[2].output_drop: output_drop applies to HTTP and CODE nodes only, not to a JOIN node',
    ]);
  });

  it('accepts output_keep, output_drop and sensitive, and names what is wrong with them', () => {
    expect(messages(oneNode({ output_keep: ['a'], output_drop: ['b'], sensitive: true }))).toEqual([]);
    expect(messages(oneNode({ output_keep: [], output_drop: ['b', 'b'], sensitive: 'yes' }))).toEqual([
      'nodes[0].output_keep: output_keep must be a non-empty list of output field names',
      'nodes[0].output_drop: output_drop names a field twice',
      'nodes[0].sensitive: sensitive must be true or false',
    ]);
    expect(messages(oneNode({ output_keep: 'a' }))).toEqual(['nodes[0].output_keep: output_keep must be a non-empty list of output field names']);
  });

  it('accepts on_error edges, with or without a condition (reducers on a JOIN are accepted)', () => {
    const problems = validateDefinition({
      nodes: [
        { node_id: 'a', type: 'HTTP', spec: { url: 'https://x' } },
        { node_id: 'undo', type: 'HTTP', spec: { url: 'https://x/undo', body: { why: '{{tasks.a.error}}' } } },
        { node_id: 'j', type: 'JOIN', spec: { reducers: { total: 'add' } } },
      ],
      edges: [
        { from: 'a', to: 'j', on_error: false },
        { from: 'a', to: 'undo', on_error: true, condition: '{{tasks.a.error.contains("declined")}}' },
      ],
    });
    expect(problems).toEqual([]);
  });

  it('refuses an on_error that is not a boolean, and one leaving a SWITCH or FORK (they never fail)', () => {
    const problems = validateDefinition({
      nodes: [
        { node_id: 'f', type: 'FORK' },
        { node_id: 's', type: 'SWITCH' },
        { node_id: 'b', type: 'HTTP', spec: { url: 'https://y' } },
        { node_id: 'c', type: 'HTTP', spec: { url: 'https://z' } },
      ],
      edges: [
        { from: 'f', to: 's' },
        { from: 's', to: 'b', on_error: true },
        { from: 'f', to: 'c', on_error: 'yes' },
        { from: 'f', to: 'b', on_error: true },
      ],
    });
    expect(problems).toEqual([
      { nodeId: 's', path: 'edges[1].on_error', message: 'on_error edge leaving a SWITCH node ("s"), which never fails; it would never be taken' },
      { nodeId: 'f', path: 'edges[2].on_error', message: 'on_error must be true or false' },
      { nodeId: 'f', path: 'edges[3].on_error', message: 'on_error edge leaving a FORK node ("f"), which never fails; it would never be taken' },
    ]);
  });

  it('accepts a condition on an edge leaving any node, not only a SWITCH', () => {
    const problems = validateDefinition({
      nodes: [
        { node_id: 'a', type: 'HTTP', spec: { url: 'https://x' } },
        { node_id: 'b', type: 'HTTP', spec: { url: 'https://y' } },
      ],
      edges: [{ from: 'a', to: 'b', condition: '{{tasks.a.output.ok}}' }],
    });
    expect(problems).toEqual([]);
  });

  it('refuses a second edge between the same two nodes, but allows a normal and an error edge side by side', () => {
    const nodes = [
      { node_id: 'a', type: 'HTTP', spec: { url: 'https://x' } },
      { node_id: 'b', type: 'HTTP', spec: { url: 'https://y' } },
    ];
    expect(
      messages({
        nodes,
        edges: [
          { from: 'a', to: 'b', condition: '{{ true }}' },
          { from: 'a', to: 'b', condition: '{{ false }}' },
        ],
      }),
    ).toEqual(['edges[1]: duplicate edge a → b (first declared at edges[0]); merge their conditions into one']);
    expect(
      messages({
        nodes,
        edges: [
          { from: 'a', to: 'b' },
          { from: 'a', to: 'b', on_error: true },
        ],
      }),
    ).toEqual([]);
  });

  it('names unknown fields on the definition, a node, an edge and a retry policy', () => {
    const def = {
      workflow_id: 'wf',
      name: 'Orders',
      description: 'what it does',
      nodes: [{ node_id: 'a', type: 'HTTP', description: 'fetch', spec: { url: 'https://x' }, timeout: 5, retry: { max_attempts: 2, backoff: 1 } }],
      edges: [],
      version: 2,
    };
    const def2 = { ...def, nodes: [...def.nodes, { node_id: 'b', type: 'HTTP', spec: { url: 'https://y' } }], edges: [{ from: 'a', to: 'b', when: 'x' }] };
    expect(messages(def)).toEqual([
      'version: unknown field "version"; expected one of nodes, edges, output, name, description, workflow_id, concurrency, priority, timeout_seconds, finally',
      'nodes[0].timeout: unknown field "timeout"; expected one of node_id, name, type, runtime, spec, retry, queue, description, output_keep, output_drop, sensitive, for_each, as, max_concurrency, reducers, tolerated_failures, concurrency, rate_limit, on_exhausted, schedule_to_start_seconds',
      'nodes[0].retry.backoff: unknown field "backoff" (did you mean "backoff_seconds"?); expected one of max_attempts, backoff_seconds, non_retryable',
    ]);
    expect(messages(def2)).toContain('edges[0].when: unknown field "when"; expected one of from, to, condition, on_error');
  });

  it('accepts the order flow and every supported node type', () => {
    expect(validateDefinition(parseDefinition(ORDER_FLOW))).toEqual([]);
  });
});

describe('bounds', () => {
  /** `error` as thrown by `fn`: fails when `fn` returns. */
  const thrown = (fn: () => unknown): WeftError => {
    try {
      fn();
    } catch (e) {
      return e as WeftError;
    }
    throw new Error('expected an error');
  };

  it('refuses a definition over the node or edge cap by its count, before any other rule runs', () => {
    // 14,000 nodes, each of which would be a problem of its own: only the count is reported.
    const many = JSON.stringify({ nodes: Array.from({ length: 14_000 }, () => ({})), edges: [] });
    const err = thrown(() => loadDefinition(many));
    expect(err).toBeInstanceOf(WeftError);
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.message).toBe('definition has 14000 nodes; at most 2000 are allowed (WEFT_MAX_DEFINITION_NODES)');
    expect(err.problems).toEqual([{ path: 'nodes', message: err.message }]);

    const chain = (n: number) => ({
      nodes: Array.from({ length: n }, (_, i) => ({ node_id: `n${i}`, type: 'FORK' })),
      edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
    });
    const limits = { maxNodes: 4, maxEdges: 2 };
    expect(definitionSizeProblem(chain(4), { maxNodes: 4, maxEdges: 3 })).toBeUndefined();
    expect(loadDefinition(JSON.stringify(chain(4)), { maxNodes: 4, maxEdges: 3 }).nodes).toHaveLength(4);
    expect(thrown(() => loadDefinition(JSON.stringify(chain(4)), limits)).message).toBe(
      'definition has 3 edges; at most 2 are allowed (WEFT_MAX_DEFINITION_EDGES)',
    );
    expect(definitionSizeProblem(chain(5), limits)).toEqual({
      path: 'nodes',
      message: 'definition has 5 nodes; at most 4 are allowed (WEFT_MAX_DEFINITION_NODES)',
    });
    // Not lists, or no object at all: left to the rules that say what is wrong.
    expect(definitionSizeProblem({ nodes: 'many' }, limits)).toBeUndefined();
    expect(definitionSizeProblem([1, 2, 3], limits)).toBeUndefined();
  });

  it('keeps retry.max_attempts within 1..100 and retry.backoff_seconds within 0..86400', () => {
    expect(messages(oneNode({ retry: { max_attempts: 101, backoff_seconds: 86_401 } }))).toEqual([
      'nodes[0].retry.max_attempts: retry.max_attempts must be an integer >= 1 and <= 100',
      'nodes[0].retry.backoff_seconds: retry.backoff_seconds must be a number >= 0 and <= 86400 (one day; a retry waits at most 10 minutes anyway)',
    ]);
    expect(messages(oneNode({ retry: { max_attempts: 100, backoff_seconds: 86_400 } }))).toEqual([]);
    expect(messages(oneNode({ retry: { max_attempts: 1.5 } }))).toHaveLength(1);
  });

  it('keeps literal waits and timeouts within a year, and leaves templated ones to run time', () => {
    const year = 31_536_000;
    const def = {
      nodes: [
        { node_id: 'f', type: 'FORK' },
        { node_id: 'long_nap', type: 'WAIT', spec: { duration_seconds: 1e12 } },
        { node_id: 'year_nap', type: 'WAIT', spec: { duration_seconds: String(year) } },
        { node_id: 'ear', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: year + 1 } },
        { node_id: 'call', type: 'HTTP', spec: { url: 'https://x', timeout_seconds: -1 } },
        { node_id: 'run', type: 'CODE', runtime: 'python', spec: { code: 'x', timeout_seconds: '{{input.t}}' } },
        { node_id: 'far', type: 'WAIT', spec: { until: '9999-12-31T23:59:59-01:00' } },
        { node_id: 'feb', type: 'WAIT', spec: { until: '2030-02-30T00:00:00Z' } },
      ],
      edges: ['long_nap', 'year_nap', 'ear', 'call', 'run', 'far', 'feb'].map((to) => ({ from: 'f', to })),
    };
    expect(messages(def)).toEqual([
      'nodes[1].spec.duration_seconds: duration_seconds must be a non-negative number of seconds, at most 31536000 (365 days)',
      'nodes[3].spec.timeout_seconds: timeout_seconds must be a non-negative number of seconds, at most 31536000 (365 days)',
      "nodes[4].spec.timeout_seconds: a HTTP node's timeout_seconds must be a positive number of seconds, at most 31536000 (365 days)",
      'nodes[6].spec.until: until must not be later than 9999-12-31T23:59:59Z',
      'nodes[7].spec.until: until must be an RFC 3339 time, e.g. 2030-01-01T00:00:00Z',
    ]);
  });

  it('refuses a literal HTTP or CODE timeout of 0 (the executors refuse it at run time)', () => {
    const positive = 'must be a positive number of seconds, at most 31536000 (365 days)';
    expect(messages(oneNode({}, { url: 'https://x', timeout_seconds: 0 }, 'HTTP'))).toEqual([
      `nodes[0].spec.timeout_seconds: a HTTP node's timeout_seconds ${positive}`,
    ]);
    expect(messages(oneNode({ runtime: 'python' }, { code: 'x', timeout_seconds: '0' }, 'CODE'))).toEqual([
      `nodes[0].spec.timeout_seconds: a CODE node's timeout_seconds ${positive}`,
    ]);
    expect(messages(oneNode({}, { url: 'https://x', timeout_seconds: 0.5 }, 'HTTP'))).toEqual([]);
    expect(messages(oneNode({ runtime: 'python' }, { code: 'x', timeout_seconds: '{{input.t}}' }, 'CODE'))).toEqual([]); // checked when run
    // A WAIT_FOR_EVENT timeout is the machine's, not an executor's: 0 stays accepted.
    expect(messages(oneNode({}, { event: 'go', timeout_seconds: 0 }, 'WAIT_FOR_EVENT'))).toEqual([]);
  });

  it('checks a literal CODE memory_mb and a literal HTTP method', () => {
    expect(messages(oneNode({ runtime: 'python' }, { code: 'x', memory_mb: 8 }, 'CODE'))).toEqual([
      'nodes[0].spec.memory_mb: memory_mb must be a number from 16 to 4096 (megabytes)',
    ]);
    expect(messages(oneNode({ runtime: 'python' }, { code: 'x', memory_mb: 4097 }, 'CODE'))).toHaveLength(1);
    expect(messages(oneNode({ runtime: 'python' }, { code: 'x', memory_mb: 256 }, 'CODE'))).toEqual([]);
    expect(messages(oneNode({}, { url: 'https://x', method: 'FETCH' }))).toEqual([
      'nodes[0].spec.method: unknown HTTP method "FETCH"; expected one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
    ]);
    expect(messages(oneNode({}, { url: 'https://x', method: 'patch' }))).toEqual([]);
    expect(messages(oneNode({}, { url: 'https://x', method: '{{input.verb}}' }))).toEqual([]);
  });

  it('explains the node id rule', () => {
    const bad = ['1st', 'has space', 'dot.ted', 'x'.repeat(129), ''];
    const def = { nodes: bad.map((node_id) => ({ node_id, type: 'FORK' })) };
    const problems = validateDefinition(def).filter((p) => p.path?.endsWith('.node_id'));
    expect(problems.map((p) => p.path)).toEqual(['nodes[0].node_id', 'nodes[1].node_id', 'nodes[2].node_id', 'nodes[3].node_id', 'nodes[4].node_id']);
    expect(problems[0].message).toBe(
      'invalid node_id "1st": it must start with a letter or "_" and continue with letters, digits, "_" or "-", at most 128 characters in all',
    );
    expect(validateDefinition({ nodes: [{ node_id: '_fetch-order_2', type: 'FORK' }] })).toEqual([]);
  });
});

describe('template references', () => {
  it('reports a tasks reference to a node that does not exist, wherever the template is', () => {
    const def = {
      nodes: [
        { node_id: 'a', type: 'HTTP', spec: { url: 'https://x/{{tasks.nope.output.id}}' } },
        { node_id: 's', type: 'SWITCH' },
        { node_id: 'b', type: 'FORK' },
      ],
      edges: [
        { from: 'a', to: 's' },
        { from: 's', to: 'b', condition: '{{tasks["ghost"].output > 1}}' },
      ],
      output: { x: '{{tasks.nope.output}} and {{tasks.nope.status}}' },
    };
    expect(validateDefinition(def)).toEqual([
      { nodeId: 'a', path: 'nodes[0].spec.url', message: 'template {{ tasks.nope.output.id }} references unknown node "nope"' },
      { nodeId: 's', path: 'edges[1].condition', message: 'template {{ tasks["ghost"].output > 1 }} references unknown node "ghost"' },
      { path: 'output.x', message: 'template {{ tasks.nope.output }} references unknown node "nope"' },
      { path: 'output.x', message: 'template {{ tasks.nope.status }} references unknown node "nope"' },
    ]);
  });

  it('accepts dynamic references, which cannot be checked before the run', () => {
    expect(messages(oneNode({}, { url: 'https://x/{{tasks[input.key].output}}' }))).toEqual([]);
  });

  it('reports a {{ that is never closed', () => {
    expect(messages(oneNode({}, { url: 'https://x/{{input.a', body: 'ok {{input.b}} then {{ oops' }))).toEqual([
      'nodes[0].spec.url: unclosed template: the {{ at column 11 has no closing }}',
      'nodes[0].spec.body: unclosed template: the {{ at column 21 has no closing }}',
    ]);
    expect(messages(oneNode({}, { url: 'https://x', body: '{{input.a}} }}' }))).toEqual([]);
  });
});

import { describe, expect, it } from '@jest/globals';
import { edgeState, iterationSummary, mermaidTasks, toMermaid, type MermaidGraph, type MermaidTask, type MermaidTaskRow } from './mermaid.js';

/** An order flow: a SWITCH on the total, an approval branch, a ship step and a compensation on error. */
const graph: MermaidGraph = {
  nodes: [
    { node_id: 'fetch', type: 'HTTP' },
    { node_id: 'is_large', type: 'SWITCH' },
    { node_id: 'approval', type: 'WAIT_FOR_EVENT' },
    { node_id: 'ship', type: 'HTTP' },
    { node_id: 'refund', type: 'CODE' },
  ],
  edges: [
    { from: 'fetch', to: 'is_large' },
    { from: 'is_large', to: 'approval', condition: '{{tasks.fetch.output.total > 1000}}' },
    { from: 'is_large', to: 'ship' },
    { from: 'approval', to: 'ship' },
    { from: 'ship', to: 'refund', on_error: true },
  ],
};

const tasks = (entries: [string, MermaidTask][]) => new Map(entries);

describe('the picture of a run', () => {
  it('draws the edges a small order went along thick, and the branches it did not take dotted and grey', () => {
    const run = tasks([
      ['fetch', { status: 'COMPLETED' }],
      ['is_large', { status: 'COMPLETED', branches: ['ship'] }],
      ['approval', { status: 'SKIPPED' }],
      ['ship', { status: 'COMPLETED' }],
      ['refund', { status: 'SKIPPED' }],
    ]);
    expect(graph.edges.map((e) => edgeState(e, run))).toEqual(['taken', 'skipped', 'taken', 'skipped', 'skipped']);
    const lines = toMermaid(graph, run).split('\n');
    expect(lines).toContain('  n0 ==> n1');
    expect(lines).toContain('  n1 -.->|"{{tasks.fetch.output.total > 1000}}"| n2');
    expect(lines).toContain('  n1 ==> n3');
    expect(lines).toContain('  linkStyle 1,3,4 stroke:#bdbdbd,color:#9e9e9e');
    expect(lines).toContain('  n3["ship<br/>HTTP<br/>COMPLETED"]:::completed');
  });

  it('takes an error edge only when its source failed, and leaves edges of a running node undecided', () => {
    const failed = tasks([
      ['fetch', { status: 'COMPLETED' }],
      ['is_large', { status: 'COMPLETED', branches: ['ship'] }],
      ['ship', { status: 'FAILED' }],
      ['refund', { status: 'RUNNING' }],
    ]);
    expect(edgeState(graph.edges[4]!, failed)).toBe('taken');
    const running = tasks([['fetch', { status: 'RUNNING' }]]);
    expect(edgeState(graph.edges[0]!, running)).toBe('open');
    expect(toMermaid(graph, running)).not.toContain('linkStyle');
  });

  it('draws a definition without a run plainly, error edges dotted and labelled', () => {
    const text = toMermaid(graph);
    expect(text).toContain('  n0 --> n1');
    expect(text).toContain('  n3 -.->|"on error"| n4');
    expect(text).not.toContain('==>');
  });
});

/** A fan-out over orders, a child run per batch, a notification after both. */
const fanOut: MermaidGraph = {
  nodes: [
    { node_id: 'fetch', type: 'HTTP', for_each: '{{input.orders}}', spec: { url: 'https://shop.example.com/{{item}}' } },
    { node_id: 'settle', type: 'SUBWORKFLOW', spec: { workflow: 'payments', version: 2, input: { orders: '{{tasks.fetch.output}}' } } },
    { node_id: 'route', type: 'SUBWORKFLOW', spec: { workflow: '{{input.flow}}' } },
    { node_id: 'notify', type: 'HTTP' },
    { node_id: 'compensate', type: 'CODE' },
  ],
  edges: [
    { from: 'fetch', to: 'settle' },
    { from: 'settle', to: 'route' },
    { from: 'route', to: 'notify' },
    { from: 'fetch', to: 'compensate', on_error: true },
  ],
};

/** `n` task rows of `nodeId`'s iterations, in the given statuses (index order). */
const iterations = (nodeId: string, statuses: string[]): MermaidTaskRow[] => statuses.map((status, iteration) => ({ nodeId, status, iteration }));

describe('the picture of a fan-out and of child runs', () => {
  it('labels a for_each node with its iteration counts, total first, and colours it by its aggregate task', () => {
    // Iterations listed before the aggregate, as rows created in one event may come back: the
    // node's status must still be the aggregate's RUNNING, not the last iteration's FAILED.
    const rows: MermaidTaskRow[] = [
      ...iterations('fetch', ['COMPLETED', 'RUNNING', 'COMPLETED', 'FAILED', 'COMPLETED']),
      { nodeId: 'fetch', status: 'RUNNING', iteration: null },
    ];
    const lines = toMermaid(fanOut, mermaidTasks(rows)).split('\n');
    expect(lines).toContain('  n0["fetch ×5: 3 completed, 1 running, 1 failed<br/>HTTP<br/>RUNNING"]:::running');
    expect(lines).not.toContain('  classDef failed fill:#ffcdd2,stroke:#d32f2f');
    expect(lines).toContain('  classDef running fill:#bbdefb,stroke:#1976d2');
  });

  it('decides the edges of a for_each node on its aggregate: an iteration that completed does not take the success edge of a failed node', () => {
    const rows: MermaidTaskRow[] = [
      { nodeId: 'fetch', status: 'FAILED', iteration: null },
      ...iterations('fetch', ['COMPLETED', 'FAILED', 'SKIPPED']),
      { nodeId: 'settle', status: 'SKIPPED', iteration: null },
      { nodeId: 'compensate', status: 'COMPLETED', iteration: null },
    ];
    const run = mermaidTasks(rows);
    expect(fanOut.edges.map((e) => edgeState(e, run))).toEqual(['skipped', 'skipped', 'open', 'taken']);
    const text = toMermaid(fanOut, run);
    expect(text).toContain('  n0["fetch ×3: 1 completed, 1 failed, 1 skipped<br/>HTTP<br/>FAILED"]:::failed');
    expect(text).toContain('  n0 ==>|"on error"| n4');
    expect(text).toContain('  n0 -.-> n1');
    expect(text).toContain('  linkStyle 0,1 stroke:#bdbdbd,color:#9e9e9e');
  });

  it('shows ×0 for a for_each node that completed over an empty array, and no counts before it is reached', () => {
    expect(toMermaid(fanOut, mermaidTasks([{ nodeId: 'fetch', status: 'COMPLETED', iteration: null }]))).toContain(
      '  n0["fetch ×0<br/>HTTP<br/>COMPLETED"]:::completed',
    );
    expect(toMermaid(fanOut, new Map())).toContain('  n0["fetch<br/>HTTP"]');
    expect(toMermaid(fanOut)).toContain('  n0["fetch<br/>HTTP"]');
  });

  it('draws a SUBWORKFLOW node as a subroutine naming its child workflow when the spec names it literally', () => {
    const run = mermaidTasks([
      { nodeId: 'fetch', status: 'COMPLETED', iteration: null },
      { nodeId: 'settle', status: 'WAITING', iteration: null },
    ]);
    const lines = toMermaid(fanOut, run).split('\n');
    expect(lines).toContain('  n1[["settle<br/>SUBWORKFLOW payments@2<br/>WAITING"]]:::waiting');
    // A templated workflow name is not known until the node runs: only the type is shown.
    expect(lines).toContain('  n2[["route<br/>SUBWORKFLOW"]]');
    expect(toMermaid(fanOut)).toContain('  n1[["settle<br/>SUBWORKFLOW payments@2"]]');
  });

  it('writes only the non-zero counts, in a fixed order whatever order the statuses come in', () => {
    expect(iterationSummary({ FAILED: 1, WAITING: 2, RUNNING: 0, COMPLETED: 4, QUEUED: 1 })).toBe('×8: 4 completed, 1 queued, 2 waiting, 1 failed');
    expect(iterationSummary({})).toBe('×0');
  });

  it("keeps a node's branches from its own task, not from an iteration", () => {
    const run = mermaidTasks([
      { nodeId: 'fetch', status: 'COMPLETED', iteration: null, branches: ['compensate'] },
      { nodeId: 'fetch', status: 'COMPLETED', iteration: 0, branches: ['settle'] },
    ]);
    expect(run.get('fetch')).toEqual({ status: 'COMPLETED', branches: ['compensate'], iterations: { COMPLETED: 1 } });
    expect(edgeState(fanOut.edges[0]!, run)).toBe('skipped');
  });
});

describe('the picture of a finally step', () => {
  const withFinally: MermaidGraph = { ...graph, finally: { node_id: 'notify', type: 'HTTP' } };

  it('draws it apart, rounded, with a dotted finally link from each sink node, and its status once reached', () => {
    const plain = toMermaid(withFinally).split('\n');
    expect(plain).toContain('  n5(["notify<br/>finally · HTTP"])');
    // refund is the only node without an outgoing edge
    expect(plain).toContain('  n4 -.->|"finally"| n5');
    expect(plain.filter((l) => l.includes('"finally"'))).toHaveLength(1);
    const run = toMermaid(withFinally, tasks([['notify', { status: 'RUNNING' }]])).split('\n');
    expect(run).toContain('  n5(["notify<br/>finally · HTTP<br/>RUNNING"]):::running');
  });

  it('draws nothing more without one', () => {
    expect(toMermaid(graph)).not.toContain('finally');
  });
});

/** A poll: a DO_WHILE runs check then wait_a_bit until the check says done, at most 5 times. */
const polling: MermaidGraph = {
  nodes: [
    { node_id: 'start', type: 'HTTP' },
    {
      node_id: 'poll',
      type: 'DO_WHILE',
      spec: {
        body: {
          nodes: [
            { node_id: 'check', type: 'HTTP', spec: { url: 'https://jobs.example.com/1' } },
            { node_id: 'wait_a_bit', type: 'WAIT', spec: { duration: '1s' } },
          ],
          edges: [{ from: 'check', to: 'wait_a_bit' }],
        },
        condition: "{{ tasks.check.output.status != 'done' }}",
        max_iterations: 5,
      },
    },
    { node_id: 'report', type: 'CODE' },
  ],
  edges: [
    { from: 'start', to: 'poll' },
    { from: 'poll', to: 'report' },
  ],
};

/** The rows of a poll in its third iteration (0-based 2): check done there, wait_a_bit not created yet. */
const thirdIteration: MermaidTaskRow[] = [
  { nodeId: 'start', status: 'COMPLETED' },
  { nodeId: 'poll', status: 'RUNNING', loopIteration: 2 },
  { nodeId: 'check', status: 'FAILED', loopIteration: 0 },
  { nodeId: 'wait_a_bit', status: 'COMPLETED', loopIteration: 0 },
  // Rows of one node in any order: the latest iteration wins, not the last row.
  { nodeId: 'check', status: 'COMPLETED', loopIteration: 2 },
  { nodeId: 'check', status: 'FAILED', loopIteration: 1 },
  { nodeId: 'wait_a_bit', status: 'COMPLETED', loopIteration: 1 },
];

describe('the picture of a DO_WHILE loop', () => {
  it('draws the body as a subgraph titled with the bound, the outer edges joining the subgraph', () => {
    expect(toMermaid(polling)).toBe(
      [
        'flowchart TD',
        '  n0["start<br/>HTTP"]',
        '  subgraph n1["poll<br/>do while · max 5"]',
        '    n2["check<br/>HTTP"]',
        '    n3["wait_a_bit<br/>WAIT"]',
        '    n2 --> n3',
        '  end',
        '  n4["report<br/>CODE"]',
        '  n0 --> n1',
        '  n1 --> n4',
      ].join('\n'),
    );
  });

  it("colours each body node by its latest iteration's task and names that iteration, counted from 1", () => {
    const run = mermaidTasks(thirdIteration);
    expect(run.get('check')).toEqual({ status: 'COMPLETED', branches: null, loopIteration: 2 });
    const lines = toMermaid(polling, run).split('\n');
    expect(lines).toContain('  subgraph n1["poll<br/>do while · iteration 3 of 5<br/>RUNNING"]');
    expect(lines).toContain('    n2["check<br/>HTTP<br/>COMPLETED · iteration 3"]:::completed');
    expect(lines).toContain('    n3["wait_a_bit<br/>WAIT<br/>COMPLETED · iteration 2"]:::completed');
    expect(lines).toContain('  style n1 fill:#bbdefb,stroke:#1976d2');
    expect(lines).toContain('  n0 ==> n1');
    expect(lines).toContain('  n1 --> n4');
    // wait_a_bit is only known from iteration 2: the edge of iteration 3 is not decided yet.
    expect(lines).toContain('    n2 --> n3');
    const on = mermaidTasks([...thirdIteration, { nodeId: 'wait_a_bit', status: 'WAITING', loopIteration: 2 }]);
    expect(toMermaid(polling, on).split('\n')).toContain('    n2 ==> n3');
  });

  it('numbers the links in the order written, body edges first, so a failed loop greys its outgoing edge', () => {
    const run = mermaidTasks([...thirdIteration, { nodeId: 'poll', status: 'FAILED', loopIteration: 4 }, { nodeId: 'report', status: 'SKIPPED' }]);
    const lines = toMermaid(polling, run).split('\n');
    expect(lines).toContain('  n1 -.-> n4');
    expect(lines).toContain('  linkStyle 2 stroke:#bdbdbd,color:#9e9e9e');
    expect(lines).toContain('  subgraph n1["poll<br/>do while · iteration 5 of 5<br/>FAILED"]');
    expect(lines).toContain('  style n1 fill:#ffcdd2,stroke:#d32f2f');
  });

  it("counts a for_each body node's iterations in its latest loop iteration only", () => {
    const run = mermaidTasks([
      { nodeId: 'fan', status: 'COMPLETED', loopIteration: 0 },
      ...iterations('fan', ['COMPLETED', 'COMPLETED', 'COMPLETED']).map((r) => ({ ...r, loopIteration: 0 })),
      { nodeId: 'fan', status: 'RUNNING', iteration: 0, loopIteration: 1 },
      { nodeId: 'fan', status: 'RUNNING', loopIteration: 1 },
    ]);
    expect(run.get('fan')).toEqual({ status: 'RUNNING', branches: null, loopIteration: 1, iterations: { RUNNING: 1 } });
  });

  it('leaves a malformed DO_WHILE spec an empty subgraph without a bound', () => {
    const text = toMermaid({ nodes: [{ node_id: 'loop', type: 'DO_WHILE', spec: { body: 'x', max_iterations: '{{input.n}}' } }], edges: [] });
    expect(text).toBe(['flowchart TD', '  subgraph n0["loop<br/>do while"]', '  end'].join('\n'));
  });
});

import { describe, expect, it } from '@jest/globals';
import { toDag } from './graph.js';
import { mermaidTasks, type MermaidGraph } from './mermaid.js';

const graph: MermaidGraph = {
  nodes: [
    { node_id: 'fetch', type: 'HTTP' },
    { node_id: 'route', type: 'SWITCH' },
    { node_id: 'big', type: 'CODE' },
    { node_id: 'small', type: 'CODE', for_each: '{{input.items}}' },
    { node_id: 'pay', type: 'SUBWORKFLOW', spec: { workflow: 'payments', version: 2 } },
    { node_id: 'dyn', type: 'SUBWORKFLOW', spec: { workflow: '{{input.flow}}' } },
    { node_id: 'undo', type: 'CODE' },
  ],
  edges: [
    { from: 'fetch', to: 'route' },
    { from: 'route', to: 'big', condition: '{{input.n > 5}}' },
    { from: 'route', to: 'small', condition: '{{input.n <= 5}}' },
    { from: 'small', to: 'pay' },
    { from: 'pay', to: 'dyn' },
    { from: 'fetch', to: 'undo', on_error: true },
  ],
};

describe('toDag', () => {
  it("gives a version's graph in definition order, every node unreached and every edge open", () => {
    const dag = toDag(graph);
    expect(dag.nodes.map((n) => [n.id, n.type, n.status, n.forEach, n.iterations, n.childWorkflow])).toEqual([
      ['fetch', 'HTTP', null, false, null, null],
      ['route', 'SWITCH', null, false, null, null],
      ['big', 'CODE', null, false, null, null],
      ['small', 'CODE', null, true, null, null],
      ['pay', 'SUBWORKFLOW', null, false, null, 'payments@2'],
      ['dyn', 'SUBWORKFLOW', null, false, null, null],
      ['undo', 'CODE', null, false, null, null],
    ]);
    expect(dag.edges.map((e) => [e.from, e.to, e.label, e.onError, e.state])).toEqual([
      ['fetch', 'route', null, false, 'OPEN'],
      ['route', 'big', '{{input.n > 5}}', false, 'OPEN'],
      ['route', 'small', '{{input.n <= 5}}', false, 'OPEN'],
      ['small', 'pay', null, false, 'OPEN'],
      ['pay', 'dyn', null, false, 'OPEN'],
      ['fetch', 'undo', 'on error', true, 'OPEN'],
    ]);
  });

  it("tells a run's taken, skipped and open edges apart and counts a fan-out's iterations", () => {
    const tasks = mermaidTasks([
      { nodeId: 'fetch', status: 'COMPLETED' },
      { nodeId: 'route', status: 'COMPLETED', branches: ['small'] },
      { nodeId: 'big', status: 'SKIPPED' },
      { nodeId: 'small', status: 'RUNNING' },
      { nodeId: 'small', status: 'COMPLETED', iteration: 0 },
      { nodeId: 'small', status: 'RUNNING', iteration: 1 },
      { nodeId: 'small', status: 'COMPLETED', iteration: 2 },
    ]);
    const dag = toDag(graph, tasks);
    const node = (id: string) => dag.nodes.find((n) => n.id === id)!;
    expect(node('fetch').status).toBe('COMPLETED');
    expect(node('big').status).toBe('SKIPPED');
    expect(node('small').status).toBe('RUNNING');
    expect(node('small').iterations).toEqual([
      { status: 'COMPLETED', count: 2 },
      { status: 'RUNNING', count: 1 },
    ]);
    expect(node('pay').status).toBeNull();
    expect(dag.edges.map((e) => `${e.from}->${e.to}:${e.state}`)).toEqual([
      'fetch->route:TAKEN',
      'route->big:SKIPPED',
      'route->small:TAKEN',
      'small->pay:OPEN',
      'pay->dyn:OPEN',
      // fetch succeeded, so its on_error edge did not apply.
      'fetch->undo:SKIPPED',
    ]);
  });

  it('gives a reached fan-out with no iterations yet an empty count, and takes an on_error edge after a failure', () => {
    const dag = toDag(
      graph,
      mermaidTasks([
        { nodeId: 'fetch', status: 'FAILED' },
        { nodeId: 'undo', status: 'COMPLETED' },
        { nodeId: 'small', status: 'COMPLETED' },
      ]),
    );
    expect(dag.nodes.find((n) => n.id === 'small')!.iterations).toEqual([]);
    expect(dag.edges.find((e) => e.to === 'undo')!.state).toBe('TAKEN');
    expect(dag.edges.find((e) => e.to === 'route')!.state).toBe('SKIPPED');
  });

  it('puts the finally step last, linked from each sink node, the links taken once it was reached', () => {
    const def = {
      nodes: [
        { node_id: 'a', type: 'HTTP' },
        { node_id: 'b', type: 'HTTP' },
        { node_id: 'c', type: 'HTTP' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'a', to: 'c' },
      ],
      finally: { node_id: 'cleanup', type: 'CODE' },
    };
    const open = toDag(def);
    expect(open.nodes.at(-1)).toEqual({
      id: 'cleanup',
      type: 'CODE',
      status: null,
      forEach: false,
      iterations: null,
      childWorkflow: null,
      loop: null,
      maxIterations: null,
      loopIteration: null,
    });
    expect(open.edges.slice(2)).toEqual([
      { from: 'b', to: 'cleanup', label: 'finally', onError: false, state: 'OPEN' },
      { from: 'c', to: 'cleanup', label: 'finally', onError: false, state: 'OPEN' },
    ]);
    const run = toDag(def, new Map([['cleanup', { status: 'COMPLETED' }]]));
    expect(run.nodes.at(-1)?.status).toBe('COMPLETED');
    expect(run.edges.slice(2).map((e) => e.state)).toEqual(['TAKEN', 'TAKEN']);
  });
});

describe('toDag of a DO_WHILE loop', () => {
  const def: MermaidGraph = {
    nodes: [
      { node_id: 'start', type: 'HTTP' },
      {
        node_id: 'poll',
        type: 'DO_WHILE',
        spec: {
          body: {
            nodes: [
              { node_id: 'check', type: 'HTTP' },
              { node_id: 'wait_a_bit', type: 'WAIT' },
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

  it('lists the body nodes after their loop, naming it, and the body edges after the outer ones', () => {
    const dag = toDag(def);
    expect(dag.nodes.map((n) => [n.id, n.type, n.loop, n.maxIterations, n.loopIteration])).toEqual([
      ['start', 'HTTP', null, null, null],
      ['poll', 'DO_WHILE', null, 5, null],
      ['check', 'HTTP', 'poll', null, null],
      ['wait_a_bit', 'WAIT', 'poll', null, null],
      ['report', 'CODE', null, null, null],
    ]);
    expect(dag.edges.map((e) => `${e.from}->${e.to}:${e.state}`)).toEqual(['start->poll:OPEN', 'poll->report:OPEN', 'check->wait_a_bit:OPEN']);
  });

  it("gives the loop's running iteration, and each body node the status and iteration of its latest task", () => {
    const dag = toDag(
      def,
      mermaidTasks([
        { nodeId: 'start', status: 'COMPLETED' },
        { nodeId: 'poll', status: 'RUNNING', loopIteration: 1 },
        { nodeId: 'check', status: 'COMPLETED', loopIteration: 0 },
        { nodeId: 'wait_a_bit', status: 'COMPLETED', loopIteration: 0 },
        { nodeId: 'check', status: 'COMPLETED', loopIteration: 1 },
        { nodeId: 'wait_a_bit', status: 'WAITING', loopIteration: 1 },
      ]),
    );
    const node = (id: string) => dag.nodes.find((n) => n.id === id)!;
    expect([node('poll').status, node('poll').loopIteration]).toEqual(['RUNNING', 1]);
    expect([node('wait_a_bit').status, node('wait_a_bit').loopIteration]).toEqual(['WAITING', 1]);
    expect(node('report').loopIteration).toBeNull();
    expect(dag.edges.map((e) => `${e.from}->${e.to}:${e.state}`)).toEqual(['start->poll:TAKEN', 'poll->report:OPEN', 'check->wait_a_bit:TAKEN']);
  });
});

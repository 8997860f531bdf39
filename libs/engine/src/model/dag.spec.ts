import { describe, expect, it } from '@jest/globals';
import { buildDag, jsonStrings, templateTaskRefs } from './dag.js';
import { maxAttempts, nodeQueue, retryDelayMs, type WorkflowNode } from './workflow-definition.js';
import { NodeType, TaskStatus, type JsonValue } from './workflow-types.js';

const node = (id: string, type: NodeType, spec?: JsonValue): WorkflowNode => ({ node_id: id, type, ...(spec !== undefined ? { spec } : {}) });

describe('task references', () => {
  const dag = buildDag({
    nodes: [
      node('p', NodeType.Http, {}),
      node('s', NodeType.Switch, {}),
      node('dyn', NodeType.Http, { v: '{{tasks[input.key].output}}' }),
      node('q', NodeType.Http, { v: '{{tasks["my-node"].output.x + tasks.other.output.y}}', url: '/api/tasks/1' }),
    ],
    edges: [
      { from: 'p', to: 's' },
      { from: 's', to: 'dyn', condition: '{{tasks.p.output.n > 1}}' },
    ],
  });

  it('a switch reads its conditions and passes its predecessor through', () => {
    expect(dag.taskRefs('s')).toEqual(['p', 'p']);
  });

  it('dynamic task access cannot be determined: load everything', () => {
    expect(dag.taskRefs('dyn')).toBeUndefined();
  });

  it('finds quoted refs and ignores "tasks" outside templates', () => {
    expect(dag.taskRefs('q')).toEqual(['my-node', 'other']);
  });

  it('a node without templates reads nothing', () => {
    expect(dag.taskRefs('p')).toEqual([]);
  });

  it('finds single-quoted refs, refs in keys and deep in bodies', () => {
    expect(templateTaskRefs(["{{tasks['a-b'].output}}"])).toEqual(['a-b']);
    expect(templateTaskRefs(['{{ tasks . spaced . output }}'])).toEqual(['spaced']);
    const deep = buildDag({
      nodes: [node('d', NodeType.Http, { body: { list: [{ x: 'v={{tasks.inner.output}}' }], '{{tasks.key.output.k}}': 1 } })],
      edges: [],
    });
    expect(deep.taskRefs('d')?.sort()).toEqual(['inner', 'key']);
  });

  it('any unaccountable use of tasks makes the refs undetermined', () => {
    expect(templateTaskRefs(['{{size(tasks)}}'])).toBeUndefined();
    expect(templateTaskRefs(['{{tasks.a.output}}', '{{tasks}}'])).toBeUndefined();
    expect(templateTaskRefs(['{{input.tasks_done}}'])).toEqual([]); // a different word
  });

  it('jsonStrings collects values and keys', () => {
    expect(jsonStrings({ a: ['x', { b: 'y' }], n: 1 }).sort()).toEqual(['a', 'b', 'n', 'x', 'y']);
    expect(jsonStrings('plain')).toEqual(['plain']);
    expect(jsonStrings(undefined)).toEqual([]);
  });
});

describe('retry policy', () => {
  it('counts attempts and doubles the backoff, capped at 10 minutes', () => {
    const n: WorkflowNode = { node_id: 'n', type: NodeType.Http, retry: { max_attempts: 3, backoff_seconds: 2 } };
    expect(maxAttempts(n)).toBe(3);
    expect(retryDelayMs(n, 1)).toBe(2000);
    expect(retryDelayMs(n, 3)).toBe(8000);
    expect(maxAttempts({ node_id: 'd', type: NodeType.Http })).toBe(1);
    expect(retryDelayMs({ ...n, retry: { max_attempts: 9, backoff_seconds: 5 } }, 8)).toBe(600_000);
    expect(retryDelayMs({ ...n, retry: { max_attempts: 9, backoff_seconds: 5 } }, 5000)).toBe(600_000);
    expect(retryDelayMs({ node_id: 'd', type: NodeType.Http }, 1)).toBe(0);
  });

  it('routes nodes to queues', () => {
    expect(nodeQueue({ node_id: 'h', type: NodeType.Http })).toBe('http');
    expect(nodeQueue({ node_id: 'c', type: NodeType.Code, runtime: 'node' })).toBe('js');
    expect(nodeQueue({ node_id: 'c', type: NodeType.Code })).toBe('python');
    expect(nodeQueue({ node_id: 'p', type: NodeType.Http, queue: 'Partner' })).toBe('partner');
  });
});

describe('graph queries', () => {
  //  a → b → d
  //  a → c → d → e
  const dag = buildDag({
    nodes: [node('a', NodeType.Fork), node('b', NodeType.Http), node('c', NodeType.Http), node('d', NodeType.Join), node('e', NodeType.Http)],
    edges: [
      { from: 'a', to: 'b' },
      { from: 'a', to: 'c' },
      { from: 'b', to: 'd' },
      { from: 'c', to: 'd' },
      { from: 'd', to: 'e' },
    ],
  });

  it('indexes nodes and edges', () => {
    expect(dag.nodes.map((n) => n.node_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(dag.getNode('c')?.type).toBe(NodeType.Http);
    expect(dag.getNode('zz')).toBeUndefined();
    expect(dag.successors('a').map((n) => n.node_id)).toEqual(['b', 'c']);
    expect(dag.incomingEdges('d').map((e) => e.from)).toEqual(['b', 'c']);
    expect(dag.outgoingEdges('e')).toEqual([]);
    expect(dag.sinkNodes().map((n) => n.node_id)).toEqual(['e']);
  });

  it('walks descendants breadth first, excluding the node', () => {
    expect(dag.descendants('a')).toEqual(['b', 'c', 'd', 'e']);
    expect(dag.descendants('c')).toEqual(['d', 'e']);
    expect(dag.descendants('e')).toEqual([]);
  });

  it('finds the start node, honours a hint, and explains failures', () => {
    expect(dag.startNode().node_id).toBe('a');
    expect(dag.startNode('c').node_id).toBe('c');
    expect(() => dag.startNode('zz')).toThrow('start node zz not found in workflow definition');
    const cyclic = buildDag({
      nodes: [node('x', NodeType.Http), node('y', NodeType.Http)],
      edges: [
        { from: 'x', to: 'y' },
        { from: 'y', to: 'x' },
      ],
    });
    expect(() => cyclic.startNode()).toThrow(/no start node found/);
  });

  it('the entry node is the first in spec order without incoming edges', () => {
    const d = buildDag({ nodes: [node('late', NodeType.Http), node('first', NodeType.Http)], edges: [{ from: 'first', to: 'late' }] });
    expect(d.startNode().node_id).toBe('first');
  });

  it('returns the output of the first completed predecessor that has one', () => {
    const tasks = new Map([
      ['b', { status: TaskStatus.Failed, output: { from: 'b' } }],
      ['c', { status: TaskStatus.Completed, output: { from: 'c' } }],
    ]);
    expect(dag.predecessorOutput('d', tasks)).toEqual({ from: 'c' });
    expect(dag.predecessorOutput('d', new Map())).toBeUndefined();
  });

  it('knows which outputs the run output reads', () => {
    expect(dag.outputRefs()).toEqual(['e']); // default: the sinks
    const explicit = buildDag({ nodes: dag.nodes.slice(), edges: [], output: { sum: '{{tasks.b.output.n + tasks["c"].output.n}}' } });
    expect(explicit.outputRefs()).toEqual(['b', 'c']);
    const dynamic = buildDag({ nodes: dag.nodes.slice(), edges: [], output: '{{tasks}}' });
    expect(dynamic.outputRefs()).toBeUndefined();
  });
});

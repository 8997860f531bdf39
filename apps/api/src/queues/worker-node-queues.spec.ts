import { describe, expect, it } from '@jest/globals';
import type { WorkflowDefinition } from '@weft/engine';
import { reservedQueueProblems, unservedQueueWarnings, workerNodeQueues } from './worker-node-queues.js';

/** A definition with a worker node, a DO_WHILE whose body holds two more, and a finally step. */
const def = {
  nodes: [
    { node_id: 'a', type: 'HTTP', spec: { url: 'http://127.0.0.1/' } },
    {
      node_id: 'loop',
      type: 'DO_WHILE',
      spec: {
        body: {
          nodes: [
            { node_id: 'b', type: 'CODE', runtime: 'js', queue: 'GPU', spec: { code: 'x' } },
            { node_id: 'w', type: 'WAIT', spec: { duration_seconds: 1 } },
            { node_id: 'c', type: 'HTTP', spec: { url: 'http://127.0.0.1/' } },
          ],
          edges: [],
        },
        condition: '{{false}}',
        max_iterations: 2,
      },
    },
  ],
  edges: [{ from: 'a', to: 'loop' }],
  finally: { node_id: 'f', type: 'CODE', runtime: 'python', spec: { code: 'x' } },
} as unknown as WorkflowDefinition;

describe('the queues of a definition', () => {
  it('include the worker nodes of DO_WHILE bodies, at their paths in the body', () => {
    expect(workerNodeQueues(def)).toEqual([
      { nodeId: 'a', path: 'nodes[0].type', queue: 'http' },
      { nodeId: 'b', path: 'nodes[1].spec.body.nodes[0].queue', queue: 'gpu' },
      { nodeId: 'c', path: 'nodes[1].spec.body.nodes[2].type', queue: 'http' },
      { nodeId: 'f', path: 'finally.type', queue: 'python' },
    ]);
  });

  it('refuses a reserved queue, and warns of an unserved one, inside a body as outside', () => {
    const nodes = workerNodeQueues(def);
    expect(reservedQueueProblems(nodes, new Map([['gpu', 'denied' as const]]))).toEqual([
      { nodeId: 'b', path: 'nodes[1].spec.body.nodes[0].queue', message: 'queue "gpu" is reserved for other tenants: this tenant may not use it' },
    ]);
    expect(unservedQueueWarnings(nodes, new Set(['http', 'python'])).map((p) => [p.nodeId, p.path])).toEqual([['b', 'nodes[1].spec.body.nodes[0].queue']]);
  });
});

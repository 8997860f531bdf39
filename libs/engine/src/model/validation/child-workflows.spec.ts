import { describe, expect, it } from '@jest/globals';
import { childWorkflowRefs, childWorkflowWarnings } from './child-workflows.js';

const DEF = {
  nodes: [
    { node_id: 'f', type: 'FORK' },
    { node_id: 'pay', type: 'SUBWORKFLOW', spec: { workflow: 'paymnet', input: {} } },
    { node_id: 'old', type: 'SUBWORKFLOW', spec: { workflow: 'payment', version: 1 } },
    { node_id: 'next', type: 'SUBWORKFLOW', spec: { workflow: 'payment', version: 3 } },
    { node_id: 'now', type: 'SUBWORKFLOW', spec: { workflow: 'payment' } },
    { node_id: 'dyn', type: 'SUBWORKFLOW', spec: { workflow: 'pay-{{input.kind}}', version: 2 } },
    { node_id: 'call', type: 'HTTP', spec: { url: 'https://x', workflow: 'nope' } },
  ],
};

describe('warnings about the workflows SUBWORKFLOW nodes call', () => {
  it('lists the literal calls with their versions; a templated workflow is only known at run time', () => {
    expect(childWorkflowRefs(DEF)).toEqual([
      { nodeId: 'pay', path: 'nodes[1].spec.workflow', workflow: 'paymnet' },
      { nodeId: 'old', path: 'nodes[2].spec.workflow', workflow: 'payment', version: 1 },
      { nodeId: 'next', path: 'nodes[3].spec.workflow', workflow: 'payment', version: 3 },
      { nodeId: 'now', path: 'nodes[4].spec.workflow', workflow: 'payment' },
    ]);
  });

  it('warns about a missing workflow (with the close one), a missing version and a deprecated one', () => {
    const tenant = {
      ids: ['invoice', 'payment'],
      versions: new Map([
        ['paymnet', []],
        [
          'payment',
          [
            { version: 1, deprecated: true },
            { version: 2, deprecated: false },
          ],
        ],
      ]),
    };
    expect(childWorkflowWarnings(childWorkflowRefs(DEF), tenant)).toEqual([
      {
        nodeId: 'pay',
        path: 'nodes[1].spec.workflow',
        message:
          'SUBWORKFLOW node "pay" calls workflow "paymnet", which this tenant does not have (did you mean "payment"?); runs that reach the node will fail there until it is published',
      },
      {
        nodeId: 'old',
        path: 'nodes[2].spec.workflow',
        message:
          'SUBWORKFLOW node "old" calls version 1 of workflow "payment", which is deprecated; runs that reach the node will fail there until it is restored',
      },
      {
        nodeId: 'next',
        path: 'nodes[3].spec.workflow',
        message:
          'SUBWORKFLOW node "next" calls version 3 of workflow "payment", whose latest version is 2; runs that reach the node will fail there until that version is published',
      },
    ]);
  });

  it('has nothing to say when every called workflow and version exists', () => {
    const refs = [{ nodeId: 'now', path: 'nodes[0].spec.workflow', workflow: 'payment', version: 2 }];
    expect(childWorkflowWarnings(refs, { ids: [], versions: new Map([['payment', [{ version: 2, deprecated: false }]]]) })).toEqual([]);
  });
});

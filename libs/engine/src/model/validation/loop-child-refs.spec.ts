import { describe, expect, it } from '@jest/globals';
import { childWorkflowRefs } from './child-workflows.js';

describe('a SUBWORKFLOW in a DO_WHILE body', () => {
  it('is among the calls publishing warns about', () => {
    const def = {
      nodes: [
        {
          node_id: 'l',
          type: 'DO_WHILE',
          spec: { body: { nodes: [{ node_id: 'pay', type: 'SUBWORKFLOW', spec: { workflow: 'paymnet' } }] }, condition: '{{ true }}', max_iterations: 3 },
        },
      ],
    };
    expect(childWorkflowRefs(def)).toEqual([{ nodeId: 'pay', path: 'nodes[0].spec.body.nodes[0].spec.workflow', workflow: 'paymnet' }]);
  });
});

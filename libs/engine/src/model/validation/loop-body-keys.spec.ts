import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

const http = (id: string) => ({ node_id: id, type: 'HTTP', spec: { url: 'http://127.0.0.1/x' } });

describe('a DO_WHILE body with a key it does not take', () => {
  it('is refused, so a misspelt `edges` does not silently run every body node in parallel', () => {
    const def = {
      nodes: [
        {
          node_id: 'l',
          type: 'DO_WHILE',
          spec: { body: { nodes: [http('a'), http('b')], edge: [{ from: 'a', to: 'b' }] }, condition: '{{ true }}', max_iterations: 3 },
        },
      ],
    };
    expect(validateDefinition(def)).toEqual([
      expect.objectContaining({ path: 'nodes[0].spec.body.edge', message: expect.stringMatching(/unknown body key "edge"/) }),
    ]);
  });
});

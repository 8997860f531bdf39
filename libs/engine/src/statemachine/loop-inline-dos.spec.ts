import { describe, expect, it } from '@jest/globals';
import { MAX_ITERATIONS, type WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, type JsonValue } from '../model/workflow-types.js';
import { validateDefinition } from '../model/validate.js';
import { edge, fork, Harness } from './testing/harness.js';

/**
 * A DO_WHILE whose body holds control nodes only runs every iteration within one event. Unbounded,
 * 50 FORKs x 10,000 iterations made one RunStarted of 510,002 actions (500,001 tasks), 5.5 s of
 * machine CPU and 70 MB of actions. One event creates at most MAX_ITERATIONS body tasks of a loop,
 * as a for_each node does, and the loop then fails saying why.
 */
describe('a DO_WHILE of control nodes only', () => {
  it('creates at most MAX_ITERATIONS tasks in one event, then fails saying its body waits for nothing', async () => {
    const n = 50;
    const body = Array.from({ length: n }, (_, i) => fork(`f${i}`));
    const edges = body.slice(1).map((b, i) => edge(`f${i}`, b.node_id));
    const l: WorkflowNode = {
      node_id: 'l',
      type: NodeType.DoWhile,
      spec: { body: { nodes: body, edges } as unknown as JsonValue, condition: '{{true}}', max_iterations: 10_000 },
    };
    expect(validateDefinition({ nodes: [l], edges: [] })).toEqual([]);
    const h = new Harness([l], []);
    const tr = await h.start();
    expect(tr.actions.filter((a) => a.type === 'CreateTask').length).toBeLessThanOrEqual(MAX_ITERATIONS);
    expect(h.node('l').error).toMatch(/^iteration 199: 199 iterations ran within one step without waiting for any work, .* needs a node that waits for work/);
    expect(h.run.status).toBe('FAILED');
  });
});

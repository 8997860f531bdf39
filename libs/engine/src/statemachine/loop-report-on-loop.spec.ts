import { describe, expect, it } from '@jest/globals';
import { NodeType, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { Harness, task } from './testing/harness.js';

describe('a worker report naming a DO_WHILE task', () => {
  const h = () =>
    new Harness(
      [{ node_id: 'l', type: NodeType.DoWhile, spec: { body: { nodes: [task('a')] } as unknown as JsonValue, condition: '{{true}}', max_iterations: 3 } }],
      [],
    );

  it('is ignored: the loop is never dispatched, its body decides its end', async () => {
    for (const type of ['NodeCompleted', 'NodeFailed'] as const) {
      const run = h();
      await run.start();
      const l = run.node('l');
      const tr = await run.apply(
        type === 'NodeCompleted'
          ? { type, taskId: l.taskId, nodeId: 'l', attempt: l.attempt, output: { forged: true } }
          : { type, taskId: l.taskId, nodeId: 'l', attempt: l.attempt, error: 'forged' },
      );
      expect(tr.ignored).toBeDefined();
      expect(run.node('l').status).toBe(TaskStatus.Running);
    }
  });
});

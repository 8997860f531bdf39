import { describe, expect, it } from '@jest/globals';
import { historyEvent } from './history.js';
import { buildDag, NodeType, TaskStatus, type JsonValue, type NodeState } from '../index.js';

describe('the history of a DO_WHILE body report', () => {
  const dag = buildDag({
    nodes: [
      {
        node_id: 'l',
        type: NodeType.DoWhile,
        spec: { body: { nodes: [{ node_id: 'a', type: NodeType.Http }] } as unknown as JsonValue, condition: '{{true}}', max_iterations: 5 },
      },
    ],
    edges: [],
  });
  const nodes = new Map<string, NodeState>([
    ['l', { taskId: 'tl', status: TaskStatus.Running, attempt: 0, loop: { iteration: 2, previous: null } } as NodeState],
    ['a', { taskId: 'a-it2', status: TaskStatus.Running, attempt: 0 } as NodeState],
  ]);

  it('tags a report for the current iteration with it', () => {
    const ev = historyEvent({ type: 'NodeCompleted', taskId: 'a-it2', nodeId: 'a', attempt: 0, output: {} }, dag, nodes);
    expect(ev).toMatchObject({ loopIteration: 2 });
  });

  it('does not tag a late report for an archived iteration’s task with the current iteration', () => {
    const ev = historyEvent({ type: 'NodeCompleted', taskId: 'a-it0', nodeId: 'a', attempt: 0, output: {} }, dag, nodes);
    expect((ev as { loopIteration?: number }).loopIteration).not.toBe(2);
  });
});

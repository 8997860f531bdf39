import { describe, expect, it } from '@jest/globals';
import type { WorkflowEdge, WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { actionsOf, finished, Harness, task } from './testing/harness.js';

function loop(id: string, nodes: WorkflowNode[], edges: WorkflowEdge[], condition: string, max: number): WorkflowNode {
  return { node_id: id, type: NodeType.DoWhile, spec: { body: { nodes, edges } as unknown as JsonValue, condition, max_iterations: max } };
}

describe('on_exhausted: pause on a DO_WHILE body node', () => {
  it('pauses the run with the loop still running, and the resume runs the node again within the iteration', async () => {
    const h = new Harness([loop('l', [task('a', undefined, { on_exhausted: 'pause' })], [], '{{tasks.l.iteration < 1}}', 3)], []);
    await h.start();
    await h.fail('a', 'down');
    expect(h.run.status).toBe(RunStatus.Paused);
    // The loop waits for the resume, as the rest of the run does.
    expect(h.node('l')).toMatchObject({ status: TaskStatus.Running, loop: { iteration: 0 } });
    let tr = await h.apply({ type: 'RunResumed' });
    expect(actionsOf(tr, 'RetryTask').map((a) => a.nodeId)).toEqual(['a']);
    await h.complete('a', { ok: 0 });
    expect(h.node('l').loop?.iteration).toBe(1);
    tr = await h.complete('a', { ok: 1 });
    expect(finished(tr)).toMatchObject({ status: RunStatus.Succeeded, output: { l: { a: { ok: 1 } } } });
  });
});

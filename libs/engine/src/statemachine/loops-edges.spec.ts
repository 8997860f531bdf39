import { describe, expect, it } from '@jest/globals';
import type { WorkflowEdge, WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { actionsOf, dispatched, edge, finished, fork, forEach, Harness, task } from './testing/harness.js';

/** A DO_WHILE `id` over `nodes`/`edges`. */
function loop(id: string, nodes: WorkflowNode[], edges: WorkflowEdge[], condition: string, max: number): WorkflowNode {
  return { node_id: id, type: NodeType.DoWhile, spec: { body: { nodes, edges } as unknown as JsonValue, condition, max_iterations: max } };
}

describe('a DO_WHILE loop at its edges', () => {
  it('runs a body of control nodes only through its iterations within one event', async () => {
    const h = new Harness([loop('l', [fork('f')], [], '{{tasks.l.iteration < 4}}', 10), task('after')], [edge('l', 'after')]);
    const tr = await h.start();
    expect(actionsOf(tr, 'NextLoopIteration').map((a) => a.iteration)).toEqual([1, 2, 3, 4]);
    expect(h.node('l')).toMatchObject({ status: TaskStatus.Completed, loop: { iteration: 4 } });
    expect(dispatched(tr)).toEqual(['after']);
  });

  it('is cancelled with its body by a cancel, and the run names no body node', async () => {
    const h = new Harness([loop('l', [task('a')], [], '{{true}}', 5)], []);
    await h.start();
    await h.complete('a');
    expect(h.node('l').loop?.iteration).toBe(1);
    const tr = await h.cancel('stop');
    expect(h.node('l').status).toBe(TaskStatus.Cancelled);
    expect(h.node('a').status).toBe(TaskStatus.Cancelled);
    expect(finished(tr)).toMatchObject({ status: RunStatus.Cancelled, reason: 'stop' });
  });

  it('goes on when a body failure is taken by an on_error edge', async () => {
    const body = [task('try'), task('fallback')];
    const h = new Harness([loop('l', body, [{ from: 'try', to: 'fallback', on_error: true }], '{{tasks.l.iteration < 1}}', 3)], []);
    await h.start();
    await h.fail('try', 'flaky');
    await h.complete('fallback', { used: 0 });
    expect(h.node('l').loop?.iteration).toBe(1);
    await h.fail('try', 'flaky');
    const tr = await h.complete('fallback', { used: 1 });
    expect(finished(tr)).toMatchObject({ status: RunStatus.Succeeded, output: { l: { fallback: { used: 1 } } } });
  });

  it('fails naming the iteration when its condition cannot be evaluated', async () => {
    const h = new Harness([loop('l', [task('a')], [], '{{tasks.a.output.missing.deeper}}', 3)], []);
    await h.start();
    const tr = await h.complete('a', {});
    expect(h.node('l').status).toBe(TaskStatus.Failed);
    expect(h.node('l').error).toMatch(/^iteration 1: condition: failed to evaluate condition: /);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('gives a for_each body node its iterations anew in each loop iteration', async () => {
    const h = new Harness([loop('l', [forEach('each', '{{[1, 2]}}')], [], '{{tasks.l.iteration < 1}}', 3)], []);
    let tr = await h.start();
    expect(actionsOf(tr, 'CreateIterations').map((a) => a.loopIteration)).toEqual([0]);
    await h.completeIteration('each', 0, 'a');
    tr = await h.completeIteration('each', 1, 'b');
    expect(actionsOf(tr, 'NextLoopIteration')[0]).toMatchObject({ iteration: 1, previous: { each: ['a', 'b'] } });
    expect(actionsOf(tr, 'CreateIterations').map((a) => a.loopIteration)).toEqual([1]);
    await h.completeIteration('each', 0, 'c');
    tr = await h.completeIteration('each', 1, 'd');
    expect(finished(tr)).toMatchObject({ status: RunStatus.Succeeded, output: { l: { each: ['c', 'd'] } } });
  });
  it('refuses to start a run inside a body', async () => {
    const h = new Harness([task('a'), loop('l', [task('b')], [], '{{false}}', 2)], [edge('a', 'l')]);
    await expect(h.start('b')).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: 'start node b is in the body of DO_WHILE l: start at l instead' });
    const tr = await h.start('l');
    expect(dispatched(tr)).toEqual(['b']);
  });
  it('reads the previous iteration output from the store when the snapshot left it unread', async () => {
    const h = new Harness([loop('l', [task('a'), task('b', { prev: '{{tasks.l.previous}}' })], [edge('a', 'b')], '{{tasks.l.iteration < 2}}', 5)], []);
    await h.start();
    await h.complete('a');
    await h.complete('b', { n: 1 });
    // As a snapshot read from storage: the iteration, not the previous output (the task's input).
    const l = h.node('l');
    h.inputsByTask.set(l.taskId, { stored: true });
    l.loop = { iteration: l.loop!.iteration };
    const tr = await h.complete('a');
    expect(actionsOf(tr, 'DispatchTask')[0]).toMatchObject({ node: { node_id: 'b' }, input: { prev: { stored: true } } });
    expect(h.node('l').loop).toEqual({ iteration: 1, previous: { stored: true } });
  });
});

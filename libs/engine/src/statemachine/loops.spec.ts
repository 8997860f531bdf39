import { describe, expect, it } from '@jest/globals';
import type { WorkflowEdge, WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { validateDefinition } from '../model/validate.js';
import { actionsOf, dispatched, edge, finished, Harness, task } from './testing/harness.js';

/** A DO_WHILE `id` over `nodes`/`edges` with `condition` and `max`. */
function loop(id: string, nodes: WorkflowNode[], edges: WorkflowEdge[], condition: string, max: number, output?: JsonValue): WorkflowNode {
  return {
    node_id: id,
    type: NodeType.DoWhile,
    spec: { body: { nodes, edges } as unknown as JsonValue, condition, max_iterations: max, ...(output !== undefined ? { output } : {}) } as JsonValue,
  };
}

/** start → poll (check → note) → after. The body reads the loop's iteration and previous output. */
function story(max: number, output?: JsonValue): Harness {
  const body = [task('check', { n: '{{tasks.poll.iteration}}', prev: '{{tasks.poll.previous}}' }), task('note')];
  return new Harness(
    [
      task('start'),
      loop('poll', body, [edge('check', 'note')], "{{tasks.check.output.status != 'done'}}", max, output),
      task('after', { got: '{{tasks.poll.output}}' }),
    ],
    [edge('start', 'poll'), edge('poll', 'after')],
  );
}

describe('a DO_WHILE loop', () => {
  it('runs its body again while the condition holds, then completes with the last iteration and routes on', async () => {
    const h = story(5, '{{tasks.check.output}}');
    await h.start();
    let tr = await h.complete('start');
    expect(dispatched(tr)).toEqual(['check']);
    expect(h.node('poll')).toMatchObject({ status: TaskStatus.Running, loop: { iteration: 0, previous: null } });
    expect(actionsOf(tr, 'DispatchTask')[0]!.input).toEqual({ n: 0, prev: null });
    await h.complete('check', { status: 'waiting', i: 0 });
    tr = await h.complete('note');
    // Iteration 0 ended with its condition true: iteration 1 starts with iteration 0's output.
    expect(actionsOf(tr, 'NextLoopIteration')).toEqual([
      expect.objectContaining({ nodeId: 'poll', iteration: 1, previous: { status: 'waiting', i: 0 }, bodyNodeIds: ['check', 'note'] }),
    ]);
    expect(actionsOf(tr, 'CreateTask').map((a) => [a.node.node_id, a.loopIteration])).toEqual([['check', 1]]);
    expect(actionsOf(tr, 'DispatchTask')[0]!.input).toEqual({ n: 1, prev: { status: 'waiting', i: 0 } });
    expect(h.run.nodes.has('note')).toBe(false);
    await h.complete('check', { status: 'done', i: 1 });
    tr = await h.complete('note');
    expect(actionsOf(tr, 'CompleteTask').find((a) => a.nodeId === 'poll')?.output).toEqual({ status: 'done', i: 1 });
    expect(dispatched(tr)).toEqual(['after']);
    expect(actionsOf(tr, 'DispatchTask')[0]!.input).toEqual({ got: { status: 'done', i: 1 } });
    tr = await h.complete('after');
    expect(finished(tr)).toMatchObject({ status: RunStatus.Succeeded, output: { after: {} } });
  });

  it('fails when the condition still holds after max_iterations', async () => {
    const h = story(2);
    await h.start();
    await h.complete('start');
    for (let i = 0; i < 2; i++) {
      await h.complete('check', { status: 'waiting' });
      await h.complete('note');
    }
    expect(h.node('poll')).toMatchObject({ status: TaskStatus.Failed, error: 'DO_WHILE poll reached max_iterations 2 with its condition still true' });
    expect(h.run.status).toBe(RunStatus.Failed);
    expect(h.run.nodes.has('after')).toBe(false);
  });

  it('defaults its output to the body sinks by node id', async () => {
    const h = story(3);
    await h.start();
    await h.complete('start');
    await h.complete('check', { status: 'done' });
    const tr = await h.complete('note', { ok: true });
    expect(actionsOf(tr, 'CompleteTask').find((a) => a.nodeId === 'poll')?.output).toEqual({ note: { ok: true } });
  });

  it('fails with the iteration and the body node when a body node fails, and the run names the loop', async () => {
    const h = story(3);
    await h.start();
    await h.complete('start');
    await h.complete('check', { status: 'waiting' });
    await h.complete('note');
    const tr = await h.fail('check', 'HTTP 500');
    expect(h.node('poll')).toMatchObject({ status: TaskStatus.Failed, error: 'iteration 2: node check failed: HTTP 500' });
    expect(finished(tr)).toMatchObject({ status: RunStatus.Failed, reason: 'node poll failed: iteration 2: node check failed: HTTP 500' });
  });

  it('refuses a retry from a body node, and a retry from the loop starts again at iteration 0', async () => {
    const h = story(3);
    await h.start();
    await h.complete('start');
    await h.fail('check', 'boom');
    await expect(h.retry('check')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/in the body of DO_WHILE poll: retry from poll/),
    });
    const tr = await h.retry('poll');
    expect(actionsOf(tr, 'ReopenRun')[0]!.resetNodes).toEqual(expect.arrayContaining(['poll', 'after', 'check', 'note']));
    expect(h.node('poll').loop).toEqual({ iteration: 0, previous: null });
    expect(dispatched(tr)).toEqual(['check']);
  });

  it('is refused at publish when malformed, nested, or read from outside', () => {
    const bad = (nodes: unknown[], edges: unknown[] = []) => validateDefinition({ nodes, edges }).map((p) => `${p.path}: ${p.message}`);
    expect(bad([{ node_id: 'l', type: 'DO_WHILE', spec: { body: { nodes: [] }, max_iterations: 0 } }])).toEqual([
      'nodes[0].spec.body: body must be an object {nodes, edges} with at least one node',
      expect.stringMatching(/^nodes\[0\]\.spec\.condition: condition is required/),
      'nodes[0].spec.max_iterations: max_iterations must be an integer from 1 to 10,000, got 0',
    ]);
    const inner = { node_id: 'in', type: 'DO_WHILE', spec: { body: { nodes: [{ node_id: 'x', type: 'FORK' }] }, condition: '{{false}}', max_iterations: 1 } };
    expect(bad([{ node_id: 'l', type: 'DO_WHILE', spec: { body: { nodes: [inner] }, condition: '{{false}}', max_iterations: 3 } }])).toContain(
      'nodes[0].spec.body.nodes[0].type: a DO_WHILE body cannot hold another DO_WHILE',
    );
    const body = { nodes: [{ node_id: 'c', type: 'HTTP', spec: { url: 'http://127.0.0.1/{{tasks.l.iteration}}' } }] };
    const ok = { node_id: 'l', type: 'DO_WHILE', spec: { body, condition: '{{tasks.c.output.more}}', max_iterations: 3 } };
    expect(bad([ok])).toEqual([]);
    expect(bad([ok, { node_id: 'after', type: 'HTTP', spec: { url: 'http://127.0.0.1/{{tasks.c.output}}' } }], [{ from: 'l', to: 'after' }])).toEqual([
      'nodes[1].spec.url: template {{ tasks.c.output }} reads node "c" of the body of DO_WHILE l: outside its loop, read tasks.l.output',
    ]);
    expect(bad([ok, { node_id: 'after', type: 'FORK' }], [{ from: 'c', to: 'after' }])).toContain(
      'edges[0].from: edge from node "c", which is in the body of DO_WHILE l (edges outside the body reach only l)',
    );
    expect(bad([ok, { node_id: 'c', type: 'FORK' }], [{ from: 'l', to: 'c' }])).toContain(
      'nodes[0].spec.body.nodes[0].node_id: node id "c" is already used by a node of the graph; ids are unique across bodies too',
    );
  });
});

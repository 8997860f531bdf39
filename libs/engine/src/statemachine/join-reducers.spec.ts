import { describe, expect, it } from '@jest/globals';
import { REDUCER_NAMES } from '../model/reducers.js';
import { validateDefinition } from '../model/validate.js';
import type { WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { actionsOf, cond, created, dispatched, edge, finished, fork, Harness, join, sw, task } from './testing/harness.js';

/** A JOIN node with `spec.reducers`. */
function reducing(id: string, reducers: JsonValue): WorkflowNode {
  return { node_id: id, type: NodeType.Join, spec: { reducers } };
}

/** The output the JOIN was created with. */
function joinOutput(h: Harness, id = 'j'): JsonValue | undefined {
  return h.tasks.get(id)?.output;
}

/** f → a, b, c → j (edges into j in the order a, b, c) → after. */
function fanOut(j: WorkflowNode, order: string[] = ['a', 'b', 'c']): Harness {
  return new Harness(
    [fork('f'), task('a'), task('b'), task('c'), j, task('after', { url: 'https://x/{{tasks.j.output.count}}' })],
    [edge('f', 'a'), edge('f', 'b'), edge('f', 'c'), ...order.map((id) => edge(id, 'j')), edge('j', 'after')],
  );
}

describe('JOIN reducers', () => {
  it('merges the predecessors field by field and the successor reads the merge', async () => {
    const h = fanOut(reducing('j', { count: 'add', messages: 'append' }));
    expect(dispatched(await h.start())).toEqual(['a', 'b', 'c']);
    await h.complete('a', { count: 1, messages: ['a failed'], who: 'a' });
    await h.complete('b', { count: 0, messages: [], who: 'b' });
    const tr = await h.complete('c', { count: 2, messages: ['c1', 'c2'], who: 'c' });
    expect(created(tr, TaskStatus.Completed)).toEqual(['j']);
    expect(joinOutput(h)).toEqual({ count: 3, messages: ['a failed', 'c1', 'c2'], who: 'c' });
    expect(actionsOf(tr, 'DispatchTask')[0]?.input).toEqual({ url: 'https://x/3' });
  });

  it('follows incoming-edge order, not completion order', async () => {
    for (const completion of [
      ['a', 'b', 'c'],
      ['c', 'b', 'a'],
      ['b', 'c', 'a'],
    ]) {
      const h = fanOut(reducing('j', { m: 'append' }), ['c', 'a', 'b']);
      await h.start();
      for (const id of completion) await h.complete(id, { m: [id], last: id });
      expect(joinOutput(h)).toEqual({ m: ['c', 'a', 'b'], last: 'b' });
    }
  });

  it('a skipped predecessor contributes nothing', async () => {
    // s ─(false)→ x ─┐
    // s ─────────→ y ─┴→ j
    const h = new Harness(
      [task('p'), sw('s'), task('x'), task('y'), reducing('j', { n: 'add', m: 'append' })],
      [edge('p', 's'), cond('s', 'x', '{{false}}'), edge('s', 'y'), edge('x', 'j'), edge('y', 'j')],
    );
    await h.start();
    const tr = await h.complete('p', { n: 100, m: ['p'] });
    expect(created(tr, TaskStatus.Skipped)).toEqual(['x']);
    await h.complete('y', { n: 2, m: ['y'] });
    expect(joinOutput(h)).toEqual({ n: 2, m: ['y'] });
  });

  it('a switch that did not select the JOIN contributes nothing, though it completed', async () => {
    const h = new Harness(
      [fork('f'), task('a'), sw('s'), reducing('j', { n: 'add' })],
      [edge('f', 'a'), edge('f', 's'), cond('s', 'j', '{{false}}'), edge('a', 'j')],
    );
    await h.start();
    await h.complete('a', { n: 1 });
    expect(joinOutput(h)).toEqual({ n: 1 });
  });

  it('null is the identity of a listed reducer; with replace it wins', async () => {
    const h = fanOut(reducing('j', { count: 'add' }));
    await h.start();
    await h.complete('a', { count: 2, note: 'a' });
    await h.complete('b', { count: null, note: null });
    await h.complete('c', { count: null });
    expect(joinOutput(h)).toEqual({ count: 2, note: null });
  });

  it('a type mismatch fails the JOIN naming the field, the reducer and the node, and the run fails', async () => {
    const h = fanOut(reducing('j', { count: 'add' }));
    await h.start();
    await h.complete('a', { count: 1 });
    await h.complete('b', { count: 'two' });
    const tr = await h.complete('c', { count: 3 });
    expect(created(tr, TaskStatus.Failed)).toEqual(['j']);
    expect(h.node('j').error).toBe('join j: field "count": reducer add expects a number, but node "b" gave a string');
    expect(dispatched(tr)).toEqual([]);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('a merge larger than the value limit fails the JOIN', async () => {
    const h = fanOut(reducing('j', { s: 'concat' }));
    await h.start();
    const big = 'x'.repeat(400 * 1024);
    await h.complete('a', { s: big });
    await h.complete('b', { s: big });
    const tr = await h.complete('c', { s: big });
    expect(created(tr, TaskStatus.Failed)).toEqual(['j']);
    expect(h.node('j').error).toMatch(/^join j: JOIN output too large: /);
  });

  it('loads the predecessors outputs through the Store in one call', async () => {
    const h = fanOut(reducing('j', { n: 'add' }));
    await h.start();
    await h.complete('a', { n: 1 });
    await h.complete('b', { n: 1 });
    h.loads = [];
    await h.complete('c', { n: 1 });
    expect(h.loads).toEqual([['a', 'b']]); // c is cached by its own completion
    expect(joinOutput(h)).toEqual({ n: 3 });
  });

  it('a predecessor reached twice through duplicate edges contributes once', async () => {
    const h = new Harness([fork('f'), task('a'), reducing('j', { n: 'add' })], [edge('f', 'a'), edge('a', 'j'), edge('a', 'j')]);
    await h.start();
    await h.complete('a', { n: 5 });
    expect(joinOutput(h)).toEqual({ n: 5 });
  });

  it('a merge failure is a node failure an on_error edge can handle', async () => {
    const h = new Harness(
      [fork('f'), task('a'), task('b'), reducing('j', { n: 'add' }), task('ok'), task('fix', { url: 'https://fix/{{tasks.j.error}}' })],
      [edge('f', 'a'), edge('f', 'b'), edge('a', 'j'), edge('b', 'j'), edge('j', 'ok'), { from: 'j', to: 'fix', on_error: true }],
    );
    await h.start();
    await h.complete('a', { n: 1 });
    const tr = await h.complete('b', { n: [2] });
    expect(created(tr, TaskStatus.Failed)).toEqual(['j']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['ok']);
    expect(dispatched(tr)).toEqual(['fix']);
    expect(finished(await h.complete('fix'))?.status).toBe(RunStatus.Succeeded);
  });

  it('without reducers a JOIN still completes with {} as before', async () => {
    const h = fanOut(join('j'));
    await h.start();
    await h.complete('a', { count: 1 });
    await h.complete('b', { count: 2 });
    await h.complete('c', { count: 3 });
    expect(joinOutput(h)).toEqual({});
  });

  it('retrying from the JOIN merges again', async () => {
    const h = fanOut(reducing('j', { count: 'add' }));
    await h.start();
    for (const id of ['a', 'b', 'c']) await h.complete(id, { count: 1 });
    await h.complete('after');
    const tr = await h.retry('j');
    expect(created(tr, TaskStatus.Completed)).toEqual(['j']);
    expect(dispatched(tr)).toEqual(['after']);
    expect(joinOutput(h)).toEqual({ count: 3 });
  });
});

describe('publishing validates spec.reducers', () => {
  const def = (reducers: JsonValue): unknown => ({
    nodes: [
      { node_id: 'f', type: 'FORK' },
      { node_id: 'a', type: 'HTTP', spec: { url: 'https://a' } },
      { node_id: 'j', type: 'JOIN', spec: { reducers } },
    ],
    edges: [
      { from: 'f', to: 'a' },
      { from: 'a', to: 'j' },
    ],
  });

  it('accepts every known reducer', () => {
    expect(validateDefinition(def(Object.fromEntries(REDUCER_NAMES.map((r) => [`f_${r}`, r]))))).toEqual([]);
  });

  it('refuses an unknown reducer, naming the node and the field', () => {
    expect(validateDefinition(def({ count: 'sum', ok: 'and', n: 3 }))).toEqual([
      {
        nodeId: 'j',
        path: 'nodes[2].spec.reducers.count',
        message: 'unknown reducer "sum" for field "count" of JOIN j; expected one of add, append, union, min, max, merge, and, or, concat, replace',
      },
      {
        nodeId: 'j',
        path: 'nodes[2].spec.reducers.n',
        message: 'unknown reducer 3 for field "n" of JOIN j; expected one of add, append, union, min, max, merge, and, or, concat, replace',
      },
    ]);
  });

  it('refuses reducers that are not an object', () => {
    for (const bad of [['add'], 'add', null]) {
      expect(validateDefinition(def(bad))).toEqual([
        {
          nodeId: 'j',
          path: 'nodes[2].spec.reducers',
          message: 'JOIN spec.reducers must be an object of field: reducer (add, append, union, min, max, merge, and, or, concat, replace)',
        },
      ]);
    }
  });
});

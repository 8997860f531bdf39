/**
 * The machinery that keeps one event's cost independent of the run's size: the undo
 * journal, the maintained counts and the incremental JOIN readiness. Each is checked against the
 * plain computation it replaces.
 */
import { describe, expect, it } from '@jest/globals';
import type { WorkflowEdge, WorkflowNode } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { applyAction, liveCounts, runCounts } from './apply-action.js';
import { StoreError } from './errors.js';
import { Journal } from './journal.js';
import { newRunSnapshot, type RunSnapshot } from './state.js';
import { cond, created, edge, finished, fork, forEach, Harness, join, sw, task, type HarnessOptions } from './testing/harness.js';

function onError(from: string, to: string, condition?: string): WorkflowEdge {
  return { from, to, on_error: true, ...(condition !== undefined ? { condition } : {}) };
}

/** Everything a rollback must put back, by identity and by value, in order. */
function capture(run: RunSnapshot) {
  return {
    nodesMap: run.nodes,
    tasksMap: run.context.tasks,
    entries: [...run.nodes],
    values: structuredClone([...run.nodes]),
    tasks: [...run.context.tasks],
    scalars: { status: run.status, version: run.version, input: run.context.input, config: run.context.config },
  };
}

function expectRestored(run: RunSnapshot, c: ReturnType<typeof capture>): void {
  expect(run.nodes).toBe(c.nodesMap);
  expect(run.context.tasks).toBe(c.tasksMap);
  expect([...run.nodes.keys()]).toEqual(c.entries.map(([id]) => id));
  [...run.nodes.values()].forEach((n, i) => expect(n).toBe(c.entries[i][1]));
  expect([...run.nodes]).toEqual(c.values);
  expect([...run.context.tasks]).toEqual(c.tasks);
  [...run.context.tasks.values()].forEach((r, i) => expect(r).toBe(c.tasks[i][1]));
  expect({ status: run.status, version: run.version, input: run.context.input, config: run.context.config }).toEqual(c.scalars);
}

/** A Harness that checks, after every event (applied or rejected), the maintained counts against a full count. */
class CountingHarness extends Harness {
  constructor(nodes: WorkflowNode[], edges: WorkflowEdge[], opts?: HarnessOptions) {
    super(nodes, edges, opts);
  }
  override async try(ev: Parameters<Harness['try']>[0]) {
    try {
      return await super.try(ev);
    } finally {
      expect(liveCounts(this.run)).toEqual(runCounts(this.run));
    }
  }
}

describe('undo journal', () => {
  it('restores exactly what a sequence of actions changed: objects, keys, key order, outputs, scalars', () => {
    const run = newRunSnapshot('r', 'w', 1, { a: 1 }, { c: 1 });
    const node = (id: string): WorkflowNode => ({ node_id: id, type: NodeType.Http });
    for (const id of ['a', 'b', 'c']) applyAction(run, { type: 'CreateTask', taskId: `t-${id}`, node: node(id), status: TaskStatus.Pending, input: {} });
    applyAction(run, { type: 'CompleteTask', taskId: 't-a', nodeId: 'a', attempt: 0, output: 1 });
    applyAction(run, {
      type: 'CreateIterations',
      taskId: 't-f',
      node: node('f'),
      iterations: [
        { taskId: 'i0', input: 0 },
        { taskId: 'i1', input: 1 },
      ],
      dispatch: 1,
      notBefore: new Date(0),
    });
    run.context.tasks.set('a', { status: TaskStatus.Completed, output: 1 });
    run.context.tasks.set('x', { status: TaskStatus.Completed, output: 2 });
    const before = capture(run);
    const iterations = run.nodes.get('f')!.iterations!.map((it) => ({ ...it }));

    const j = new Journal(run);
    const emit = (a: Parameters<typeof applyAction>[1]) => applyAction(run, a, j);
    emit({ type: 'FailTask', taskId: 't-b', nodeId: 'b', attempt: 0, reason: 'boom' });
    emit({ type: 'RecordBranches', taskId: 't-a', nodeId: 'a', branches: ['z'] });
    emit({ type: 'ReleaseIteration', taskId: 'i1', nodeId: 'f', iteration: 1, notBefore: new Date(0) });
    emit({ type: 'CreateTask', taskId: 't-d', node: node('d'), status: TaskStatus.Waiting, awaitedSignal: 'go' });
    emit({ type: 'ReopenRun', version: 2, input: { a: 2 }, config: {}, resetNodes: ['a', 'd', 'x'] });
    emit({ type: 'CreateTask', taskId: 't-a2', node: node('a'), status: TaskStatus.Pending, input: {} }); // re-added: now last
    j.settingOutput('y');
    run.context.tasks.set('y', { status: TaskStatus.Completed, output: 3 });
    emit({ type: 'CancelTasks', reason: 'x' });
    emit({ type: 'FinishRun', status: RunStatus.Cancelled });
    expect([...run.nodes.keys()]).toEqual(['b', 'c', 'f', 'a']);

    j.restore();
    expectRestored(run, before);
    expect(run.nodes.get('f')!.iterations).toEqual(iterations);
    expect(run.nodes.get('a')!.branches).toBeUndefined();
  });

  it('without deletions, removes added keys and keeps the others in place', () => {
    const run = newRunSnapshot('r', 'w', 1, {}, {});
    const node = (id: string): WorkflowNode => ({ node_id: id, type: NodeType.Http });
    applyAction(run, { type: 'CreateTask', taskId: 't-a', node: node('a'), status: TaskStatus.Pending });
    applyAction(run, { type: 'CreateTask', taskId: 't-b', node: node('b'), status: TaskStatus.Pending });
    const before = capture(run);
    const j = new Journal(run);
    applyAction(run, { type: 'CreateTask', taskId: 't-a2', node: node('a'), status: TaskStatus.Skipped }, j); // replaced in place
    applyAction(run, { type: 'CreateTask', taskId: 't-c', node: node('c'), status: TaskStatus.Pending }, j);
    applyAction(run, { type: 'CompleteTask', taskId: 't-b', nodeId: 'b', attempt: 0, output: null }, j);
    j.restore();
    expectRestored(run, before);
  });

  it('a retry rejected after it reset nodes leaves the snapshot exactly as it was, counts included', async () => {
    // a → b (reads a's output) → c
    const h = new CountingHarness([task('a'), task('b', { v: '{{tasks.a.output.v}}' }), task('c')], [edge('a', 'b'), edge('b', 'c')]);
    await h.start();
    await h.complete('a', { v: 1 });
    await h.complete('b');
    await h.fail('c');
    expect(h.run.status).toBe(RunStatus.Failed);
    h.run.context.tasks = new Map([['c', { status: TaskStatus.Failed, output: null }]]);
    const before = capture(h.run);

    h.storeDown = true; // begin(b) must load a's output: rejected after ReopenRun deleted b and c
    const err = await h.retry('b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    // The harness gave the event an empty output cache; put the one captured back to compare.
    expect([...h.run.nodes.keys()]).toEqual(['a', 'b', 'c']);
    const { tasksMap, tasks, ...rest } = before;
    expectRestored(h.run, { ...rest, tasksMap: h.run.context.tasks, tasks: [] });
    void tasksMap;
    void tasks;

    h.storeDown = false;
    await h.retry('b');
    expect(h.node('b').status).toBe(TaskStatus.Pending);
    await h.complete('b');
    await h.complete('c');
    expect(h.run.status).toBe(RunStatus.Succeeded);
  });
});

describe('maintained counts', () => {
  it('match a full count through retries, failures, cancel, reopen and for_each', async () => {
    const h = new CountingHarness(
      [
        task('a', undefined, { retry: { max_attempts: 3, backoff_seconds: 0 } } as Partial<WorkflowNode>),
        forEach('f', '{{[1, 2, 3]}}', {}, { max_concurrency: 1 }),
        task('b'),
        task('c'),
      ],
      [edge('a', 'f'), edge('f', 'b'), edge('a', 'c')],
    );
    await h.start();
    await h.fail('a'); // retried
    await h.complete('a');
    await h.completeIteration('f', 0);
    await h.fail('c');
    await h.cancel();
    expect(h.run.status).toBe(RunStatus.Cancelled);
    expect(runCounts(h.run).cancelled).toBeGreaterThan(0);
    await h.retry('c');
    await h.retry('a').catch(() => undefined); // RUN_ACTIVE: c is in flight
    await h.complete('c');
    await h.retry('f');
    for (let i = 0; i < 3; i++) await h.completeIteration('f', i);
    await h.complete('b');
    expect(h.run.status).toBe(RunStatus.Succeeded);
    expect(runCounts(h.run)).toEqual({ active: 0, failed: 0, cancelled: 0 });
  });

  it('are rebuilt after a rejected event', async () => {
    const h = new CountingHarness([task('a'), task('b'), task('c', { v: '{{tasks.a.output}}' })], [edge('a', 'b'), edge('b', 'c')]);
    await h.start();
    await h.complete('a');
    h.storeDown = true; // c needs a's output
    await expect(h.complete('b')).rejects.toBeInstanceOf(StoreError);
    h.storeDown = false;
    await h.complete('b');
    await h.complete('c');
    expect(h.run.status).toBe(RunStatus.Succeeded);
  });
});

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('incremental JOIN readiness', () => {
  // fork → p1..p4 (plain) ─────────────────────→ j
  //      → c1 ─(output.go)→ j                      (conditional)
  //      → e1 ─on_error→ j, e1 → x                 (error edge)
  //      → s (SWITCH) ─(tasks.fork.status != "")→ j, ─(false)→ y → j
  const nodes = (): WorkflowNode[] => [
    fork('fork'),
    ...['p1', 'p2', 'p3', 'p4', 'c1', 'e1', 'x', 'y'].map((id) => task(id)),
    sw('s'),
    join('j'),
    task('after'),
  ];
  const edges = (): WorkflowEdge[] => [
    ...['p1', 'p2', 'p3', 'p4', 'c1', 'e1', 's'].map((id) => edge('fork', id)),
    edge('p1', 'j'),
    edge('p2', 'j'),
    cond('c1', 'j', '{{tasks.c1.output.go}}'),
    onError('e1', 'j'),
    edge('e1', 'x'),
    cond('s', 'j', '{{tasks.fork.status != ""}}'),
    cond('s', 'y', '{{false}}'),
    edge('y', 'j'),
    edge('p3', 'j'),
    edge('p4', 'j'),
    edge('x', 'j'),
    edge('j', 'after'),
  ];

  /** Drives one harness through `steps`; with `fresh`, every event sees a snapshot without the index (as if reloaded). */
  async function drive(steps: Array<[string, 'complete' | 'fail', JsonValue?]>, fresh: boolean) {
    const h = new Harness(nodes(), edges());
    const log: unknown[] = [];
    const step = async (f: () => Promise<unknown>) => {
      if (fresh) h.run.nodes = new Map(h.run.nodes);
      log.push(await f());
    };
    await step(() => h.start());
    for (const [id, what, out] of steps) {
      if (!h.run.nodes.has(id) || h.node(id).status !== TaskStatus.Pending) continue;
      await step(() => (what === 'complete' ? h.complete(id, out ?? {}) : h.fail(id)));
    }
    return { h, log };
  }

  it('decides exactly as a full walk, whatever order the edges resolve in', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = prng(seed);
      const steps: Array<[string, 'complete' | 'fail', JsonValue?]> = ['p1', 'p2', 'p3', 'p4', 'c1', 'e1', 'x']
        .map((id) => [id, rnd()] as const)
        .sort((a, b) => a[1] - b[1])
        .map(([id]) => {
          if (id === 'c1') return [id, 'complete', { go: rnd() < 0.5 }];
          if (id === 'e1' || id === 'x') return [id, rnd() < 0.5 ? 'fail' : 'complete'];
          return [id, 'complete'];
        });
      steps.push(['x', 'complete'], ['j', 'complete'], ['after', 'complete']);
      const memo = await drive(steps, false);
      const full = await drive(steps, true);
      expect(memo.log).toEqual(full.log);
      expect(memo.h.run.status).toBe(full.h.run.status);
      expect([...memo.h.run.nodes]).toEqual([...full.h.run.nodes]);
    }
  });

  it('a JOIN of many branches waits for the last one, in any order, then runs once', async () => {
    const n = 30;
    const ids = Array.from({ length: n }, (_, i) => `b${i}`);
    for (let seed = 1; seed <= 5; seed++) {
      const h = new Harness(
        [fork('f'), ...ids.map((id) => task(id)), join('j'), task('end')],
        [...ids.flatMap((id) => [edge('f', id), edge(id, 'j')]), edge('j', 'end')],
      );
      await h.start();
      const rnd = prng(seed);
      const order = [...ids].sort(() => rnd() - 0.5);
      for (const [k, id] of order.entries()) {
        const tr = await h.complete(id);
        expect(h.run.nodes.has('j')).toBe(k === n - 1);
        if (k === n - 1) expect(created(tr, TaskStatus.Completed)).toEqual(['j']);
      }
      await h.complete('end');
      expect(h.run.status).toBe(RunStatus.Succeeded);
    }
  });

  it('skips a JOIN whose edges all resolve inactive, and forgets what it knew on a retry', async () => {
    // a ─(false)→ j, b ─(false)→ j: both inactive → j skipped; a retry with new input runs it.
    const h = new Harness(
      [fork('f'), task('a'), task('b'), join('j')],
      [edge('f', 'a'), edge('f', 'b'), cond('a', 'j', '{{input.go}}'), cond('b', 'j', '{{input.go}}')],
      { input: { go: false } },
    );
    await h.start();
    await h.complete('b');
    const tr = await h.complete('a');
    expect(created(tr, TaskStatus.Skipped)).toEqual(['j']);
    expect(finished(tr)?.status).toBe(RunStatus.Succeeded);
    await h.retry('a', { input: { go: true } });
    expect(h.run.nodes.has('j')).toBe(false);
    const again = await h.complete('a');
    expect(created(again, TaskStatus.Completed)).toEqual(['j']);
    expect(h.node('j').status).toBe(TaskStatus.Completed);
  });
});

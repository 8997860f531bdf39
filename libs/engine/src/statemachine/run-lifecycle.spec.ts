import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import { MachineError } from './errors.js';
import { applyAction } from './machine.js';
import { newRunSnapshot } from './state.js';
import { actionsOf, cond, created, dispatched, edge, finished, fork, Harness, sw, task, types, waitFor } from './testing/harness.js';

describe('retry from a node', () => {
  const chain = (): Harness =>
    new Harness([task('a'), task('b', { v: '{{input.v}}', a: '{{tasks.a.output.n}}' }), task('c')], [edge('a', 'b'), edge('b', 'c')], {
      input: { v: 1 },
    });

  it('resets that node and its descendants only, with new input, and runs again', async () => {
    const h = chain();
    await h.start();
    await h.complete('a', { n: 10 });
    await h.complete('b');
    const failed = await h.fail('c');
    expect(finished(failed)?.status).toBe(RunStatus.Failed);
    const aTask = h.node('a').taskId;

    const tr = await h.retry('b', { input: { v: 2 } });
    expect(actionsOf(tr, 'ReopenRun')).toEqual([{ type: 'ReopenRun', version: 1, input: { v: 2 }, config: {}, resetNodes: ['c', 'b'] }]);
    expect(h.run.status).toBe(RunStatus.Running);
    expect(dispatched(tr)).toEqual(['b']);
    // New input is used; a's kept output is loaded from the Store.
    expect(actionsOf(tr, 'DispatchTask')[0].input).toEqual({ v: 2, a: 10 });
    expect(h.node('a')).toMatchObject({ taskId: aTask, status: TaskStatus.Completed });
    expect(h.run.nodes.has('c')).toBe(false);

    await h.complete('b');
    const done = await h.complete('c', { ok: true });
    expect(finished(done)).toMatchObject({ status: RunStatus.Succeeded, output: { c: { ok: true } } });
  });

  it('onto a newer version, resets reached nodes that version no longer has, so the run can succeed', async () => {
    const h = new Harness([task('a'), task('b')], [edge('a', 'b')]);
    await h.start();
    await h.complete('a');
    expect(finished(await h.fail('b'))?.status).toBe(RunStatus.Failed);

    h.publish([task('a'), task('b2')], [edge('a', 'b2')]); // v2 renames b
    const tr = await h.retry('a', { version: 2 });
    expect(actionsOf(tr, 'ReopenRun')[0]).toMatchObject({ version: 2, resetNodes: ['b2', 'a', 'b'] });
    expect(h.run.nodes.has('b')).toBe(false);
    await h.complete('a');
    const done = await h.complete('b2', { ok: true });
    expect(finished(done)).toMatchObject({ status: RunStatus.Succeeded, output: { b2: { ok: true } } });
  });

  it('keeps input and config when the retry gives none', async () => {
    const h = chain();
    await h.start();
    await h.complete('a', { n: 1 });
    await h.fail('b');
    const tr = await h.retry('b');
    expect(actionsOf(tr, 'ReopenRun')[0]).toMatchObject({ input: { v: 1 }, config: {}, resetNodes: ['c', 'b'] });
    expect(actionsOf(tr, 'DispatchTask')[0].input).toEqual({ v: 1, a: 1 });
  });

  it('is refused while tasks are active, changing nothing', async () => {
    const h = new Harness([fork('f'), task('a'), task('b')], [edge('f', 'a'), edge('f', 'b')]);
    await h.start();
    await h.fail('a');
    const err = await h.retry('a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MachineError);
    expect(err).toMatchObject({ code: 'RUN_ACTIVE', message: expect.stringMatching(/1 task\(s\) in flight/) });
    expect(h.node('a').status).toBe(TaskStatus.Failed);
  });

  it('is refused while a node is waiting', async () => {
    const h = new Harness([waitFor('e', { event: 'go' })], []);
    await h.start();
    await expect(h.retry('e')).rejects.toMatchObject({ code: 'RUN_ACTIVE' });
  });

  it('is refused for an unknown node', async () => {
    const h = chain();
    await h.start();
    await h.fail('a');
    await expect(h.retry('zzz')).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: 'node zzz not in workflow definition' });
    expect(h.run.status).toBe(RunStatus.Failed);
  });

  it('restarts a cancelled run; cancelled nodes outside the reset keep the run from succeeding', async () => {
    const h = new Harness([fork('f'), task('a'), task('b')], [edge('f', 'a'), edge('f', 'b')]);
    await h.start();
    await h.cancel();
    await h.retry('a');
    const tr = await h.complete('a');
    expect(finished(tr)).toMatchObject({ status: RunStatus.Failed, reason: 'node b was cancelled' });
  });
});

describe('cancel', () => {
  it('cancels every active task and finishes the run CANCELLED; later reports are ignored', async () => {
    const h = new Harness(
      [fork('f'), task('a'), task('b'), waitFor('e', { event: 'go' }), task('done')],
      [edge('f', 'a'), edge('f', 'b'), edge('f', 'e'), edge('b', 'done')],
    );
    await h.start();
    await h.complete('a');

    const tr = await h.cancel('user asked');
    expect(tr.actions).toEqual([
      { type: 'CancelTasks', reason: 'user asked' },
      { type: 'FinishRun', status: RunStatus.Cancelled, reason: 'user asked' },
    ]);
    expect(h.node('a').status).toBe(TaskStatus.Completed);
    expect(h.node('b').status).toBe(TaskStatus.Cancelled);
    expect(h.node('e').status).toBe(TaskStatus.Cancelled);

    const late = await h.complete('b');
    expect(late.ignored).toBeTruthy();
    expect(late.actions).toEqual([]);
    await expect(h.cancel()).rejects.toMatchObject({ code: 'RUN_FINISHED' });
  });

  it('uses "cancelled" as the default reason', async () => {
    const h = new Harness([task('a')], []);
    await h.start();
    expect(finished(await h.cancel())).toMatchObject({ status: RunStatus.Cancelled, reason: 'cancelled' });
  });
});

describe('run output', () => {
  it('defaults to the completed sink nodes keyed by node id', async () => {
    // p → s ─→ hi (sink)   lo (skipped sink)   other (sink)
    const h = new Harness(
      [task('p'), sw('s'), task('hi'), task('lo'), task('other')],
      [edge('p', 's'), edge('p', 'other'), cond('s', 'hi', '{{tasks.p.output.n > 1}}'), cond('s', 'lo', '{{tasks.p.output.n <= 1}}')],
    );
    await h.start();
    await h.complete('p', { n: 2 });
    await h.complete('other', { o: 1 });
    h.loads = [];
    const tr = await h.complete('hi', { h: 1 });
    expect(finished(tr)).toEqual({ type: 'FinishRun', status: RunStatus.Succeeded, output: { hi: { h: 1 }, other: { o: 1 } } });
    expect(h.loads).toEqual([['other']]); // hi is cached; lo was skipped
  });

  it('resolves the definition output template, loading only what it reads', async () => {
    const h = new Harness([fork('f'), task('a'), task('b'), task('c')], [edge('f', 'a'), edge('f', 'b'), edge('f', 'c')], {
      input: { name: 'ann' },
      output: { total: '{{tasks.a.output.n + tasks.b.output.n}}', who: 'by {{input.name}}' },
    });
    await h.start();
    await h.complete('a', { n: 2 });
    await h.complete('b', { n: 3.5 });
    h.loads = [];
    const tr = await h.complete('c', { big: 'x' });
    expect(finished(tr)).toMatchObject({ status: RunStatus.Succeeded, output: { total: 5.5, who: 'by ann' } });
    expect(h.loads).toEqual([['a', 'b']]);
  });

  it('fails the run when the output template cannot be resolved', async () => {
    const h = new Harness([task('a')], [], { output: '{{tasks.a.output.missing}}' });
    await h.start();
    const tr = await h.complete('a', {});
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
    expect(finished(tr)?.reason).toMatch(/^cannot resolve the run output: cannot evaluate \{\{ tasks\.a\.output\.missing \}\}: No such key: missing/);
  });

  it("fails the run when the sinks' outputs together are more than 16 values' worth, and says how to choose", async () => {
    const h = new Harness([fork('f'), task('a'), task('b')], [edge('f', 'a'), edge('f', 'b')]);
    h.maxValueBytes = 64;
    await h.start();
    await h.complete('a', { blob: 'x'.repeat(600) });
    const tr = await h.complete('b', { blob: 'y'.repeat(600) });
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
    expect(finished(tr)?.reason).toMatch(
      /^run output too large: .* > 1 KiB \(the outputs of the sink nodes; an `output:` template can pick what the run returns\)$/,
    );
    const one = new Harness([task('a')], []);
    one.maxValueBytes = 64;
    await one.start();
    expect(finished(await one.complete('a', { blob: 'x'.repeat(50) }))?.status).toBe(RunStatus.Succeeded); // 61 B as a value, 67 B in the run output
  });
});

describe('applyAction', () => {
  it('evolves the snapshot the way persisting the actions does', () => {
    const run = newRunSnapshot('r', 'wf', 1, { x: 1 }, {});
    const node = task('a');
    applyAction(run, { type: 'CreateTask', taskId: 't1', node, status: TaskStatus.Pending, input: {} });
    expect(run.nodes.get('a')).toEqual({ taskId: 't1', status: TaskStatus.Pending, attempt: 0, branches: undefined, awaitedSignal: undefined });
    applyAction(run, { type: 'RetryTask', taskId: 't1', nodeId: 'a', attempt: 0, reason: 'x', notBefore: new Date(0) });
    expect(run.nodes.get('a')).toMatchObject({ status: TaskStatus.Pending, attempt: 1 });
    applyAction(run, { type: 'FailTask', taskId: 't1', nodeId: 'a', attempt: 1, reason: 'x' });
    applyAction(run, { type: 'FinishRun', status: RunStatus.Failed });
    run.context.tasks.set('a', { status: TaskStatus.Completed, output: 1 });
    applyAction(run, { type: 'ReopenRun', version: 2, input: { x: 2 }, config: { c: 1 }, resetNodes: ['a'] });
    expect(run).toMatchObject({ version: 2, status: RunStatus.Running, context: { input: { x: 2 }, config: { c: 1 } } });
    expect(run.nodes.size).toBe(0);
    expect(run.context.tasks.size).toBe(0);
  });

  it('records what every event did, in order, for a whole run', async () => {
    const h = new Harness([task('a'), task('b')], [edge('a', 'b')]);
    expect(types(await h.start())).toEqual(['CreateTask', 'DispatchTask']);
    expect(types(await h.complete('a'))).toEqual(['CompleteTask', 'CreateTask', 'DispatchTask']);
    const last = await h.complete('b');
    expect(types(last)).toEqual(['CompleteTask', 'FinishRun']);
    expect(created(last, TaskStatus.Pending)).toEqual([]);
  });
});

import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../../model/workflow-types.js';
import { actionsOf, created, dispatched, edge, finished, forEach, Harness, task, types } from '../testing/harness.js';

const EMPLOYERS = ['Acme', 'Globex', 'Initech'];

/** fetch (for_each over input.employers, as employer) → report, which reads fetch's output. */
function fanOut(extra: Parameters<typeof forEach>[3] = {}, employers: unknown = EMPLOYERS): Harness {
  return new Harness(
    [
      forEach(
        'fetch',
        '{{ input.employers }}',
        { url: 'https://verify/{{ employer }}', body: { i: '{{ employerIndex }}', n: '{{ employerCount }}' } },
        { as: 'employer', ...extra },
      ),
      task('report', { body: '{{ tasks.fetch.output }}' }),
    ],
    [edge('fetch', 'report')],
    { input: { employers: employers as never } },
  );
}

describe('for_each: one task per element', () => {
  it('dispatches one iteration per element, each seeing its element, index and count', async () => {
    const h = fanOut();
    const tr = await h.start();
    const [fan] = actionsOf(tr, 'CreateIterations');
    expect(fan?.iterations.map((it) => it.input)).toEqual([
      { url: 'https://verify/Acme', body: { i: 0, n: 3 } },
      { url: 'https://verify/Globex', body: { i: 1, n: 3 } },
      { url: 'https://verify/Initech', body: { i: 2, n: 3 } },
    ]);
    expect(fan?.dispatch).toBe(3);
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    expect(h.node('fetch').iterations?.map((it) => it.status)).toEqual([TaskStatus.Pending, TaskStatus.Pending, TaskStatus.Pending]);
  });

  it('completes with the iteration outputs in element order, not completion order, and routes on', async () => {
    const h = fanOut();
    await h.start();
    await h.completeIteration('fetch', 2, { who: 'Initech' });
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    await h.completeIteration('fetch', 0, { who: 'Acme' });
    const tr = await h.completeIteration('fetch', 1, { who: 'Globex' });
    expect(actionsOf(tr, 'CompleteTask').map((a) => a.taskId)).toEqual([h.iteration('fetch', 1).taskId, h.node('fetch').taskId]);
    const expected = [{ who: 'Acme' }, { who: 'Globex' }, { who: 'Initech' }];
    expect(actionsOf(tr, 'CompleteTask')[1]?.output).toEqual(expected);
    expect(actionsOf(tr, 'DispatchTask')[0]?.input).toEqual({ body: expected });
  });

  it('merges the iteration outputs with the node reducers, in element order', async () => {
    const h = fanOut({ reducers: { failures: 'add', names: 'append' } });
    await h.start();
    await h.completeIteration('fetch', 1, { failures: 2, names: ['Globex'], last: 'Globex' });
    await h.completeIteration('fetch', 2, { failures: 0, names: ['Initech'], last: 'Initech' });
    const tr = await h.completeIteration('fetch', 0, { failures: 1, names: ['Acme'], last: 'Acme' });
    expect(actionsOf(tr, 'CompleteTask')[1]?.output).toEqual({ failures: 3, names: ['Acme', 'Globex', 'Initech'], last: 'Initech' });
  });

  it('fails the node when a reducer meets the wrong type, naming the field and the iteration', async () => {
    const h = fanOut({ reducers: { failures: 'add' } });
    await h.start();
    await h.completeIteration('fetch', 0, { failures: 1 });
    await h.completeIteration('fetch', 1, { failures: 'two' });
    const tr = await h.completeIteration('fetch', 2, { failures: 0 });
    expect(h.node('fetch').status).toBe(TaskStatus.Failed);
    expect(h.node('fetch').error).toBe('for_each of node fetch: field "failures": reducer add expects a number, but node "fetch[1]" gave a string');
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('completes at once with [] on an empty array (with reducers, {}), and the successor runs', async () => {
    const h = fanOut({}, []);
    const tr = await h.start();
    expect(created(tr, TaskStatus.Completed)).toEqual(['fetch']);
    expect(h.tasks.get('fetch')?.output).toEqual([]);
    expect(actionsOf(tr, 'DispatchTask')[0]?.input).toEqual({ body: [] });
    const merged = fanOut({ reducers: { failures: 'add' } }, []);
    await merged.start();
    expect(merged.tasks.get('fetch')?.output).toEqual({});
  });

  it('fails the node at once, naming it, when for_each gives no array or too many elements', async () => {
    for (const [value, why] of [
      [{ a: 1 }, 'must give an array, got an object'],
      [7, 'must give an array, got a number'],
      [null, 'must give an array, got null'],
      [Array.from({ length: 10_001 }, (_, i) => i), 'gave 10001 elements; at most 10000 are allowed'],
    ] as const) {
      const h = fanOut({}, value);
      const tr = await h.start();
      expect(h.node('fetch').status).toBe(TaskStatus.Failed);
      expect(h.node('fetch').error).toBe(`for_each of node fetch: ${why}`);
      expect(finished(tr)?.status).toBe(RunStatus.Failed);
    }
  });

  it('fails the node, naming the iteration, when one iteration input cannot be resolved', async () => {
    const h = new Harness([forEach('fetch', '{{ input.people }}', { url: 'https://x/{{ item.name }}' })], [], {
      input: { people: [{ name: 'a' }, { nick: 'b' }] },
    });
    await h.start();
    expect(h.node('fetch').error).toMatch(/^for_each of node fetch: iteration 1: CEL resolution for node fetch: .*name/);
  });

  it('retries an iteration on its own; other iterations and the node wait for it', async () => {
    const h = fanOut({ retry: { max_attempts: 2 } });
    await h.start();
    await h.completeIteration('fetch', 0);
    const retry = await h.failIteration('fetch', 1, 'timeout');
    expect(types(retry)).toEqual(['RetryTask']);
    expect(h.iteration('fetch', 1).attempt).toBe(1);
    await h.completeIteration('fetch', 2);
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    const done = await h.completeIteration('fetch', 1, { late: true });
    expect(h.node('fetch').status).toBe(TaskStatus.Completed);
    expect(dispatched(done)).toEqual(['report']);
  });

  it("fences iteration reports: a stale attempt, another node's task and the aggregate task are ignored", async () => {
    const h = fanOut({ retry: { max_attempts: 2 } });
    await h.start();
    const first = h.iteration('fetch', 0);
    await h.failIteration('fetch', 0);
    const stale = await h.try({ type: 'NodeCompleted', taskId: first.taskId, nodeId: 'fetch', attempt: 0, output: {} });
    expect(stale.ignored).toMatch(/stale or duplicate/);
    const aggregate = await h.try({ type: 'NodeCompleted', taskId: h.node('fetch').taskId, nodeId: 'fetch', attempt: 0, output: {} });
    expect(aggregate.ignored).toMatch(/stale or duplicate/);
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
  });

  it('an iteration that fails for good fails the node once the others settle, and the run', async () => {
    const h = fanOut();
    await h.start();
    const failed = await h.failIteration('fetch', 1, 'HTTP 500');
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    expect(finished(failed)).toBeUndefined();
    await h.completeIteration('fetch', 0);
    const tr = await h.completeIteration('fetch', 2);
    expect(h.node('fetch').status).toBe(TaskStatus.Failed);
    expect(h.node('fetch').error).toBe('iteration 1 of 3 failed: HTTP 500');
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('max_concurrency holds iterations back and releases one per settled iteration, in element order', async () => {
    const h = fanOut({ max_concurrency: 1 }, ['a', 'b', 'c', 'd']);
    const start = await h.start();
    expect(actionsOf(start, 'CreateIterations')[0]?.dispatch).toBe(1);
    expect(h.node('fetch').iterations?.map((it) => it.status)).toEqual(['PENDING', 'WAITING', 'WAITING', 'WAITING']);
    const next = await h.completeIteration('fetch', 0, 'a');
    expect(actionsOf(next, 'ReleaseIteration').map((a) => a.iteration)).toEqual([1]);
    await h.completeIteration('fetch', 1, 'b');
    await h.completeIteration('fetch', 2, 'c');
    const last = await h.completeIteration('fetch', 3, 'd');
    expect(actionsOf(last, 'ReleaseIteration')).toEqual([]);
    expect(actionsOf(last, 'CompleteTask')[1]?.output).toEqual(['a', 'b', 'c', 'd']);
  });

  it('after a failure for good, iterations not started yet are skipped and the running ones finish', async () => {
    const h = fanOut({ max_concurrency: 2 }, ['a', 'b', 'c', 'd']);
    await h.start();
    const tr = await h.failIteration('fetch', 0, 'bad');
    expect(actionsOf(tr, 'SkipIterations')[0]?.taskIds).toEqual([h.iteration('fetch', 2).taskId, h.iteration('fetch', 3).taskId]);
    expect(actionsOf(tr, 'ReleaseIteration')).toEqual([]);
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    const end = await h.completeIteration('fetch', 1);
    expect(h.node('fetch').error).toBe('iteration 0 of 4 failed: bad');
    expect(finished(end)?.status).toBe(RunStatus.Failed);
  });

  it('cancelling the run cancels every active iteration, and later reports are ignored', async () => {
    const h = fanOut({ max_concurrency: 2 });
    await h.start();
    await h.cancel('stop');
    expect(h.node('fetch').iterations?.map((it) => it.status)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect((await h.completeIteration('fetch', 0)).ignored).toMatch(/stale or duplicate/);
  });

  it('an iteration failure handled by an error edge routes like any failure of the node', async () => {
    const h = new Harness(
      [forEach('fetch', '{{ input.employers }}', { url: 'https://x/{{ item }}' }), task('report'), task('undo', { why: '{{ tasks.fetch.error }}' })],
      [edge('fetch', 'report'), { from: 'fetch', to: 'undo', on_error: true }],
      { input: { employers: ['a', 'b'] } },
    );
    await h.start();
    await h.failIteration('fetch', 0, 'declined');
    const tr = await h.completeIteration('fetch', 1);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['report']);
    expect(actionsOf(tr, 'DispatchTask').map((a) => [a.node.node_id, a.input])).toEqual([['undo', { why: 'iteration 0 of 2 failed: declined' }]]);
  });

  it('a retry of the run from the node fans out again from scratch', async () => {
    const h = fanOut();
    await h.start();
    for (const i of [0, 1]) await h.completeIteration('fetch', i);
    await h.failIteration('fetch', 2);
    const tr = await h.retry('fetch');
    expect(actionsOf(tr, 'ReopenRun')[0]?.resetNodes).toEqual(expect.arrayContaining(['fetch', 'report']));
    expect(actionsOf(tr, 'CreateIterations')[0]?.iterations).toHaveLength(3);
    expect(h.node('fetch').iterations?.every((it) => it.status === TaskStatus.Pending)).toBe(true);
  });
});

describe('for_each: bounds on what it gathers', () => {
  it("fails the node when the iteration outputs together exceed 16 values' worth, naming the node", async () => {
    const h = fanOut();
    h.maxValueBytes = 64;
    await h.start();
    await h.completeIteration('fetch', 0, 'a'.repeat(400));
    await h.completeIteration('fetch', 1, 'b'.repeat(400));
    const tr = await h.completeIteration('fetch', 2, 'c'.repeat(400));
    expect(h.node('fetch').status).toBe(TaskStatus.Failed);
    expect(h.node('fetch').error).toMatch(/^for_each output of node fetch too large: 1.2 KiB > 1 KiB$/);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });
});

import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../../model/workflow-types.js';
import { actionsOf, edge, finished, forEach, Harness, task } from '../testing/harness.js';

/** fetch (for_each over input.items, with `extra`) → report, which reads fetch's output and failed iterations. */
function fanOut(items: unknown[], extra: Parameters<typeof forEach>[3] = {}): Harness {
  return new Harness(
    [
      forEach('fetch', '{{ input.items }}', { url: 'https://x/{{ item }}' }, extra),
      task('report', { got: '{{ tasks.fetch.output }}', failed: '{{ tasks.fetch.failedIterations }}' }),
    ],
    [edge('fetch', 'report')],
    { input: { items: items as never } },
  );
}

const statuses = (h: Harness): string[] => h.node('fetch').iterations!.map((it) => it.status);

describe('for_each tolerated_failures', () => {
  it('completes with exactly N failures, null in their places, and successors read failedIterations', async () => {
    const h = fanOut(['a', 'b', 'c', 'd'], { tolerated_failures: 2 });
    await h.start();
    await h.failIteration('fetch', 3, 'HTTP 500');
    await h.completeIteration('fetch', 0, 'A');
    await h.failIteration('fetch', 1, 'HTTP 502');
    const tr = await h.completeIteration('fetch', 2, 'C');
    expect(h.node('fetch').status).toBe(TaskStatus.Completed);
    expect(actionsOf(tr, 'CompleteTask')[1]?.output).toEqual(['A', null, 'C', null]);
    expect(actionsOf(tr, 'DispatchTask').map((a) => a.input)).toEqual([{ got: ['A', null, 'C', null], failed: [1, 3] }]);
    await h.complete('report');
    expect(h.run.status).toBe(RunStatus.Succeeded);
  });

  it('one failure more skips the iterations not started yet, lets the running one finish, then fails the node', async () => {
    const h = fanOut(['a', 'b', 'c', 'd', 'e', 'f'], { tolerated_failures: 1, max_concurrency: 2 });
    await h.start();
    const first = await h.failIteration('fetch', 0, 'bad 0');
    expect(actionsOf(first, 'SkipIterations')).toEqual([]);
    expect(actionsOf(first, 'ReleaseIteration').map((a) => a.iteration)).toEqual([2]);
    const second = await h.failIteration('fetch', 2, 'bad 2');
    expect(actionsOf(second, 'SkipIterations')[0]).toMatchObject({
      taskIds: [3, 4, 5].map((i) => h.iteration('fetch', i).taskId),
      reason: 'not started: 2 iterations failed, more than tolerated_failures 1 allows',
    });
    expect(statuses(h)).toEqual(['FAILED', 'PENDING', 'FAILED', 'SKIPPED', 'SKIPPED', 'SKIPPED']);
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    const end = await h.completeIteration('fetch', 1, 'B');
    expect(h.node('fetch').status).toBe(TaskStatus.Failed);
    expect(h.node('fetch').error).toBe('2 of 6 iterations failed, more than tolerated_failures 1 allows: iteration 0: bad 0');
    expect(finished(end)?.status).toBe(RunStatus.Failed);
  });

  it('a percentage allows floor(P × count / 100): "20%" of 10 allows 2, of 4 allows none', async () => {
    const ten = fanOut([...'abcdefghij'], { tolerated_failures: '20%' });
    await ten.start();
    for (const i of [0, 1]) await ten.failIteration('fetch', i);
    for (let i = 2; i < 10; i++) await ten.completeIteration('fetch', i, i);
    expect(ten.node('fetch').status).toBe(TaskStatus.Completed);
    const tenFail = fanOut([...'abcdefghij'], { tolerated_failures: '20%' });
    await tenFail.start();
    for (const i of [0, 1, 2]) await tenFail.failIteration('fetch', i, `bad ${i}`);
    for (let i = 3; i < 10; i++) await tenFail.completeIteration('fetch', i);
    expect(tenFail.node('fetch').error).toBe('3 of 10 iterations failed, more than tolerated_failures 20% (2) allows: iteration 0: bad 0');
    const four = fanOut(['a', 'b', 'c', 'd'], { tolerated_failures: '20%' });
    await four.start();
    await four.failIteration('fetch', 2, 'bad');
    for (const i of [0, 1, 3]) await four.completeIteration('fetch', i);
    expect(four.node('fetch').error).toBe('1 of 4 iterations failed, more than tolerated_failures 20% (0) allows: iteration 2: bad');
  });

  it('with reducers, a tolerated failure is left out of the merge', async () => {
    const h = fanOut(['a', 'b', 'c'], { tolerated_failures: 1, reducers: { n: 'add', names: 'append' } });
    await h.start();
    await h.completeIteration('fetch', 0, { n: 1, names: ['a'] });
    await h.failIteration('fetch', 1);
    const tr = await h.completeIteration('fetch', 2, { n: 5, names: ['c'] });
    expect(actionsOf(tr, 'CompleteTask')[1]?.output).toEqual({ n: 6, names: ['a', 'c'] });
  });

  it('without tolerated_failures the first failure still skips the rest and names the iteration', async () => {
    const h = fanOut(['a', 'b', 'c'], { max_concurrency: 1 });
    await h.start();
    const tr = await h.failIteration('fetch', 0, 'bad');
    expect(actionsOf(tr, 'SkipIterations')[0]?.reason).toBe('not started: iteration 0 failed');
    expect(h.node('fetch').error).toBe('iteration 0 of 3 failed: bad');
  });

  it('failedIterations is [] for a for_each node with no failure, and absent for other nodes', async () => {
    const h = new Harness(
      [
        forEach('fetch', '{{ input.items }}', { url: 'https://x/{{ item }}' }),
        task('report', { failed: '{{ tasks.fetch.failedIterations }}', plain: '{{ has(tasks.start.failedIterations) }}' }),
        task('start'),
      ],
      [edge('start', 'fetch'), edge('fetch', 'report')],
      { input: { items: ['a'] } },
    );
    await h.start('start');
    await h.complete('start');
    const tr = await h.completeIteration('fetch', 0);
    expect(actionsOf(tr, 'DispatchTask')[0]?.input).toEqual({ failed: [], plain: false });
  });
});

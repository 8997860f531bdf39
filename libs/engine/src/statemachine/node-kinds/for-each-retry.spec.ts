import { describe, expect, it } from '@jest/globals';
import { MachineError } from '../errors.js';
import { RunStatus, TaskStatus } from '../../model/workflow-types.js';
import { actionsOf, dispatched, edge, forEach, Harness, task } from '../testing/harness.js';

/** fetch (for_each over input.items, with `extra`) → report, which reads fetch's output. */
function fanOut(items: unknown[], extra: Parameters<typeof forEach>[3] = {}): Harness {
  return new Harness(
    [forEach('fetch', '{{ input.items }}', { url: 'https://x/{{ item }}' }, extra), task('report', { got: '{{ tasks.fetch.output }}' })],
    [edge('fetch', 'report')],
    { input: { items: items as never } },
  );
}

const statuses = (h: Harness): string[] => h.node('fetch').iterations!.map((it) => it.status);

describe('retry with failedIterationsOnly', () => {
  it('runs again only the failed and skipped iterations, with their stored inputs, keeping the completed outputs', async () => {
    const h = fanOut(['a', 'b', 'c', 'd', 'e'], { max_concurrency: 2, retry: { max_attempts: 2 } });
    await h.start();
    await h.completeIteration('fetch', 0, 'A');
    await h.failIteration('fetch', 1, 'flaky');
    await h.failIteration('fetch', 1, 'down'); // attempts spent: failed for good, 3 and 4 skipped
    await h.completeIteration('fetch', 2, 'C');
    expect(statuses(h)).toEqual(['COMPLETED', 'FAILED', 'COMPLETED', 'SKIPPED', 'SKIPPED']);
    expect(h.run.status).toBe(RunStatus.Failed);
    const ids = h.node('fetch').iterations!.map((it) => it.taskId);
    // The array changed since: it is not resolved again.
    const tr = await h.retry('fetch', { failedIterationsOnly: true, input: { items: ['x'] } });
    expect(actionsOf(tr, 'ReopenRun')[0]?.resetNodes).toEqual(['report']);
    expect(actionsOf(tr, 'CreateIterations')).toEqual([]);
    expect(actionsOf(tr, 'ReopenIterations')[0]?.iterations).toEqual([
      { taskId: ids[1], iteration: 1, attempt: 1, attemptLimit: 4 },
      { taskId: ids[3], iteration: 3, attempt: 0, attemptLimit: 3 },
      { taskId: ids[4], iteration: 4, attempt: 0, attemptLimit: 3 },
    ]);
    // max_concurrency applies to the iterations run again.
    expect(actionsOf(tr, 'ReleaseIteration').map((a) => a.iteration)).toEqual([1, 3]);
    expect(h.node('fetch').status).toBe(TaskStatus.Running);
    expect(statuses(h)).toEqual(['COMPLETED', 'PENDING', 'COMPLETED', 'PENDING', 'WAITING']);
    expect(h.node('fetch').iterations!.map((it) => it.taskId)).toEqual(ids);
    expect(h.run.status).toBe(RunStatus.Running);

    // A new attempt of each: a stale report of the old one is ignored; the new one retries per the policy.
    expect((await h.try({ type: 'NodeCompleted', taskId: ids[1]!, nodeId: 'fetch', attempt: 1, output: 'old' })).ignored).toMatch(/stale/);
    expect(h.iteration('fetch', 1).attempt).toBe(2);
    await h.failIteration('fetch', 1, 'again');
    expect(h.iteration('fetch', 1).status).toBe(TaskStatus.Pending);
    await h.completeIteration('fetch', 1, 'B');
    await h.completeIteration('fetch', 3, 'D');
    const last = await h.completeIteration('fetch', 4, 'E');
    expect(actionsOf(last, 'CompleteTask')[1]?.output).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(actionsOf(last, 'DispatchTask')[0]?.input).toEqual({ got: ['A', 'B', 'C', 'D', 'E'] });
  });

  it('retries the tolerated failures of a completed node too, and resets its descendants', async () => {
    const h = fanOut(['a', 'b'], { tolerated_failures: 1 });
    await h.start();
    await h.completeIteration('fetch', 0, 'A');
    await h.failIteration('fetch', 1);
    await h.complete('report');
    expect(h.run.status).toBe(RunStatus.Succeeded);
    const tr = await h.retry('fetch', { failedIterationsOnly: true });
    expect(actionsOf(tr, 'ReopenRun')[0]?.resetNodes).toEqual(['report']);
    expect(h.run.nodes.has('report')).toBe(false);
    expect(statuses(h)).toEqual(['COMPLETED', 'PENDING']);
    const done = await h.completeIteration('fetch', 1, 'B');
    expect(actionsOf(done, 'DispatchTask')[0]?.input).toEqual({ got: ['A', 'B'] });
  });

  it('runs the cancelled iterations of a cancelled run again', async () => {
    const h = fanOut(['a', 'b', 'c'], { max_concurrency: 1 });
    await h.start();
    await h.completeIteration('fetch', 0, 'A');
    await h.cancel();
    expect(statuses(h)).toEqual(['COMPLETED', 'CANCELLED', 'CANCELLED']);
    const tr = await h.retry('fetch', { failedIterationsOnly: true });
    expect(actionsOf(tr, 'ReleaseIteration').map((a) => a.iteration)).toEqual([1]);
    expect(statuses(h)).toEqual(['COMPLETED', 'PENDING', 'WAITING']);
  });

  it('is refused, changing nothing, for a node without for_each or without an iteration to run again', async () => {
    const h = fanOut(['a']);
    await h.start();
    await h.completeIteration('fetch', 0);
    await h.fail('report');
    const before = structuredClone([...h.run.nodes]);
    const refused = async (node: string): Promise<string> => {
      const err = await h.retry(node, { failedIterationsOnly: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MachineError);
      expect((err as MachineError).code).toBe('INVALID_REQUEST');
      return (err as Error).message;
    };
    expect(await refused('report')).toBe('failedIterationsOnly: node report has no for_each; retry from it without failedIterationsOnly');
    expect(await refused('fetch')).toBe('failedIterationsOnly: node fetch has no failed, skipped or cancelled iteration to run again');
    expect([...h.run.nodes]).toEqual(before);
    const empty = fanOut([]);
    await empty.start();
    await empty.fail('report');
    const err = await empty.retry('fetch', { failedIterationsOnly: true }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^failedIterationsOnly: node fetch has no iterations/);
  });
});

describe('retry with failedIterationsOnly of a node whose failure an on_error edge took', () => {
  it('routes the node anew once it completes: to its normal successor, not again to its error handler', async () => {
    const h = new Harness(
      [forEach('fetch', '{{ input.items }}', { url: 'https://x/{{ item }}' }), task('report'), task('alert')],
      [edge('fetch', 'report'), { from: 'fetch', to: 'alert', on_error: true }],
      { input: { items: ['a', 'b'] } },
    );
    await h.start();
    await h.completeIteration('fetch', 0, 'A');
    await h.failIteration('fetch', 1, 'down');
    expect(h.node('fetch').branches).toEqual(['alert']);
    await h.complete('alert');
    expect(h.run.status).toBe(RunStatus.Succeeded);

    await h.retry('fetch', { failedIterationsOnly: true });
    expect(h.node('fetch').branches).toBeUndefined();
    const done = await h.completeIteration('fetch', 1, 'B');
    expect(h.node('fetch').status).toBe(TaskStatus.Completed);
    expect(h.node('fetch').branches).toEqual(['report']);
    expect(dispatched(done)).toEqual(['report']);
  });
});

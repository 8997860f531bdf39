import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../../model/workflow-types.js';
import { actionsOf, edge, finished, Harness, subworkflow, task, types } from '../testing/harness.js';

/** order → pay (SUBWORKFLOW of `child`) → ship, which reads the child's output. */
function orderFlow(extra: Parameters<typeof subworkflow>[2] = {}, spec: Record<string, unknown> = {}): Harness {
  return new Harness(
    [
      task('order'),
      subworkflow('pay', { workflow: 'child', input: { amount: '{{ input.total }}' }, config: '{{ config }}', ...spec } as never, extra),
      task('ship', { receipt: '{{ tasks.pay.output.receipt }}' }),
    ],
    [edge('order', 'pay'), edge('pay', 'ship')],
    { input: { total: 42 }, config: { base_url: 'http://stub' } },
  );
}

describe('SUBWORKFLOW: a child run as a function call', () => {
  it('waits while the child runs, started with the resolved input and config on the default version', async () => {
    const h = orderFlow();
    await h.start();
    const tr = await h.complete('order');
    expect(h.node('pay').status).toBe(TaskStatus.Waiting);
    const [start] = actionsOf(tr, 'StartChildRun');
    expect(start).toMatchObject({ nodeId: 'pay', attempt: 0, workflowId: 'child', version: 1, input: { amount: 42 }, config: { base_url: 'http://stub' } });
    expect(h.children).toHaveLength(1);
  });

  it("completes with the child's run output when the child succeeds, and routes on", async () => {
    const h = orderFlow();
    await h.start();
    await h.complete('order');
    const tr = await h.endChild('pay', RunStatus.Succeeded, { output: { receipt: 'r-1' } });
    expect(h.node('pay').status).toBe(TaskStatus.Completed);
    expect(actionsOf(tr, 'DispatchTask')[0]?.input).toEqual({ receipt: 'r-1' });
  });

  it('ignores a wake-up while the child is still running', async () => {
    const h = orderFlow();
    await h.start();
    await h.complete('order');
    const tr = await h.fireTimer('pay');
    expect(tr.ignored).toMatch(/still running/);
    expect(h.node('pay').status).toBe(TaskStatus.Waiting);
  });

  it("fails the node with the child's reason when the child fails, and the run fails", async () => {
    const h = orderFlow();
    await h.start();
    await h.complete('order');
    const child = h.children[0]!.id;
    const tr = await h.endChild('pay', RunStatus.Failed, {
      error: 'node charge failed: card declined',
      failedTask: { nodeId: 'charge', error: 'card declined' },
    });
    expect(h.node('pay').status).toBe(TaskStatus.Failed);
    // The child's error names its failed node already: it is not repeated.
    expect(h.node('pay').error).toBe(`child run ${child} failed: node charge failed: card declined`);
    expect(finished(tr)).toMatchObject({ status: RunStatus.Failed, reason: `node pay failed: child run ${child} failed: node charge failed: card declined` });
  });

  it("names the child's failed node when the child's own error does not", async () => {
    const h = orderFlow();
    await h.start();
    await h.complete('order');
    const child = h.children[0]!.id;
    await h.endChild('pay', RunStatus.Failed, {
      error: 'cannot resolve the run output: No such key: total',
      failedTask: { nodeId: 'charge', error: 'card declined' },
    });
    expect(h.node('pay').error).toBe(`child run ${child} failed: cannot resolve the run output: No such key: total (node charge: card declined)`);
  });

  it('a retry policy starts a new child for the next attempt, after the backoff', async () => {
    const h = orderFlow({ retry: { max_attempts: 2, backoff_seconds: 5 } });
    await h.start();
    await h.complete('order');
    const retry = await h.endChild('pay', RunStatus.Cancelled, { error: 'cancelled by ops' });
    expect(types(retry)).toEqual(['RetryChild']);
    expect(actionsOf(retry, 'RetryChild')[0]?.notBefore).toEqual(new Date(h.now.getTime() + 5000));
    expect(h.node('pay')).toMatchObject({ status: TaskStatus.Waiting, attempt: 1 });
    h.advance(5);
    const next = await h.fireTimer('pay');
    expect(actionsOf(next, 'StartChildRun')[0]).toMatchObject({ attempt: 1, input: { amount: 42 } });
    expect(h.children.map((c) => c.attempt)).toEqual([0, 1]);
    await h.endChild('pay', RunStatus.Succeeded, { output: { receipt: 'r-2' } });
    expect(h.node('pay').status).toBe(TaskStatus.Completed);
  });

  it('without a backoff the next child starts in the same event', async () => {
    const h = orderFlow({ retry: { max_attempts: 3 } });
    await h.start();
    await h.complete('order');
    const tr = await h.endChild('pay', RunStatus.Failed, { error: 'x' });
    expect(types(tr)).toEqual(['RetryChild', 'StartChildRun']);
  });

  it('fails the node, naming the workflow, when the child workflow or version cannot run', async () => {
    for (const [spec, why] of [
      [{ workflow: 'nope' }, 'workflow nope not found'],
      [{ workflow: 'child', version: 9 }, 'workflow child version 9 not found'],
      [{ workflow: 'child', version: 1 }, 'workflow child version 1 is deprecated'],
      [{ workflow: '{{ input.total }}' }, 'spec.workflow must be a workflow id, got 42'],
      [{ workflow: 'child', input: '{{ input.total }}' }, "spec.input must be an object (the child run's input), got a number"],
    ] as const) {
      const h = orderFlow({}, spec);
      h.deprecated.add('child@1');
      await h.start();
      const tr = await h.complete('order');
      expect(h.node('pay').error).toBe(`SUBWORKFLOW pay: ${why}`);
      expect(actionsOf(tr, 'StartChildRun')).toEqual([]);
      expect(finished(tr)?.status).toBe(RunStatus.Failed);
    }
  });

  it('refuses to start a child beyond the depth limit, with an error naming the limit', async () => {
    const h = orderFlow();
    h.maxDepth = 3;
    h.run.depth = 3;
    await h.start();
    const tr = await h.complete('order');
    expect(h.node('pay').error).toMatch(/^SUBWORKFLOW pay: cannot start a child run: this run is already at the depth limit of 3 nested runs/);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
    const shallow = orderFlow();
    shallow.run.depth = 9;
    await shallow.start();
    expect(actionsOf(await shallow.complete('order'), 'StartChildRun')).toHaveLength(1);
  });

  it('refuses to grow the tree of runs beyond its limit, at the start and at a retry', async () => {
    const h = orderFlow({ retry: { max_attempts: 2 } });
    h.maxTree = 5;
    h.treeSize = 5;
    await h.start();
    await h.complete('order');
    expect(h.node('pay').error).toMatch(/^SUBWORKFLOW pay: cannot start a child run: this tree of runs already holds 5 runs, the limit of 5 /);
    const retried = orderFlow({ retry: { max_attempts: 2 } });
    retried.maxTree = 5;
    await retried.start();
    await retried.complete('order');
    retried.treeSize = 5;
    const tr = await retried.endChild('pay', RunStatus.Failed, { error: 'x' });
    expect(types(tr)).toEqual(['RetryChild', 'ResolveWait', 'FinishRun']);
    expect(retried.node('pay').error).toMatch(/tree of runs already holds 5 runs/);
  });

  it('starts a child that was created but not started yet, with its own id and fields', async () => {
    const h = orderFlow();
    await h.start();
    await h.complete('order');
    h.children[0]!.started = false;
    const tr = await h.fireTimer('pay');
    expect(actionsOf(tr, 'StartChildRun')).toEqual([
      expect.objectContaining({ childRunId: h.children[0]!.id, attempt: 0, workflowId: 'child', version: 1, input: { amount: 42 } }),
    ]);
  });

  it('cancelling the parent cancels the waiting node; a late end of the child is ignored', async () => {
    const h = orderFlow();
    await h.start();
    await h.complete('order');
    await h.cancel();
    expect(h.node('pay').status).toBe(TaskStatus.Cancelled);
    expect((await h.endChild('pay', RunStatus.Succeeded, { output: {} })).ignored).toMatch(/no longer pending/);
  });

  it('a failed child routes along an error edge like any failure', async () => {
    const h = new Harness(
      [subworkflow('pay', { workflow: 'child' }), task('ship'), task('refund', { why: '{{ tasks.pay.error }}' })],
      [edge('pay', 'ship'), { from: 'pay', to: 'refund', on_error: true }],
    );
    await h.start();
    const tr = await h.endChild('pay', RunStatus.Failed, { error: 'insufficient funds' });
    expect(actionsOf(tr, 'DispatchTask').map((a) => a.node.node_id)).toEqual(['refund']);
    expect((actionsOf(tr, 'DispatchTask')[0]?.input as { why: string }).why).toMatch(/^child run .* failed: insufficient funds$/);
  });
});

describe('SUBWORKFLOW retries keep their backoff', () => {
  it('a late wake-up meant for the failed child does not start the next one early; the timer is set for the retry', async () => {
    const h = orderFlow({ retry: { max_attempts: 2, backoff_seconds: 5 } });
    await h.start();
    await h.complete('order');
    await h.endChild('pay', RunStatus.Failed, { error: 'x' });
    expect(h.node('pay').retryAt).toEqual(new Date(h.now.getTime() + 5000));
    // The scheduler's claim of the child's end fires after the fast path already retried.
    const stale = await h.fireTimer('pay');
    expect(stale.ignored).toBe(`the retry of pay is not due until ${new Date(h.now.getTime() + 5000).toISOString()}`);
    expect(stale.rearmAt).toEqual(new Date(h.now.getTime() + 5000));
    expect(h.children).toHaveLength(1);
    h.advance(5);
    expect(actionsOf(await h.fireTimer('pay'), 'StartChildRun')).toHaveLength(1);
    expect(h.node('pay').retryAt).toBeUndefined();
  });
});

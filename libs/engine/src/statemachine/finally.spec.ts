import { describe, expect, it } from '@jest/globals';
import type { FinallyStep } from '../model/workflow-definition.js';
import { NodeType, RunStatus, TaskStatus } from '../model/workflow-types.js';
import { MachineError } from './errors.js';
import { actionsOf, dispatched, edge, finished, Harness, task, types } from './testing/harness.js';

/** A finally step whose input shows what it reads of the run. */
const cleanup = (extra: Partial<FinallyStep> = {}): FinallyStep => ({
  node_id: 'cleanup',
  type: NodeType.Http,
  spec: { url: 'http://x/cleanup', body: { status: '{{ run.status }}', error: '{{ run.error }}', id: '{{ run.id }}', a: '{{ tasks.a.status }}' } },
  ...extra,
});

/** a → b with a finally step. */
const chain = (step: FinallyStep = cleanup(), timeout?: number): Harness =>
  new Harness([task('a'), task('b')], [edge('a', 'b')], { finally: step, ...(timeout !== undefined ? { timeout_seconds: timeout } : {}) });

describe('finally step', () => {
  it('after a success: decides SUCCEEDED, runs the step with run.status, then succeeds with the output', async () => {
    const h = chain(
      cleanup({
        spec: { url: 'http://x/cleanup', body: { status: '{{ run.status }}', error: '{{ run.error }}', id: '{{ run.id }}', a: '{{ tasks.a.output.n }}' } },
      }),
    );
    await h.start();
    await h.complete('a', { n: 7 });
    const decided = await h.complete('b', { ok: true });
    expect(finished(decided)).toBeUndefined();
    expect(actionsOf(decided, 'DecideRun')).toEqual([{ type: 'DecideRun', status: RunStatus.Succeeded, output: { b: { ok: true } } }]);
    expect(dispatched(decided)).toEqual(['cleanup']);
    expect(actionsOf(decided, 'DispatchTask')[0].input).toEqual({
      url: 'http://x/cleanup',
      body: { status: 'SUCCEEDED', error: null, id: 'run-1', a: 7 },
    });
    expect(h.run.status).toBe(RunStatus.Running);

    const done = await h.complete('cleanup', { cleaned: true });
    expect(finished(done)).toEqual({ type: 'FinishRun', status: RunStatus.Succeeded, output: { b: { ok: true } } });
    expect(h.run.decided).toBeUndefined();
  });

  it('after a failure: runs with run.error and the run ends FAILED with the nodes error', async () => {
    const h = chain();
    await h.start();
    const decided = await h.fail('a', 'card declined');
    expect(finished(decided)).toBeUndefined();
    expect(actionsOf(decided, 'DispatchTask')[0].input).toMatchObject({ body: { status: 'FAILED', error: 'node a failed: card declined' } });
    const done = await h.complete('cleanup');
    expect(finished(done)).toMatchObject({ status: RunStatus.Failed, reason: 'node a failed: card declined' });
  });

  it('after a cancel: cancels the active tasks, runs the step, then ends CANCELLED', async () => {
    const h = chain();
    await h.start();
    const tr = await h.cancel('operator stop');
    expect(types(tr)).toEqual(['CancelTasks', 'DecideRun', 'CreateTask', 'DispatchTask']);
    expect(h.node('a').status).toBe(TaskStatus.Cancelled);
    expect(actionsOf(tr, 'DispatchTask')[0].input).toMatchObject({ body: { status: 'CANCELLED', error: 'operator stop' } });
    expect(finished(await h.complete('cleanup'))).toMatchObject({ status: RunStatus.Cancelled, reason: 'operator stop' });
  });

  it('after a time-out: the deadline is cleared and a late time-out does not stop the step', async () => {
    const h = chain(cleanup(), 60);
    await h.start();
    h.advance(61);
    const tr = await h.try({ type: 'RunTimedOut' });
    expect(types(tr)).toEqual(['CancelTasks', 'DecideRun', 'ArmDeadline', 'CreateTask', 'DispatchTask']);
    expect(h.run.deadlineAt).toBeUndefined();
    expect(actionsOf(tr, 'DispatchTask')[0].input).toMatchObject({ body: { status: 'TIMED_OUT', error: 'run exceeded timeout_seconds 60' } });
    h.advance(600);
    expect((await h.try({ type: 'RunTimedOut' })).ignored).toMatch(/finally step runs/);
    expect(finished(await h.complete('cleanup'))).toMatchObject({ status: RunStatus.TimedOut, reason: 'run exceeded timeout_seconds 60' });
  });

  it('failing for good after its retries turns a success into FAILED with its error', async () => {
    const h = chain(cleanup({ retry: { max_attempts: 2 } }));
    await h.start();
    await h.complete('a', { n: 1 });
    await h.complete('b');
    const retried = await h.fail('cleanup', 'HTTP 503');
    expect(actionsOf(retried, 'RetryTask')).toHaveLength(1);
    expect(finished(retried)).toBeUndefined();
    const done = await h.fail('cleanup', 'HTTP 500');
    expect(finished(done)).toEqual({ type: 'FinishRun', status: RunStatus.Failed, reason: 'finally node cleanup failed: HTTP 500' });
  });

  it('failing appends its error to the run error, keeping the decided status', async () => {
    const h = chain();
    await h.start();
    await h.fail('a', 'boom');
    expect(finished(await h.fail('cleanup', 'unreachable'))).toMatchObject({
      status: RunStatus.Failed,
      reason: 'node a failed: boom; finally node cleanup failed: unreachable',
    });
  });

  it('an input it cannot resolve fails it at once, and the run ends in the same event', async () => {
    const h = chain(cleanup({ spec: { url: '{{ tasks.a.output.missing.deeper }}' } }));
    await h.start();
    const tr = await h.cancel();
    expect(finished(tr)).toMatchObject({
      status: RunStatus.Cancelled,
      reason: expect.stringMatching(/^cancelled; finally node cleanup failed: CEL resolution/),
    });
  });

  it('a second cancel stops the step: a cancelled run stays CANCELLED', async () => {
    const h = chain();
    await h.start();
    await h.cancel('first');
    const tr = await h.cancel('second');
    expect(types(tr)).toEqual(['CancelTasks', 'FinishRun']);
    expect(h.node('cleanup').status).toBe(TaskStatus.Cancelled);
    expect(finished(tr)).toMatchObject({ status: RunStatus.Cancelled, reason: 'first; finally node cleanup was cancelled: second' });
    await expect(h.cancel()).rejects.toBeInstanceOf(MachineError);
  });

  it('a cancel during the step of a decided success ends the run CANCELLED', async () => {
    const h = chain();
    await h.start();
    await h.complete('a', { n: 1 });
    await h.complete('b');
    expect(finished(await h.cancel('stop cleanup'))).toMatchObject({ status: RunStatus.Cancelled, reason: 'finally node cleanup was cancelled: stop cleanup' });
  });

  it('refuses signals and retries while it runs', async () => {
    const h = chain();
    await h.start();
    await h.fail('a');
    await expect(h.signal('go')).rejects.toThrow(/ending FAILED \(its finally step runs\)/);
    await expect(h.retry('a')).rejects.toMatchObject({ code: 'RUN_ACTIVE' });
  });

  it('a retry resets the step, which runs again at the next outcome', async () => {
    const h = chain();
    await h.start();
    await h.fail('a');
    await h.complete('cleanup');
    expect(h.run.status).toBe(RunStatus.Failed);
    const tr = await h.retry('a');
    expect(actionsOf(tr, 'ReopenRun')[0].resetNodes).toContain('cleanup');
    expect(h.run.nodes.has('cleanup')).toBe(false);
    await h.complete('a', { n: 2 });
    const decided = await h.complete('b');
    expect(dispatched(decided)).toEqual(['cleanup']);
    expect(actionsOf(decided, 'DispatchTask')[0].input).toMatchObject({ body: { status: 'SUCCEEDED', error: null, a: 'COMPLETED' } });
    expect(finished(await h.complete('cleanup'))?.status).toBe(RunStatus.Succeeded);
  });

  it('a paused run decides nothing; a cancel of a paused run runs the step', async () => {
    const h = chain();
    await h.start();
    await h.try({ type: 'RunPaused' });
    await h.complete('a', { n: 1 });
    expect(h.run.decided).toBeUndefined();
    const tr = await h.cancel();
    expect(h.run.status).toBe(RunStatus.Running);
    expect(dispatched(tr)).toEqual(['cleanup']);
  });

  it('a cancel after the step ended on a paused run does not call the step cancelled', async () => {
    const h = chain();
    await h.start();
    await h.complete('a', { n: 1 });
    await h.complete('b');
    await h.try({ type: 'RunPaused' });
    await h.complete('cleanup');
    expect(h.run.status).toBe(RunStatus.Paused);
    const done = await h.cancel('stop');
    expect(h.node('cleanup').status).toBe(TaskStatus.Completed);
    expect(finished(done)).toEqual({ type: 'FinishRun', status: RunStatus.Succeeded, output: { b: {} } });

    const failing = chain();
    await failing.start();
    await failing.fail('a', 'boom');
    await failing.try({ type: 'RunPaused' });
    await failing.fail('cleanup', 'unreachable');
    expect(finished(await failing.cancel('stop'))).toMatchObject({
      status: RunStatus.Failed,
      reason: 'node a failed: boom; finally node cleanup failed: unreachable',
    });
  });

  it('without a finally step, runs end as before', async () => {
    const h = new Harness([task('a')], []);
    await h.start();
    expect(types(await h.cancel())).toEqual(['CancelTasks', 'FinishRun']);
  });

  it('a run that reached no node (queued for its slot) ends at a cancel without the step', async () => {
    const h = chain();
    const tr = await h.cancel();
    expect(types(tr)).toEqual(['CancelTasks', 'FinishRun']);
    expect(h.run.nodes.has('cleanup')).toBe(false);
  });

  it('refuses to start or retry a run at the step', async () => {
    const h = chain();
    await expect(h.start('cleanup')).rejects.toThrow(/start node cleanup is the finally step/);
    await h.start();
    await h.fail('a');
    await h.complete('cleanup');
    await expect(h.retry('cleanup')).rejects.toThrow(/node cleanup is the finally step: retry from a node of the graph/);
  });
});

import { describe, expect, it } from '@jest/globals';
import type { WorkflowEdge } from '../model/workflow-definition.js';
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import { actionsOf, cond, created, dispatched, edge, finished, fork, Harness, task } from './testing/harness.js';

/** An `on_error` edge, optionally conditional. */
function onError(from: string, to: string, condition?: string): WorkflowEdge {
  return { from, to, on_error: true, ...(condition !== undefined ? { condition } : {}) };
}

describe('conditional edges on any node', () => {
  it('a worker node takes only the edges whose condition holds, records them, and skips the rest with its cascade', async () => {
    // a ─(n > 1)→ hi ──────────┐
    //   ─(n <= 1)→ lo → lo2 ───┴→ end
    const h = new Harness(
      [task('a'), task('hi'), task('lo'), task('lo2'), task('end')],
      [cond('a', 'hi', '{{tasks.a.output.n > 1}}'), cond('a', 'lo', '{{tasks.a.output.n <= 1}}'), edge('lo', 'lo2'), edge('hi', 'end'), edge('lo2', 'end')],
    );
    await h.start();
    const tr = await h.complete('a', { n: 5 });
    expect(actionsOf(tr, 'RecordBranches')).toEqual([{ type: 'RecordBranches', taskId: h.node('a').taskId, nodeId: 'a', branches: ['hi'] }]);
    expect(h.node('a').branches).toEqual(['hi']);
    expect(dispatched(tr)).toEqual(['hi']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['lo', 'lo2']);
    expect(dispatched(await h.complete('hi'))).toEqual(['end']);
    expect(finished(await h.complete('end'))?.status).toBe(RunStatus.Succeeded);
  });

  it('an unconditional edge beside conditional ones is always taken, and a target reachable otherwise still runs', async () => {
    // a ─(false)→ j ; a → b → j
    const h = new Harness([task('a'), task('b'), task('j')], [cond('a', 'j', '{{tasks.a.output.go}}'), edge('a', 'b'), edge('b', 'j')]);
    await h.start();
    const tr = await h.complete('a', { go: false });
    expect(h.node('a').branches).toEqual(['b']);
    expect(dispatched(tr)).toEqual(['b']);
    expect(dispatched(await h.complete('b'))).toEqual(['j']); // one active incoming edge suffices
  });

  it('a node with no conditional or error edge records nothing (routing as before)', async () => {
    const h = new Harness([task('a'), task('b')], [edge('a', 'b')]);
    await h.start();
    const tr = await h.complete('a');
    expect(actionsOf(tr, 'RecordBranches')).toEqual([]);
    expect(h.node('a').branches).toBeUndefined();
  });

  it('a condition on a FORK edge is decided when the FORK completes inline, over input', async () => {
    const h = new Harness([fork('f'), task('x'), task('y')], [cond('f', 'x', '{{input.wantX}}'), edge('f', 'y')], { input: { wantX: false } });
    const tr = await h.start();
    expect(dispatched(tr)).toEqual(['y']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['x']);
    expect(h.node('f').branches).toEqual(['y']);
  });

  it('a condition that cannot be evaluated fails the run, naming the edge, as a SWITCH does', async () => {
    const h = new Harness([task('a'), task('b')], [cond('a', 'b', '{{tasks.a.output.missing.deeper}}')]);
    await h.start();
    const tr = await h.complete('a', {});
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
    expect(finished(tr)?.reason).toMatch(/^routing after node a failed: condition eval for edge a→b: failed to evaluate condition/);
    expect(dispatched(tr)).toEqual([]);
  });
});

describe('error edges', () => {
  const payFlow = () =>
    new Harness(
      [task('pay', {}, { retry: { max_attempts: 2, backoff_seconds: 1 } }), task('ship'), task('refund', { why: '{{tasks.pay.error}}' }), task('notify')],
      [edge('pay', 'ship'), onError('pay', 'refund'), edge('ship', 'notify')],
    );

  it('is taken only when the source fails for good; the target reads tasks.<id>.error and the run succeeds', async () => {
    const h = payFlow();
    await h.start();
    const first = await h.fail('pay', 'card declined');
    expect(actionsOf(first, 'RetryTask')).toHaveLength(1); // a retried attempt routes nothing
    expect(actionsOf(first, 'RecordBranches')).toEqual([]);
    expect(dispatched(first)).toEqual([]);
    const tr = await h.fail('pay', 'card declined');
    expect(actionsOf(tr, 'FailTask')).toHaveLength(1);
    expect(h.node('pay').branches).toEqual(['refund']);
    expect(dispatched(tr)).toEqual(['refund']);
    expect(actionsOf(tr, 'DispatchTask')[0]?.input).toEqual({ why: 'card declined' });
    expect(created(tr, TaskStatus.Skipped)).toEqual(['ship', 'notify']); // normal edges of a failed source are not taken
    expect(finished(tr)).toBeUndefined();
    const last = await h.complete('refund', { refunded: true });
    expect(finished(last)).toEqual({ type: 'FinishRun', status: RunStatus.Succeeded, output: { refund: { refunded: true } } });
  });

  it('its target is skipped when the source succeeds', async () => {
    const h = payFlow();
    await h.start();
    const tr = await h.complete('pay', { paid: true });
    expect(h.node('pay').branches).toEqual(['ship']);
    expect(dispatched(tr)).toEqual(['ship']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['refund']);
    await h.complete('ship');
    expect(finished(await h.complete('notify'))?.status).toBe(RunStatus.Succeeded);
  });

  it('the failure fails the run when the error handler itself fails', async () => {
    const h = payFlow();
    await h.start();
    await h.fail('pay');
    await h.fail('pay');
    const tr = await h.fail('refund', 'bank offline');
    expect(finished(tr)).toMatchObject({ status: RunStatus.Failed, reason: 'node refund failed: bank offline' });
  });

  it('with a condition, it is taken only when the condition over tasks.<id>.error holds; otherwise the failure fails the run', async () => {
    const flow = () =>
      new Harness(
        [task('pay'), task('retry_later'), task('ship')],
        [edge('pay', 'ship'), onError('pay', 'retry_later', '{{tasks.pay.error.contains("timeout")}}')],
      );
    const handled = flow();
    await handled.start();
    const tr = await handled.fail('pay', 'gateway timeout');
    expect(dispatched(tr)).toEqual(['retry_later']);
    expect(finished(await handled.complete('retry_later'))?.status).toBe(RunStatus.Succeeded);

    const unhandled = flow();
    await unhandled.start();
    const tr2 = await unhandled.fail('pay', 'card declined');
    expect(unhandled.node('pay').branches).toEqual([]);
    expect(created(tr2, TaskStatus.Skipped)).toEqual(['ship', 'retry_later']);
    expect(finished(tr2)).toMatchObject({ status: RunStatus.Failed, reason: 'node pay failed: card declined' });
  });

  it('without an error edge a failure still leaves its edges unresolved and fails the run', async () => {
    const h = new Harness([task('a'), task('b')], [edge('a', 'b')]);
    await h.start();
    const tr = await h.fail('a');
    expect(h.run.nodes.has('b')).toBe(false);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('routes a node that fails before it is dispatched (its input cannot be resolved)', async () => {
    const h = new Harness(
      [task('a'), task('bad', { x: '{{tasks.a.output.nope.deeper}}' }), task('undo', { why: '{{tasks.bad.error}}' })],
      [edge('a', 'bad'), onError('bad', 'undo')],
    );
    await h.start();
    const tr = await h.complete('a', {});
    expect(created(tr, TaskStatus.Failed)).toEqual(['bad']);
    expect(dispatched(tr)).toEqual(['undo']);
    expect(String((actionsOf(tr, 'DispatchTask')[0]?.input as { why: string }).why)).toMatch(/CEL resolution for node bad/);
    expect(finished(await h.complete('undo'))?.status).toBe(RunStatus.Succeeded);
  });

  it('a join below both the normal and the error path runs after whichever path was taken', async () => {
    // pay → ship → done ; pay ─err→ refund → done
    const h = new Harness(
      [task('pay'), task('ship'), task('refund'), task('done')],
      [edge('pay', 'ship'), onError('pay', 'refund'), edge('ship', 'done'), edge('refund', 'done')],
    );
    await h.start();
    const tr = await h.fail('pay');
    expect(created(tr, TaskStatus.Skipped)).toEqual(['ship']);
    expect(dispatched(tr)).toEqual(['refund']);
    expect(dispatched(await h.complete('refund'))).toEqual(['done']);
    expect(finished(await h.complete('done'))?.status).toBe(RunStatus.Succeeded);
  });
});

describe('a retry after a routing failure ended the run while a branch still ran', () => {
  it('carries the late branch forward: its successor runs, and the run does not succeed without it', async () => {
    // f → a ─(v == input.want)→ b ;  f → slow → after
    const h = new Harness(
      [fork('f'), task('a'), task('b'), task('slow'), task('after')],
      [edge('f', 'a'), edge('f', 'slow'), cond('a', 'b', '{{tasks.a.output.v == input.want}}'), edge('slow', 'after')],
    );
    await h.start();
    const broken = await h.complete('a', { v: 1 }); // input.want is missing: the condition cannot be evaluated
    expect(finished(broken)?.status).toBe(RunStatus.Failed);
    await h.complete('slow'); // settles on the failed run: kept, nothing scheduled
    expect(h.run.nodes.has('after')).toBe(false);
    const retried = await h.retry('a', { input: { want: 1 } });
    expect(dispatched(retried).sort()).toEqual(['a', 'after']);
    await h.complete('a', { v: 1 });
    expect(dispatched(await h.complete('after'))).toEqual([]);
    expect(finished(await h.complete('b'))?.status).toBe(RunStatus.Succeeded);
    expect(h.node('after').status).toBe(TaskStatus.Completed);
  });
});

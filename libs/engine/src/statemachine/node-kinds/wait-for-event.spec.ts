import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../../model/workflow-types.js';
import { MachineError } from '../errors.js';
import { actionsOf, dispatched, edge, finished, fork, Harness, task, types, waitFor } from '../testing/harness.js';

const at = (h: Harness, seconds: number): Date => new Date(h.now.getTime() + seconds * 1000);

describe('WAIT_FOR_EVENT and signals', () => {
  it('resolves a waiting node with the signal payload', async () => {
    const h = new Harness([waitFor('e', { event: 'approve-{{input.order_id}}' }), task('b', { by: '{{tasks.e.output.by}}' })], [edge('e', 'b')], {
      input: { order_id: 7 },
    });
    const parked = await h.start();
    expect(actionsOf(parked, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Waiting, awaitedSignal: 'approve-7' });
    expect(actionsOf(parked, 'CreateTask')[0].wakeAt).toBeUndefined(); // no timeout

    const tr = await h.signal('approve-7', { by: 'ann' });
    expect(tr.signalDelivered).toBe(true);
    expect(actionsOf(tr, 'ResolveWait')[0]).toMatchObject({ nodeId: 'e', status: TaskStatus.Completed, output: { by: 'ann' } });
    expect(actionsOf(tr, 'DispatchTask')[0].input).toEqual({ by: 'ann' });
    expect(h.node('e').awaitedSignal).toBeUndefined();
  });

  it('buffers an early signal and consumes it when the node parks', async () => {
    const h = new Harness([task('a'), waitFor('e', { event: 'go' }), task('b')], [edge('a', 'e'), edge('e', 'b')]);
    await h.start();
    const early = await h.signal('go', { n: 1 });
    expect(early.signalDelivered).toBe(false);
    expect(types(early)).toEqual(['BufferSignal']);

    const tr = await h.complete('a');
    const eTask = actionsOf(tr, 'CreateTask').find((c) => c.node.node_id === 'e');
    expect(eTask).toMatchObject({ status: TaskStatus.Completed, output: { n: 1 } });
    expect(actionsOf(tr, 'ConsumeSignal')).toEqual([{ type: 'ConsumeSignal', signalId: 's1', taskId: eTask?.taskId }]);
    expect(dispatched(tr)).toEqual(['b']);
    expect(h.signals[0].consumedBy).toBe(eTask?.taskId);
  });

  it('consumes buffered signals oldest first, one per waiting node', async () => {
    const h = new Harness([task('a'), waitFor('e', { event: 'go' }), waitFor('e2', { event: 'go' })], [edge('a', 'e'), edge('e', 'e2')]);
    await h.start();
    await h.signal('go', { n: 1 });
    await h.signal('go', { n: 2 });
    const tr = await h.complete('a');
    expect(actionsOf(tr, 'ConsumeSignal').map((c) => c.signalId)).toEqual(['s1', 's2']);
    expect(h.saved.get('e')).toEqual({ n: 1 });
    expect(h.saved.get('e2')).toEqual({ n: 2 });
  });

  it('never hands one buffered signal to two nodes, even when the Store ignores skip', async () => {
    const h = new Harness([task('a'), waitFor('e', { event: 'go' }), waitFor('e2', { event: 'go' })], [edge('a', 'e'), edge('e', 'e2')]);
    h.ignoreSignalSkip = true;
    await h.start();
    await h.signal('go', { n: 1 });
    await h.signal('go', { n: 2 });
    const tr = await h.complete('a');
    expect(actionsOf(tr, 'ConsumeSignal').map((c) => c.signalId)).toEqual(['s1']);
    expect(h.node('e2').status).toBe(TaskStatus.Waiting); // parks rather than reuse s1
  });

  it('gives a signal to the oldest waiter (smallest task id), not the first node id or map order', async () => {
    const h = new Harness([fork('f'), waitFor('b', { event: 'go' }), waitFor('a', { event: 'go' })], [edge('f', 'b'), edge('f', 'a')]);
    h.nextIds = ['t001', 't900', 't100']; // b is reached first but gets the younger id
    await h.start();
    const first = await h.signal('go', { who: 1 });
    expect(actionsOf(first, 'ResolveWait')[0]).toMatchObject({ nodeId: 'a', taskId: 't100' });
    const second = await h.signal('go', { who: 2 });
    expect(actionsOf(second, 'ResolveWait')[0]).toMatchObject({ nodeId: 'b', taskId: 't900' });
    expect(finished(second)?.status).toBe(RunStatus.Succeeded);
  });

  it('treats a missing or null payload as {}', async () => {
    const h = new Harness([waitFor('e', { event: 'go' })], []);
    await h.start();
    const tr = await h.signal('go');
    expect(actionsOf(tr, 'ResolveWait')[0].output).toEqual({});
  });

  it('fails the node when the timeout fires first', async () => {
    const h = new Harness([waitFor('e', { event: 'go', timeout_seconds: 60 }), task('b')], [edge('e', 'b')]);
    const parked = await h.start();
    expect(actionsOf(parked, 'CreateTask')[0].wakeAt).toEqual(at(h, 60));

    h.advance(60);
    const tr = await h.fireTimer('e');
    expect(actionsOf(tr, 'ResolveWait')[0]).toMatchObject({ status: TaskStatus.Failed, reason: 'timed out waiting for event "go"' });
    expect(dispatched(tr)).toEqual([]);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);

    // The run is over: a late signal is refused.
    await expect(h.signal('go')).rejects.toMatchObject({ code: 'RUN_FINISHED' });
  });

  it('ignores the timeout of a node whose signal already arrived', async () => {
    const h = new Harness([waitFor('e', { event: 'go', timeout_seconds: 60 }), task('b')], [edge('e', 'b')]);
    await h.start();
    await h.signal('go');
    const late = await h.fireTimer('e');
    expect(late.ignored).toBeTruthy();
    expect(h.node('e').status).toBe(TaskStatus.Completed);
  });

  it('refuses a signal without a name and a signal to a finished run', async () => {
    const h = new Harness([task('a')], []);
    await h.start();
    const noName = await h.signal('').catch((e: unknown) => e);
    expect(noName).toBeInstanceOf(MachineError);
    expect(noName).toMatchObject({ code: 'INVALID_REQUEST' });

    await h.complete('a');
    expect(h.run.status).toBe(RunStatus.Succeeded);
    const done = await h.signal('go').catch((e: unknown) => e);
    expect(done).toMatchObject({ code: 'RUN_FINISHED', message: 'run run-1 is SUCCEEDED: it waits for no signal any more' });
    expect(h.signals).toEqual([]);
  });

  it('fails a WAIT_FOR_EVENT whose templated timeout is beyond a year', async () => {
    const h = new Harness([waitFor('e', { event: 'go', timeout_seconds: '{{input.t}}' })], [], { input: { t: 1e12 } });
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({
      status: TaskStatus.Failed,
      error: 'timeout_seconds: must be at most 31536000 seconds (365 days), got 1000000000000',
    });
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('fails a WAIT_FOR_EVENT whose resolved event name the Store could not look up, without asking it', async () => {
    const h = new Harness([waitFor('e', { event: "{{'a\\u0000b'}}" })], []);
    h.storeDown = true; // a lookup would be a transient StoreError, retried forever
    const tr = await h.start();
    const t = actionsOf(tr, 'CreateTask')[0];
    expect(t).toMatchObject({ status: TaskStatus.Failed, error: 'event name is not storable: NUL character' });
    expect(t.input).toBeUndefined();
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('fails a WAIT_FOR_EVENT whose resolved event name is longer than 1024 characters', async () => {
    const h = new Harness([waitFor('e', { event: '{{input.name}}' })], [], { input: { name: 'x'.repeat(1025) } });
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Failed, error: 'event name is longer than 1024 characters' });
  });

  it('refuses a signal whose name cannot be stored', async () => {
    const h = new Harness([waitFor('e', { event: 'go' })], []);
    await h.start();
    await expect(h.signal('a\u0000b')).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: 'event name is not storable: NUL character' });
    expect(h.signals).toEqual([]);
  });

  it('fails a WAIT_FOR_EVENT without an event name', async () => {
    const h = new Harness([waitFor('e', { event: '' })], []);
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Failed, error: 'WAIT_FOR_EVENT requires spec.event' });
  });
});

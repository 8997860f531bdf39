import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus, type JsonValue } from '../model/workflow-types.js';
import { MachineError } from './errors.js';
import { actionsOf, created, dispatched, edge, finished, fork, Harness, task, types, wait, waitFor } from './testing/harness.js';
import { parseSecondsMs } from './waits.js';

const at = (h: Harness, seconds: number): Date => new Date(h.now.getTime() + seconds * 1000);

describe('WAIT', () => {
  it('parks for a duration, then completes on its timer and routing continues', async () => {
    const h = new Harness([task('a'), wait('w', { duration_seconds: 30 }), task('b', { woke: '{{tasks.w.output.woke_at}}' })], [
      edge('a', 'w'),
      edge('w', 'b'),
    ]);
    await h.start();
    const parked = await h.complete('a');
    expect(actionsOf(parked, 'CreateTask')[0]).toMatchObject({ node: { node_id: 'w' }, status: TaskStatus.Waiting, wakeAt: at(h, 30) });
    expect(finished(parked)).toBeUndefined(); // a waiting node keeps the run active

    h.advance(30);
    const fired = await h.fireTimer('w');
    const wokeAt = { woke_at: '2030-01-01T00:00:30.000Z' };
    expect(actionsOf(fired, 'ResolveWait')[0]).toMatchObject({ nodeId: 'w', status: TaskStatus.Completed, output: wokeAt });
    expect(dispatched(fired)).toEqual(['b']);
    expect(actionsOf(fired, 'DispatchTask')[0].input).toEqual({ woke: '2030-01-01T00:00:30.000Z' });
  });

  it('takes a templated duration given as a string', async () => {
    const h = new Harness([wait('w', { duration_seconds: '{{input.delay}}' })], [], { input: { delay: 90 } });
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0].wakeAt).toEqual(at(h, 90));
  });

  it('parks until an RFC 3339 time', async () => {
    const h = new Harness([wait('w', { until: '2030-01-02T12:00:00+02:00' })], []);
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Waiting, wakeAt: new Date('2030-01-02T10:00:00Z') });
  });

  it('completes inline when the duration is zero or the time has passed', async () => {
    const specs: JsonValue[] = [{ duration_seconds: 0 }, { until: '2029-12-31T00:00:00Z' }];
    for (const spec of specs) {
      const h = new Harness([wait('w', spec), task('b')], [edge('w', 'b')]);
      const tr = await h.start();
      expect(created(tr, TaskStatus.Completed)).toEqual(['w']);
      expect(actionsOf(tr, 'CreateTask')[0].output).toEqual({ woke_at: '2030-01-01T00:00:00.000Z' });
      expect(dispatched(tr)).toEqual(['b']);
    }
  });

  it('fails the node when its resolved spec is too large to store, without storing it', async () => {
    const spec: Record<string, JsonValue> = {};
    for (let i = 0; i < 100; i++) spec[`k${i}`] = '{{input.s}}';
    const h = new Harness([wait('w', spec)], [], { input: { s: 'x'.repeat(1024 * 1024) } });
    const tr = await h.start();
    const t = actionsOf(tr, 'CreateTask')[0];
    expect(t).toMatchObject({ status: TaskStatus.Failed, error: expect.stringMatching(/^resolved input too large: 100(\.0)? MiB > 1 MiB$/) });
    expect(t.input).toBeUndefined();
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('fails the node when its resolved spec holds a NUL character', async () => {
    const h = new Harness([wait('w', { duration_seconds: 1, note: "{{'a\\u0000b'}}" })], []);
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Failed, error: 'input is not storable: NUL character at $.note' });
  });

  it('fails the node when its spec is malformed', async () => {
    const cases: Array<[JsonValue, RegExp]> = [
      [{}, /WAIT requires spec.duration_seconds or spec.until/],
      [{ until: 'tomorrow' }, /until must be an RFC 3339 time/],
      [{ duration_seconds: -5 }, /duration_seconds: must be a non-negative number, got -5/],
    ];
    for (const [spec, reason] of cases) {
      const h = new Harness([wait('w', spec)], []);
      const tr = await h.start();
      expect(actionsOf(tr, 'CreateTask')[0].status).toBe(TaskStatus.Failed);
      expect(actionsOf(tr, 'CreateTask')[0].error).toMatch(reason);
      expect(finished(tr)?.status).toBe(RunStatus.Failed);
    }
  });

  it('fails the node, instead of parking it for ever, when a templated wait resolves out of range', async () => {
    const cases: Array<[JsonValue, JsonValue, RegExp]> = [
      [{ duration_seconds: '{{input.v}}' }, 1e12, /^duration_seconds: must be at most 31536000 seconds \(365 days\), got 1000000000000$/],
      [{ duration_seconds: '{{input.v}}' }, '-3', /^duration_seconds: must be a non-negative number, got "-3"$/],
      [{ until: '{{input.v}}' }, '9999-12-31T23:59:59-23:00', /^until must not be later than 9999-12-31T23:59:59Z/],
      [{ until: '{{input.v}}' }, '2030-02-30T00:00:00Z', /^until must be an RFC 3339 time, got "2030-02-30T00:00:00Z"$/],
    ];
    for (const [spec, v, reason] of cases) {
      const h = new Harness([wait('w', spec), task('b')], [edge('w', 'b')], { input: { v } });
      const tr = await h.start();
      expect(actionsOf(tr, 'CreateTask')).toEqual([expect.objectContaining({ status: TaskStatus.Failed, error: expect.stringMatching(reason) })]);
      expect(finished(tr)?.status).toBe(RunStatus.Failed);
    }
  });

  it('still parks for exactly one year', async () => {
    const h = new Harness([wait('w', { duration_seconds: '{{input.v}}' })], [], { input: { v: 31_536_000 } });
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Waiting, wakeAt: at(h, 31_536_000) });
  });

  it('ignores a timer for a node that is no longer waiting, or for another task', async () => {
    const h = new Harness([wait('w', { duration_seconds: 10 }), task('b')], [edge('w', 'b')]);
    await h.start();
    const stranger = await h.apply({ type: 'TimerFired', taskId: 't999', nodeId: 'w' });
    expect(stranger.ignored).toMatch(/timer for w no longer pending/);

    await h.fireTimer('w');
    const again = await h.fireTimer('w');
    expect(again.ignored).toBeTruthy();
    expect(again.actions).toEqual([]);
    expect(h.tasks.get('b')?.status).toBe(TaskStatus.Pending);
  });
});

describe('WAIT_FOR_EVENT and signals', () => {
  it('resolves a waiting node with the signal payload', async () => {
    const h = new Harness(
      [waitFor('e', { event: 'approve-{{input.order_id}}' }), task('b', { by: '{{tasks.e.output.by}}' })],
      [edge('e', 'b')],
      { input: { order_id: 7 } },
    );
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
    expect(done).toMatchObject({ code: 'RUN_FINISHED', message: 'run is SUCCEEDED' });
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

describe('parseSecondsMs', () => {
  it('reads numbers and numeric strings as seconds and rejects the rest', () => {
    expect(parseSecondsMs(undefined)).toBe(0);
    expect(parseSecondsMs(null)).toBe(0);
    expect(parseSecondsMs(1.5)).toBe(1500);
    expect(parseSecondsMs('20')).toBe(20000);
    expect(() => parseSecondsMs('soon')).toThrow(/non-negative number/);
    expect(() => parseSecondsMs('')).toThrow(/non-negative number/);
    expect(() => parseSecondsMs(-1)).toThrow(/non-negative number/);
    expect(() => parseSecondsMs(true)).toThrow(/non-negative number/);
    expect(parseSecondsMs(31_536_000)).toBe(31_536_000_000);
    expect(() => parseSecondsMs(31_536_001)).toThrow(/at most 31536000 seconds/);
    expect(() => parseSecondsMs('1e400')).toThrow(/non-negative number/);
  });
});

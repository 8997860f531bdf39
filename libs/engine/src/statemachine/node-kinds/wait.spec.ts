import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus, type JsonValue } from '../../model/workflow-types.js';
import { actionsOf, created, dispatched, edge, finished, Harness, task, wait } from '../testing/harness.js';
import { parseSecondsMs } from './wait-spec.js';

const at = (h: Harness, seconds: number): Date => new Date(h.now.getTime() + seconds * 1000);

describe('WAIT', () => {
  it('parks for a duration, then completes on its timer and routing continues', async () => {
    const h = new Harness(
      [task('a'), wait('w', { duration_seconds: 30 }), task('b', { woke: '{{tasks.w.output.woke_at}}' })],
      [edge('a', 'w'), edge('w', 'b')],
    );
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

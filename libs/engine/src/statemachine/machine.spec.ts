import { describe, expect, it } from '@jest/globals';
import { RunStatus, TaskStatus } from '../model/workflow-types.js';
import { MachineError, StoreError } from './errors.js';
import { actionsOf, cond, created, dispatched, edge, finished, fork, Harness, sw, task, types, wait } from './testing/harness.js';

describe('stories', () => {
  it('fork/join waits for multi-node branches', async () => {
    // fork → a1 → a2 ─┐
    //      → b1 ──────┴→ join
    const h = new Harness(
      [fork('f'), task('a1'), task('a2'), task('b1'), task('join')],
      [edge('f', 'a1'), edge('a1', 'a2'), edge('f', 'b1'), edge('a2', 'join'), edge('b1', 'join')],
    );

    const tr = await h.start();
    expect(created(tr, TaskStatus.Completed)).toEqual(['f']); // fork completes inline
    expect(dispatched(tr)).toEqual(['a1', 'b1']);
    expect(dispatched(await h.complete('a1'))).toEqual(['a2']);
    expect(dispatched(await h.complete('b1'))).toEqual([]); // join waits for a2
    expect(dispatched(await h.complete('a2'))).toEqual(['join']);
    const last = await h.complete('join');
    expect(finished(last)?.status).toBe(RunStatus.Succeeded);
  });

  it('switch skips the untaken branch and reconverges', async () => {
    // p → s ─(n > 1)→ hi ─────────┐
    //       ─(n <= 1)→ lo → lo2 ──┴→ merge
    const h = new Harness(
      [task('p'), sw('s'), task('hi'), task('lo'), task('lo2'), task('merge')],
      [
        edge('p', 's'),
        cond('s', 'hi', '{{tasks.p.output.n > 1}}'),
        cond('s', 'lo', '{{tasks.p.output.n <= 1}}'),
        edge('lo', 'lo2'),
        edge('hi', 'merge'),
        edge('lo2', 'merge'),
      ],
    );

    await h.start();
    const tr = await h.complete('p', { n: 5 });
    expect(created(tr, TaskStatus.Completed)).toEqual(['s']);
    expect(dispatched(tr)).toEqual(['hi']);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['lo', 'lo2']);
    expect(h.node('s').branches).toEqual(['hi']);
    expect(h.run.nodes.has('merge')).toBe(false); // still waiting on hi
    expect(dispatched(await h.complete('hi'))).toEqual(['merge']);
  });

  it('a switch passes its predecessor output through', async () => {
    const h = new Harness([task('p'), sw('s'), task('x')], [edge('p', 's'), cond('s', 'x', '{{tasks.p.output.ok}}')]);
    await h.start();
    const tr = await h.complete('p', { ok: true, total: 3 });
    expect(actionsOf(tr, 'CreateTask').find((a) => a.node.node_id === 's')?.output).toEqual({ ok: true, total: 3 });
  });

  it('a join uses the recorded switch decision, never a re-evaluation', async () => {
    const h = new Harness(
      [fork('f'), sw('s'), task('slow'), task('x'), task('j')],
      [edge('f', 's'), edge('f', 'slow'), cond('s', 'x', '{{input.flag}}'), edge('x', 'j'), edge('slow', 'j')],
      { input: { flag: true } },
    );

    expect(dispatched(await h.start())).toEqual(['slow', 'x']);
    h.run.context.input = { flag: false }; // re-evaluation would now deselect x
    expect(dispatched(await h.complete('slow'))).toEqual([]);
    expect(dispatched(await h.complete('x'))).toEqual(['j']);
  });

  it('a node fed directly by a switch uses its recorded decision when it becomes ready later', async () => {
    // f → s ─(flag)→ j ←─ u ←(never)─ s2 ← t ← f
    const h = new Harness(
      [fork('f'), sw('s'), task('t'), sw('s2'), task('u'), task('j')],
      [edge('f', 's'), edge('f', 't'), cond('s', 'j', '{{input.flag}}'), edge('t', 's2'), cond('s2', 'u', '{{1 > 2}}'), edge('u', 'j')],
      { input: { flag: true } },
    );
    expect(dispatched(await h.start())).toEqual(['t']);
    expect(h.node('s').branches).toEqual(['j']);
    h.run.context.input = { flag: false }; // re-evaluation would now skip j
    const tr = await h.complete('t');
    expect(created(tr, TaskStatus.Skipped)).toEqual(['u']);
    expect(dispatched(tr)).toEqual(['j']);
  });

  it('falls back to evaluating the conditions when a switch decision was never recorded', async () => {
    const h = new Harness(
      [fork('f'), sw('s'), task('slow'), task('x'), task('j')],
      [edge('f', 's'), edge('f', 'slow'), cond('s', 'x', '{{input.flag}}'), edge('x', 'j'), edge('slow', 'j')],
      { input: { flag: true } },
    );
    await h.start();
    h.node('s').branches = undefined; // a SWITCH task stored without its decision
    await h.complete('slow');
    expect(dispatched(await h.complete('x'))).toEqual(['j']);
  });

  it('loads outputs only when referenced', async () => {
    const h = new Harness([task('a'), task('b'), task('c', { url: '{{tasks.a.output.url}}' })], [edge('a', 'b'), edge('b', 'c')]);

    await h.start();
    await h.complete('a', { url: 'http://x' });
    h.loads = [];
    const tr = await h.complete('b', { huge: true });

    expect(h.loads).toEqual([['a']]);
    expect(actionsOf(tr, 'DispatchTask')[0].input).toEqual({ url: 'http://x' });
  });

  it('loads every completed output when task access is dynamic', async () => {
    const h = new Harness([task('a'), task('b'), task('c', { v: '{{tasks[input.key].output.v}}' })], [edge('a', 'b'), edge('b', 'c')], { input: { key: 'a' } });
    await h.start();
    await h.complete('a', { v: 1 });
    h.loads = [];
    const tr = await h.complete('b', { v: 2 });
    // b's output is already cached by advanceFrom; a must come from the Store.
    expect(h.loads).toEqual([['a']]);
    expect(actionsOf(tr, 'DispatchTask')[0].input).toEqual({ v: 1 });
  });

  it('ignores stale and duplicate reports', async () => {
    const h = new Harness([task('a'), task('b')], [edge('a', 'b')]);
    await h.start();
    const taskId = h.node('a').taskId;

    const otherAttempt = await h.apply({ type: 'NodeCompleted', taskId, nodeId: 'a', attempt: 3, output: {} });
    expect(otherAttempt.ignored).toBeTruthy();
    expect(otherAttempt.actions).toEqual([]);
    const otherTask = await h.apply({ type: 'NodeCompleted', taskId: 'other', nodeId: 'a', attempt: 0, output: {} });
    expect(otherTask.ignored).toBeTruthy();

    await h.complete('a');
    const dup = await h.apply({ type: 'NodeCompleted', taskId, nodeId: 'a', attempt: 0, output: {} });
    expect(dup.ignored).toMatch(/stale or duplicate completion of a attempt 0/);
    expect(dup.actions).toEqual([]);
    const lateFailure = await h.apply({ type: 'NodeFailed', taskId, nodeId: 'a', attempt: 0, error: 'late' });
    expect(lateFailure.ignored).toBeTruthy();
    expect(h.node('a').status).toBe(TaskStatus.Completed);
  });
});

describe('task lifecycle', () => {
  it('starts at the entry node and dispatches attempt 0 with its resolved input, now', async () => {
    const h = new Harness([task('a', { url: 'https://x/{{input.id}}', n: '{{input.id}}' })], [], { input: { id: 7 } });
    const tr = await h.start();
    expect(types(tr)).toEqual(['CreateTask', 'DispatchTask']);
    const [c] = actionsOf(tr, 'CreateTask');
    const [d] = actionsOf(tr, 'DispatchTask');
    expect(c).toMatchObject({ taskId: 't001', status: TaskStatus.Pending, input: { url: 'https://x/7', n: 7 } });
    expect(d).toMatchObject({ taskId: 't001', attempt: 0, input: { url: 'https://x/7', n: 7 } });
    expect(d.notBefore).toEqual(h.now);
  });

  it('retries with backoff, fences the old attempt, then fails for good', async () => {
    const h = new Harness([task('a', {}, { retry: { max_attempts: 3, backoff_seconds: 2 } }), task('b')], [edge('a', 'b')]);
    await h.start();
    const t0 = h.now.getTime();

    const r1 = await h.fail('a', 'HTTP 503');
    expect(actionsOf(r1, 'RetryTask')).toEqual([
      { type: 'RetryTask', taskId: 't001', nodeId: 'a', attempt: 0, reason: 'HTTP 503', notBefore: new Date(t0 + 2000) },
    ]);
    expect(h.node('a')).toMatchObject({ taskId: 't001', attempt: 1, status: TaskStatus.Pending });
    expect(finished(r1)).toBeUndefined();

    // A late report for attempt 0 is stale now.
    expect((await h.apply({ type: 'NodeCompleted', taskId: 't001', nodeId: 'a', attempt: 0, output: {} })).ignored).toBeTruthy();

    h.advance(2);
    const r2 = await h.fail('a', 'HTTP 503');
    expect(actionsOf(r2, 'RetryTask')[0]).toMatchObject({ attempt: 1, notBefore: new Date(t0 + 2000 + 4000) });

    h.advance(4);
    const r3 = await h.fail('a', 'HTTP 500');
    expect(types(r3)).toEqual(['FailTask', 'FinishRun']);
    expect(actionsOf(r3, 'FailTask')[0]).toMatchObject({ attempt: 2, reason: 'HTTP 500' });
    expect(finished(r3)).toMatchObject({ status: RunStatus.Failed, reason: 'node a failed: HTTP 500' });
    expect(h.run.nodes.has('b')).toBe(false);
  });

  it('continues normally when a retried attempt succeeds', async () => {
    const h = new Harness([task('a', {}, { retry: { max_attempts: 2 } }), task('b')], [edge('a', 'b')]);
    await h.start();
    const r = await h.fail('a');
    expect(actionsOf(r, 'RetryTask')[0].notBefore).toEqual(h.now); // no backoff configured
    expect(dispatched(await h.complete('a', { ok: 1 }))).toEqual(['b']);
  });

  it('fails for good at once when the worker says no retry can fix the failure', async () => {
    const h = new Harness([task('a', {}, { retry: { max_attempts: 5, backoff_seconds: 1 } })], []);
    await h.start();
    const tr = await h.apply({ type: 'NodeFailed', taskId: 't001', nodeId: 'a', attempt: 0, error: 'bad spec', retryable: false });
    expect(types(tr)).toEqual(['FailTask', 'FinishRun']);
  });

  it('fails the run only after a still-running branch settles', async () => {
    const h = new Harness([fork('f'), task('a'), task('b'), task('j')], [edge('f', 'a'), edge('f', 'b'), edge('a', 'j'), edge('b', 'j')]);
    await h.start();
    const fa = await h.fail('a');
    expect(types(fa)).toEqual(['FailTask']); // b still running: no FinishRun yet
    expect(h.run.status).toBe(RunStatus.Running);

    const cb = await h.complete('b');
    expect(dispatched(cb)).toEqual([]); // a failed edge stays unresolved: j never runs
    expect(finished(cb)).toMatchObject({ status: RunStatus.Failed, reason: 'node a failed: boom' });
    expect(h.run.nodes.has('j')).toBe(false);
  });

  it('records a node whose input cannot be resolved as FAILED and fails the run', async () => {
    const h = new Harness([task('a', { url: '{{input.missing.deeper}}' })], []);
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Failed });
    expect(actionsOf(tr, 'CreateTask')[0].error).toMatch(/CEL resolution for node a: .*input\.missing\.deeper.*No such key: missing/);
    expect(dispatched(tr)).toEqual([]);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('starts at a given start node and refuses an unknown one', async () => {
    const h = new Harness([task('a'), task('b')], [edge('a', 'b')]);
    await expect(h.start('nope')).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/start node nope not found/) });
    expect(dispatched(await h.start('b'))).toEqual(['b']);
  });

  it('ignores a second RunStarted', async () => {
    const h = new Harness([task('a')], []);
    await h.start();
    const again = await h.start();
    expect(again.ignored).toMatch(/already started/);
    expect(again.actions).toEqual([]);
  });

  it('refuses a start whose routing fails, persisting nothing', async () => {
    const h = new Harness([sw('s'), task('x')], [cond('s', 'x', '{{input.nope > 1}}')]);
    const err = await h.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MachineError);
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/switch s: condition eval for edge s→x/) });
    expect(h.run.nodes.size).toBe(0);
  });

  it('a switch with no selected branch skips them all and the run succeeds', async () => {
    const h = new Harness(
      [task('p'), sw('s'), task('a'), task('b')],
      [edge('p', 's'), cond('s', 'a', '{{tasks.p.output.n > 10}}'), cond('s', 'b', '{{tasks.p.output.n > 20}}')],
    );
    await h.start();
    const tr = await h.complete('p', { n: 1 });
    expect(h.node('s').branches).toEqual([]);
    expect(created(tr, TaskStatus.Skipped)).toEqual(['a', 'b']);
    expect(finished(tr)?.status).toBe(RunStatus.Succeeded);
  });

  it('fails the run with a reason when a switch condition is broken', async () => {
    const h = new Harness(
      [task('p'), sw('s'), task('x'), task('other')],
      [edge('p', 'other'), edge('p', 's'), cond('s', 'x', '{{tasks.p.output.missing.deeper}}')],
    );
    await h.start();
    const tr = await h.complete('p', { n: 1 });
    expect(dispatched(tr)).toEqual(['other']);
    const fin = finished(tr);
    expect(fin?.status).toBe(RunStatus.Failed);
    expect(fin?.reason).toMatch(
      /^routing after node p failed: switch s: condition eval for edge s→x: failed to evaluate condition: cannot evaluate \{\{ tasks\.p\.output\.missing\.deeper \}\}: No such key: missing/,
    );
    expect(h.run.status).toBe(RunStatus.Failed);
    // The run is finished: a later report of a still-running task is recorded but schedules nothing.
    const late = await h.complete('other');
    expect(types(late)).toEqual(['CompleteTask']);
  });

  it('treats a Store error as transient: nothing is emitted and the snapshot is unchanged', async () => {
    const h = new Harness([task('a'), task('b'), task('c', { url: '{{tasks.a.output.url}}' })], [edge('a', 'b'), edge('b', 'c')]);
    await h.start();
    await h.complete('a', { url: 'http://x' });
    const before = structuredClone([...h.run.nodes]);

    h.storeDown = true;
    const err = await h.complete('b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).message).toMatch(/connection lost/);
    expect([...h.run.nodes]).toEqual(before);
    expect(h.node('b').status).toBe(TaskStatus.Pending);
    expect(h.tasks.has('c')).toBe(false);

    h.storeDown = false; // the same event, redelivered, now goes through
    expect(dispatched(await h.complete('b'))).toEqual(['c']);
  });
});

describe('templates read the status of every reached node', () => {
  it('a node after a switch reads that the untaken branch was SKIPPED', async () => {
    // a → sw ─(small)→ cheap ──┐
    //         ─(large)→ costly ┴→ report
    const h = new Harness(
      [task('a'), sw('sw'), task('cheap'), task('costly'), task('report', { cheap: '{{tasks.cheap.status}}', costly: '{{tasks.costly.status}}' })],
      [
        edge('a', 'sw'),
        cond('sw', 'cheap', '{{tasks.a.output.total <= 1000}}'),
        cond('sw', 'costly', '{{tasks.a.output.total > 1000}}'),
        edge('cheap', 'report'),
        edge('costly', 'report'),
      ],
    );
    await h.start();
    await h.complete('a', { total: 5 });
    h.loads = [];
    const tr = await h.complete('cheap');
    expect(created(tr, TaskStatus.Failed)).toEqual([]);
    expect(actionsOf(tr, 'DispatchTask')[0]).toMatchObject({ node: { node_id: 'report' }, input: { cheap: 'COMPLETED', costly: 'SKIPPED' } });
    expect(h.loads).toEqual([]); // cheap's output came with its report; the skipped node has none
  });

  it('a parallel branch reads that a sibling FAILED, and why, without loading other outputs', async () => {
    // f → charge (fails)
    //   → notify → audit (reads charge's status and error)
    const h = new Harness(
      [fork('f'), task('charge'), task('notify'), task('audit', { charge: '{{tasks.charge.status}}', why: '{{tasks.charge.error}}' })],
      [edge('f', 'charge'), edge('f', 'notify'), edge('notify', 'audit')],
    );
    await h.start();
    await h.fail('charge', 'card declined');
    h.loads = [];
    const tr = await h.complete('notify', { sent: true });
    expect(actionsOf(tr, 'DispatchTask')[0]).toMatchObject({ node: { node_id: 'audit' }, input: { charge: 'FAILED', why: 'card declined' } });
    expect(h.loads).toEqual([]); // notify's output is not referenced; charge has none
  });

  it('a node started next to a wait reads that it is WAITING', async () => {
    const h = new Harness(
      [fork('f'), wait('nap', { duration_seconds: 60 }), task('b', { nap: '{{tasks.nap.status}}', has_error: '{{has(tasks.nap.error)}}' })],
      [edge('f', 'nap'), edge('f', 'b')],
    );
    const tr = await h.start();
    expect(actionsOf(tr, 'DispatchTask')[0].input).toEqual({ nap: 'WAITING', has_error: false });
  });
});

describe('values the machine computes are checked before they are stored', () => {
  it('fails a node whose resolved input PostgreSQL cannot hold, naming the JSON path', async () => {
    const h = new Harness([task('a', { k: "{{'a\\u0000b'}}", ok: 1 })], []);
    const tr = await h.start();
    const t = actionsOf(tr, 'CreateTask')[0];
    expect(t).toMatchObject({ status: TaskStatus.Failed, error: 'input is not storable: NUL character at $.k' });
    expect(t.input).toBeUndefined();
    expect(dispatched(tr)).toEqual([]);
    expect(finished(tr)?.status).toBe(RunStatus.Failed);
  });

  it('fails a node whose resolved input is over 1 MiB of JSON', async () => {
    const h = new Harness([task('a', { s: '{{input.s}}', t: '{{input.s}}' })], [], { input: { s: 'x'.repeat(600 * 1024) } });
    const tr = await h.start();
    expect(actionsOf(tr, 'CreateTask')[0]).toMatchObject({ status: TaskStatus.Failed, error: 'resolved input too large: 1.2 MiB > 1 MiB' });
  });

  it('fails the run when the output template resolves to something PostgreSQL cannot hold', async () => {
    const h = new Harness([task('a')], [], { output: { x: "{{'a\\u0000b'}}" } });
    await h.start();
    const tr = await h.complete('a');
    expect(finished(tr)).toEqual({ type: 'FinishRun', status: RunStatus.Failed, reason: 'run output is not storable: NUL character at $.x' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository, sql, TransientDbError, withTenant } from '@weft/persistence';
import { WeftError } from '@weft/engine';
import { RunCoordinator, type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { createTenant, def, edge, fork, http, join, sw, wait, waitFor } from '../support/builders.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 20 });
});
afterAll(async () => {
  await db?.drop();
});

function setup(opts: RunCoordinatorOptions = {}) {
  return coordinatorHarness(db.ds, opts);
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e) => (e instanceof WeftError ? e.code : String(e)),
  );

describe('startRun', () => {
  it('creates the run, its first tasks, outbox rows and one history record', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a', { url: '{{input.base}}/a' }), http('b')], [edge('a', 'b')]), { input: { base: 'http://x' } });

    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'RUNNING', version: 1, input: { base: 'http://x' }, config: {}, eventSeq: 1 });
    const tasks = await h.tasks(runId);
    expect(Object.keys(tasks)).toEqual(['a']);
    expect(tasks.a).toMatchObject({ status: 'PENDING', attempt: 0, queue: 'http', nodeType: 'HTTP', input: { url: 'http://x/a' } });

    expect(h.dispatcher.jobs).toEqual([
      {
        tenantId: h.tenantId,
        runId,
        taskId: tasks.a!.id,
        nodeId: 'a',
        nodeType: 'HTTP',
        attempt: 0,
        queue: 'http',
        input: { url: 'http://x/a' },
        notBefore: h.clock.now().getTime(),
        // The run's span (a trace of its own: started without a caller's): its attempts join it.
        traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
      },
    ]);
    const outbox = await h.outbox(runId);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ task_id: tasks.a!.id, attempt: 0, queue: 'http' });
    expect(outbox[0]!.enqueued_at).not.toBeNull();

    const events = await h.events(runId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ seq: 1, type: 'RunStarted', ignored: null, error: null });
    expect(events[0]!.actions).toEqual([
      { type: 'CreateTask', nodeId: 'a', taskId: tasks.a!.id, status: 'PENDING' },
      { type: 'DispatchTask', nodeId: 'a', taskId: tasks.a!.id, attempt: 0, queue: 'http', notBefore: h.clock.now().toISOString() },
    ]);
    expect(h.publisher.updates).toEqual([{ tenantId: h.tenantId, runId, status: 'RUNNING', seq: 1 }]);
  });

  it('routes CODE nodes to their runtime queue and carries the runtime', async () => {
    const h = await setup();
    await h.start(def([{ node_id: 'c', type: 'CODE', runtime: 'python', spec: { code: 'def handler(i): return i' } }]));
    expect(h.dispatcher.last('c')).toMatchObject({ queue: 'python', runtime: 'python', nodeType: 'CODE', input: { code: 'def handler(i): return i' } });
  });

  it('returns the existing run for a repeated idempotency key, also under concurrent duplicates', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(def([http('a')]));
    const first = await h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'k1' });
    expect(first.created).toBe(true);
    expect(await h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'k1' })).toEqual({ runId: first.runId, created: false });

    const racing = await Promise.all(Array.from({ length: 8 }, () => h.coordinator.runs.startRun(h.tenantId, { workflowId, idempotencyKey: 'k2' })));
    expect(racing.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(racing.map((r) => r.runId)).size).toBe(1);
    const count = await withTenant(db.ds, h.tenantId, (m) =>
      sql<{ n: number }>(m, `SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND idempotency_key = 'k2'`, [h.tenantId]),
    );
    expect(count.rows[0]!.n).toBe(1);
    expect(h.dispatcher.jobs).toHaveLength(2);
  });

  it('rejects unknown workflows, versions and start nodes without leaving a run', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(def([http('a')]));
    expect(await code(h.coordinator.runs.startRun(h.tenantId, { workflowId: 'nope' }))).toBe('NOT_FOUND');
    expect(await code(h.coordinator.runs.startRun(h.tenantId, { workflowId, version: 9 }))).toBe('NOT_FOUND');
    expect(await code(h.coordinator.runs.startRun(h.tenantId, { workflowId, startNodeId: 'ghost' }))).toBe('BAD_USER_INPUT');
    const other = await createTenant(db.ds, 'other');
    expect(await code(h.coordinator.runs.startRun(other.tenantId, { workflowId }))).toBe('NOT_FOUND');
    expect((await new RunRepository(db.ds).listRuns(h.tenantId)).edges).toEqual([]);
  });
});

describe('reports', () => {
  it('completes a chain to SUCCEEDED with the run output, resolving inputs from earlier outputs', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a'), http('b', { url: 'http://x/{{tasks.a.output.n}}' })], [edge('a', 'b')]));
    expect(await h.complete('a', { n: 7 })).toEqual({});
    expect(h.dispatcher.last('b').input).toEqual({ url: 'http://x/7' });
    h.clock.advance(1000);
    await h.complete('b', { done: true });

    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'SUCCEEDED', output: { b: { done: true } }, error: null, eventSeq: 3 });
    expect(run.finishedAt?.toISOString()).toBe(h.clock.now().toISOString());
    const tasks = await h.tasks(runId);
    expect(tasks.a).toMatchObject({ status: 'COMPLETED', output: { n: 7 } });
    expect(tasks.b).toMatchObject({ status: 'COMPLETED', output: { done: true } });
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted', 'NodeCompleted']);
    expect((await h.events(runId))[2]!.actions).toEqual([
      { type: 'CompleteTask', nodeId: 'b', taskId: tasks.b!.id, attempt: 0 },
      { type: 'FinishRun', status: 'SUCCEEDED' },
    ]);
    expect(h.publisher.updates.map((u) => [u.status, u.seq])).toEqual([
      ['RUNNING', 1],
      ['RUNNING', 2],
      ['SUCCEEDED', 3],
    ]);
  });

  it('fork/join: the join runs once every branch completed', async () => {
    const h = await setup();
    const runId = await h.start(
      def([fork('f'), http('x'), http('y'), join('j'), http('z')], [edge('f', 'x'), edge('f', 'y'), edge('x', 'j'), edge('y', 'j'), edge('j', 'z')]),
    );
    expect(await h.statuses(runId)).toEqual({ f: 'COMPLETED', x: 'PENDING', y: 'PENDING' });
    await h.complete('x');
    expect(await h.statuses(runId)).toEqual({ f: 'COMPLETED', x: 'COMPLETED', y: 'PENDING' });
    await h.complete('y');
    expect(await h.statuses(runId)).toEqual({ f: 'COMPLETED', x: 'COMPLETED', y: 'COMPLETED', j: 'COMPLETED', z: 'PENDING' });
    await h.complete('z', { ok: 1 });
    expect((await h.run(runId)).status).toBe('SUCCEEDED');
  });

  it('SWITCH records its decision and skips the untaken branch', async () => {
    const h = await setup();
    const runId = await h.start(
      def(
        [http('p'), sw('s'), http('hi'), http('lo'), http('lo2'), http('merge')],
        [
          edge('p', 's'),
          edge('s', 'hi', '{{tasks.p.output.n > 1}}'),
          edge('s', 'lo', '{{tasks.p.output.n <= 1}}'),
          edge('lo', 'lo2'),
          edge('hi', 'merge'),
          edge('lo2', 'merge'),
        ],
      ),
    );
    await h.complete('p', { n: 5 });
    const tasks = await h.tasks(runId);
    expect(tasks.s).toMatchObject({ status: 'COMPLETED', branches: ['hi'], output: { n: 5 } });
    expect(tasks.lo!.status).toBe('SKIPPED');
    expect(tasks.lo2!.status).toBe('SKIPPED');
    expect(tasks.hi!.status).toBe('PENDING');
    expect(tasks.merge).toBeUndefined();
    await h.complete('hi');
    expect((await h.tasks(runId)).merge!.status).toBe('PENDING');
  });

  it('retries with backoff: RetryTask bumps the attempt, and the backlog holds it until not_before', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a', undefined, { retry: { max_attempts: 3, backoff_seconds: 2 } })]));
    const t0 = h.clock.now().getTime();
    const taskId = h.dispatcher.last('a').taskId;

    expect(await h.fail('a', 'HTTP 503')).toEqual({});
    let task = (await h.tasks(runId)).a!;
    expect(task).toMatchObject({ id: taskId, status: 'QUEUED', attempt: 1, error: 'HTTP 503', input: { url: 'http://example.test/a' }, leaseExpiresAt: null });
    let outbox = await h.outbox(runId);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ task_id: taskId, attempt: 1, enqueued_at: null, hold_reason: 'BACKOFF' });
    expect(outbox[0]!.not_before.getTime()).toBe(t0 + 2000);
    expect(outbox[0]!.held_until!.getTime()).toBe(t0 + 2000);
    // Held: no job before the backoff has passed, whatever polls.
    expect(await h.coordinator.outbox.relay(10)).toBe(0);
    expect(h.dispatcher.forNode('a')).toHaveLength(1);
    h.clock.advance(2000);
    const published = h.publisher.updates.length;
    expect(await h.coordinator.outbox.relay(10)).toBe(1);
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'PENDING', attempt: 1 });
    // The task left its hold outside any event of the run: its watchers are told to read it again.
    expect(h.publisher.updates.slice(published)).toEqual([{ tenantId: h.tenantId, runId, status: 'RUNNING' }]);
    expect(h.dispatcher.last('a')).toMatchObject({ taskId, attempt: 1, notBefore: t0 + 2000, input: { url: 'http://example.test/a' } });
    const retried = (await h.events(runId))[1]!;
    expect(retried).toMatchObject({ type: 'NodeFailed', nodeId: 'a', attempt: 0, payload: { taskId, nodeId: 'a', attempt: 0, error: 'HTTP 503' } });
    expect(retried.actions).toEqual([{ type: 'RetryTask', nodeId: 'a', taskId, attempt: 0, reason: 'HTTP 503', notBefore: new Date(t0 + 2000).toISOString() }]);

    await h.fail('a', 'again');
    outbox = await h.outbox(runId);
    expect(outbox[0]!.attempt).toBe(2);
    expect(outbox[0]!.not_before.getTime()).toBe(t0 + 2000 + 4000);
    h.clock.advance(4000);
    expect(await h.coordinator.outbox.relay(10)).toBe(1);

    await h.fail('a', 'for good');
    task = (await h.tasks(runId)).a!;
    expect(task).toMatchObject({ status: 'FAILED', attempt: 2, error: 'for good' });
    expect(await h.run(runId)).toMatchObject({ status: 'FAILED', error: 'node a failed: for good' });
  });

  it('fails for good at once when the worker says the failure is not retryable', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a', undefined, { retry: { max_attempts: 3 } })]));
    const job = h.dispatcher.last('a');
    await h.coordinator.runs.reportFailed(h.tenantId, { runId, taskId: job.taskId, nodeId: 'a', attempt: 0, error: 'bad spec', retryable: false });
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'FAILED', attempt: 0, error: 'bad spec' });
    expect((await h.events(runId))[1]!.payload).toMatchObject({ retryable: false });
    expect((await h.run(runId)).status).toBe('FAILED');
  });

  it('ignores stale and duplicate reports but records them in the history', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a', undefined, { retry: { max_attempts: 2 } }), http('b')], [edge('a', 'b')]));
    const first = h.dispatcher.last('a');
    await h.fail('a');
    const stale = await h.complete('a', { late: true }, first);
    expect(stale.ignored).toMatch(/stale or duplicate completion of a attempt 0/);
    await h.complete('a');
    const dup = await h.complete('a', {}, h.dispatcher.forNode('a')[1]);
    expect(dup.ignored).toMatch(/stale or duplicate/);

    const events = await h.events(runId);
    expect(events.map((e) => [e.seq, e.type, e.ignored !== null])).toEqual([
      [1, 'RunStarted', false],
      [2, 'NodeFailed', false],
      [3, 'NodeCompleted', true],
      [4, 'NodeCompleted', false],
      [5, 'NodeCompleted', true],
    ]);
    expect(events[2]!.actions).toEqual([]);
    expect((await h.tasks(runId)).a!.output).toEqual({});
    expect(h.dispatcher.forNode('b')).toHaveLength(1);

    expect(
      await h.coordinator.runs.reportCompleted(h.tenantId, {
        runId: '0190d5b4-0000-7000-8000-000000000000',
        taskId: first.taskId,
        nodeId: 'a',
        attempt: 0,
        output: {},
      }),
    ).toEqual({
      ignored: 'run not found',
    });
    expect(await h.coordinator.runs.reportFailed(h.tenantId, { runId: 'garbage', taskId: first.taskId, nodeId: 'a', attempt: 0, error: 'x' })).toEqual({
      ignored: 'run not found',
    });
    // Another tenant's report for this run is "not found" too.
    const other = await createTenant(db.ds, 'other');
    expect((await h.coordinator.runs.reportCompleted(other.tenantId, { runId, taskId: first.taskId, nodeId: 'a', attempt: 0, output: {} })).ignored).toBe(
      'run not found',
    );
  });

  it('markRunning moves the current attempt to RUNNING and refuses stale ones', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a')]));
    const job = h.dispatcher.last('a');
    expect(await h.coordinator.leases.markRunning(h.tenantId, job.taskId, 1)).toBeNull();
    const first = await h.coordinator.leases.markRunning(h.tenantId, job.taskId, 0);
    expect(first).toEqual(expect.any(String)); // the lease token
    expect((await h.tasks(runId)).a!.status).toBe('RUNNING');
    const again = await h.coordinator.leases.markRunning(h.tenantId, job.taskId, 0); // redelivery: a new lease
    expect(again).toEqual(expect.any(String));
    expect(again).not.toBe(first);
    await h.complete('a');
    expect(await h.coordinator.leases.markRunning(h.tenantId, job.taskId, 0)).toBeNull();
    expect((await h.tasks(runId)).a!.status).toBe('COMPLETED');
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted']);
  });
});

describe('signals and timers', () => {
  it('buffers an early signal and consumes it when the node parks', async () => {
    const h = await setup();
    const runId = await h.start(
      def([http('a'), waitFor('w', 'approve'), http('b', { url: 'http://x/{{tasks.w.output.who}}' })], [edge('a', 'w'), edge('w', 'b')]),
    );
    expect(await h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'approve', payload: { who: 'ann' } })).toEqual({ delivered: false });
    expect(await h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'approve', payload: { who: 'bob' } })).toEqual({ delivered: false });
    await h.complete('a');

    const tasks = await h.tasks(runId);
    expect(tasks.w).toMatchObject({ status: 'COMPLETED', output: { who: 'ann' } });
    expect(h.dispatcher.last('b').input).toEqual({ url: 'http://x/ann' });
    const signals = await withTenant(db.ds, h.tenantId, (m) =>
      sql<{ name: string; payload: unknown; consumed_by_task_id: string | null }>(
        m,
        `SELECT name, payload, consumed_by_task_id FROM signals WHERE tenant_id = $1 AND run_id = $2 ORDER BY id`,
        [h.tenantId, runId],
      ),
    );
    expect(signals.rows).toEqual([
      { name: 'approve', payload: { who: 'ann' }, consumed_by_task_id: tasks.w!.id },
      { name: 'approve', payload: { who: 'bob' }, consumed_by_task_id: null },
    ]);
  });

  it('delivers a signal to a waiting node, and rejects signals it cannot take', async () => {
    const h = await setup();
    const runId = await h.start(def([waitFor('w', 'go'), http('b')], [edge('w', 'b')]));
    expect((await h.tasks(runId)).w).toMatchObject({ status: 'WAITING', awaitedSignal: 'go', wakeAt: null });
    expect(await code(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: '' }))).toBe('BAD_USER_INPUT');
    expect(await h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go' })).toEqual({ delivered: true });
    expect((await h.tasks(runId)).w).toMatchObject({ status: 'COMPLETED', output: {}, awaitedSignal: null });
    await h.complete('b');
    expect(await code(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go' }))).toBe('CONFLICT');
    expect(await code(h.coordinator.runs.sendSignal(h.tenantId, { runId: '0190d5b4-0000-7000-8000-000000000000', name: 'go' }))).toBe('NOT_FOUND');
    // Rejected signals write nothing: the history holds only what was applied.
    const events = await h.events(runId);
    expect(events.map((e) => e.type)).toEqual(['RunStarted', 'SignalReceived', 'NodeCompleted']);
    expect(events.filter((e) => e.error !== null)).toEqual([]);
  });

  it('fails a WAIT_FOR_EVENT on timeout through the due timers', async () => {
    const h = await setup();
    const runId = await h.start(def([waitFor('w', 'approve', 10), http('b')], [edge('w', 'b')]));
    const w = (await h.tasks(runId)).w!;
    expect(w.wakeAt?.getTime()).toBe(h.clock.now().getTime() + 10_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(0);
    h.clock.advance(10_001);
    expect(await h.coordinator.timers.fireDue(10)).toBe(1);
    expect((await h.tasks(runId)).w).toMatchObject({ status: 'FAILED', error: 'timed out waiting for event "approve"', wakeAt: null });
    expect(await h.run(runId)).toMatchObject({ status: 'FAILED' });
    expect(await h.coordinator.timers.fireDue(10)).toBe(0);
  });

  it('completes a WAIT when its timer fires and routes on', async () => {
    const h = await setup();
    const runId = await h.start(def([wait('w', 5), http('b')], [edge('w', 'b')]));
    h.clock.advance(5_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(1);
    expect((await h.tasks(runId)).w).toMatchObject({ status: 'COMPLETED', output: { woke_at: h.clock.now().toISOString() } });
    expect(h.dispatcher.forNode('b')).toHaveLength(1);
  });

  it('fires each due timer once when two schedulers poll concurrently', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(def([wait('w', 1), http('b')], [edge('w', 'b')]));
    const runIds: string[] = [];
    for (let i = 0; i < 12; i++) runIds.push((await h.coordinator.runs.startRun(h.tenantId, { workflowId })).runId);
    h.clock.advance(2_000);
    // Nothing claims these jobs either: the replica admits every attempt, as the harness does.
    const replica = new RunCoordinator(db.ds, h.dispatcher, h.publisher, { now: h.clock.now, logger: h.logger, dispatchWindowFloor: 1_000_000 });
    const [x, y] = await Promise.all([h.coordinator.timers.fireDue(100), replica.timers.fireDue(100)]);
    expect(x + y).toBe(12);
    for (const runId of runIds) {
      expect((await h.events(runId)).filter((e) => e.type === 'TimerFired')).toHaveLength(1);
    }
    expect(h.dispatcher.forNode('b')).toHaveLength(12);
  });

  it('clears the timer of a task nobody will resume, so it is not claimed again', async () => {
    const h = await setup();
    // The run fails (b's input cannot resolve) while w still waits: the timer is then pointless.
    const runId = await h.start(
      def(
        [fork('f'), wait('w', 5), http('a'), sw('s'), http('b')],
        [edge('f', 'w'), edge('f', 'a'), edge('a', 's'), edge('s', 'b', '{{tasks.a.output.missing.deeper}}')],
      ),
    );
    await h.complete('a', {});
    expect((await h.run(runId)).status).toBe('FAILED');
    h.clock.advance(6_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(1);
    expect((await h.events(runId)).at(-1)).toMatchObject({ type: 'TimerFired', ignored: 'timer for w no longer pending' });
    expect((await h.tasks(runId)).w).toMatchObject({ status: 'WAITING', wakeAt: null });
    h.clock.advance(120_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(0);
  });
});

describe('cancel and retry', () => {
  it('cancels every active task and the run; later reports are ignored', async () => {
    const h = await setup();
    const runId = await h.start(def([fork('f'), http('x'), waitFor('w', 'go', 60)], [edge('f', 'x'), edge('f', 'w')]));
    await h.coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'user said so' });
    expect(await h.run(runId)).toMatchObject({ status: 'CANCELLED', error: 'user said so' });
    expect(await h.statuses(runId)).toEqual({ f: 'COMPLETED', x: 'CANCELLED', w: 'CANCELLED' });
    expect((await h.tasks(runId)).w!.wakeAt).toBeNull();
    expect((await h.complete('x')).ignored).toMatch(/stale or duplicate/);
    expect(await code(h.coordinator.runs.cancelRun(h.tenantId, { runId }))).toBe('CONFLICT');
    expect(await code(h.coordinator.runs.cancelRun(h.tenantId, { runId: '0190d5b4-0000-7000-8000-000000000000' }))).toBe('NOT_FOUND');
    expect(h.publisher.updates.at(-1)).toMatchObject({ runId, status: 'CANCELLED' });
  });

  it('retries a failed run from a node, keeping earlier results', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a'), http('b', { url: 'http://x/{{tasks.a.output.n}}' }), http('c')], [edge('a', 'b'), edge('b', 'c')]));
    await h.complete('a', { n: 1 });
    const oldB = h.dispatcher.last('b');
    await h.fail('b');
    expect((await h.run(runId)).status).toBe('FAILED');

    expect(await code(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'ghost' }))).toBe('BAD_USER_INPUT');
    expect(await code(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'b', version: 7 }))).toBe('NOT_FOUND');
    await h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'b' });
    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'RUNNING', error: null, finishedAt: null, output: null });
    const tasks = await h.tasks(runId);
    expect(tasks.a).toMatchObject({ status: 'COMPLETED', output: { n: 1 } });
    expect(tasks.b).toMatchObject({ status: 'PENDING', attempt: 0, input: { url: 'http://x/1' } });
    expect(tasks.b!.id).not.toBe(oldB.taskId);
    expect(await code(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'a' }))).toBe('CONFLICT');

    expect((await h.complete('b', {}, oldB)).ignored).toMatch(/stale/);
    await h.complete('b');
    await h.complete('c', { fin: 1 });
    expect(await h.run(runId)).toMatchObject({ status: 'SUCCEEDED', output: { c: { fin: 1 } } });
    expect((await h.events(runId)).map((e) => e.type)).toContain('RunRetried');
  });

  it('retries on a new version with new input', async () => {
    const h = await setup();
    const { workflowId } = await h.publish(def([http('a')]), 'versioned');
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId, input: { v: 1 } });
    await h.complete('a');
    await h.publish(def([http('a', { url: 'http://v2/{{input.v}}' })]), 'versioned');
    await h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'a', version: 2, input: { v: 2 } });
    expect(await h.run(runId)).toMatchObject({ status: 'RUNNING', version: 2, input: { v: 2 } });
    expect(h.dispatcher.last('a').input).toEqual({ url: 'http://v2/2' });
  });
});

describe('concurrency', () => {
  it('serializes 20 parallel branch completions: the join is dispatched exactly once', async () => {
    const h = await setup();
    const branches = Array.from({ length: 20 }, (_, i) => `b${i}`);
    const runId = await h.start(
      def(
        [fork('f'), ...branches.map((b) => http(b)), join('j'), http('end')],
        [...branches.map((b) => edge('f', b)), ...branches.map((b) => edge(b, 'j')), edge('j', 'end')],
      ),
    );
    const jobs = branches.map((b) => h.dispatcher.last(b));
    const results = await Promise.all(jobs.map((job, i) => h.complete(job.nodeId, { i }, job)));
    expect(results.every((r) => r.ignored === undefined)).toBe(true);

    expect(h.dispatcher.forNode('end')).toHaveLength(1);
    const tasks = await h.tasks(runId);
    expect(tasks.j!.status).toBe('COMPLETED');
    expect(tasks.end!.status).toBe('PENDING');
    const events = await h.events(runId);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect((await h.run(runId)).eventSeq).toBe(21);
    // Duplicated deliveries of all of them change nothing.
    const dups = await Promise.all(jobs.map((job) => h.complete(job.nodeId, {}, job)));
    expect(dups.every((r) => r.ignored !== undefined)).toBe(true);
    expect(h.dispatcher.forNode('end')).toHaveLength(1);
  });
});

describe('transient failures', () => {
  it('retries the whole event, then gives up with TRANSIENT', async () => {
    let failures = 0;
    const { v7 } = await import('uuid');
    const h = await setup({
      newId: () => {
        if (failures > 0) {
          failures--;
          throw new TransientDbError('40001', 'could not serialize access');
        }
        return v7();
      },
    });
    const { workflowId } = await h.publish(def([http('a')]));
    // Two failures inside the transaction, then success: one run, one history record.
    failures = 2;
    const { runId } = await h.coordinator.runs.startRun(h.tenantId, { workflowId });
    expect((await h.events(runId)).map((e) => e.seq)).toEqual([1]);

    const stubborn = new RunCoordinator(db.ds, h.dispatcher, h.publisher, {
      maxEventRetries: 2,
      newId: () => {
        throw new TransientDbError('40P01', 'deadlock detected');
      },
    });
    const err = await stubborn.runs.startRun(h.tenantId, { workflowId }).catch((e) => e);
    expect(err).toBeInstanceOf(WeftError);
    expect((err as WeftError).code).toBe('TRANSIENT');
    expect((err as WeftError).message).toMatch(/after 3 attempt/);
  });
});

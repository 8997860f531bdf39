import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository } from '@weft/persistence';
import { WeftError } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { createTenant, def, edge, http, publishWorkflow, wait, waitFor } from '../support/builders.js';
import { act, backendKiller, countRows, eventually, installFault, sleep, startWorkerPlatform, stubServer, type Fault } from '../support/faults.js';

/**
 * PostgreSQL failing under the coordinator: a connection terminated
 * while an event's transaction is open, serialization failures and deadlocks, and a worker whose
 * report cannot be written for a while. Each time the event is retried as a whole and applied
 * once: one history row, one outbox row and one dispatch per task attempt, and a task's side
 * effect happens once. Faults are test-only triggers on `run_events` (the history row is the last
 * row an event writes, so everything before it was written and must roll back with it).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 6 });
});
afterAll(async () => {
  await db?.drop();
});

/** A harness on the database's clock (no fake clock: timers come due in real time). */
const setup = () => coordinatorHarness(db.ds, { now: undefined });

/** The event types of the run's history, in order. */
async function history(h: Awaited<ReturnType<typeof setup>>, runId: string) {
  return (await h.events(runId)).map((e) => (e.ignored ? `${e.type} (ignored)` : e.type));
}

/** A fault on the history row of the tenant's next event of `type`. */
function onEvent(tenantId: string, type: string, action: string, opts: { times?: number; forMs?: number } = {}): Promise<Fault> {
  return installFault(db.owner, { table: 'run_events', when: `NEW.tenant_id = '${tenantId}' AND NEW.type = '${type}'`, action, ...opts });
}

describe('a connection terminated while the event transaction is open', () => {
  it('retries each kind of event on a new connection and applies it once', async () => {
    const h = await setup();
    const killer = backendKiller(db.owner, db.name);
    try {
      // Every event of this run is interrupted once, holding its transaction open until the
      // owner's pg_terminate_backend kills its connection.
      const flow = def([waitFor('e', 'go'), http('a'), wait('w', 1), http('b')], [edge('e', 'a'), edge('a', 'w'), edge('w', 'b')]);
      const { workflowId } = await h.publish(flow);
      const step = async <T>(type: string, fn: () => Promise<T>): Promise<T> => {
        const fault = await onEvent(h.tenantId, type, act.sleep(10), { times: 1 });
        const before = killer.killed.length;
        try {
          const result = await fn();
          expect(killer.killed.length).toBe(before + 1);
          expect(await fault.hits()).toBe(2); // the killed attempt and the retry
          return result;
        } finally {
          await fault.remove();
        }
      };

      const { runId } = await step('RunStarted', () => h.coordinator.runs.startRun(h.tenantId, { workflowId }));
      expect(await countRows(db.ds, h.tenantId, 'runs')).toBe(1);
      expect((await h.tasks(runId)).e!.status).toBe('WAITING');

      expect(await step('SignalReceived', () => h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go', payload: { by: 'me' } }))).toEqual({
        delivered: true,
      });
      expect((await h.tasks(runId)).e).toMatchObject({ status: 'COMPLETED', output: { by: 'me' } });
      expect(h.dispatcher.forNode('a')).toHaveLength(1);

      expect(await step('NodeCompleted', () => h.complete('a', { n: 1 }))).toEqual({});
      expect((await h.tasks(runId)).w!.status).toBe('WAITING');

      await sleep(1100);
      expect(await step('TimerFired', () => h.coordinator.timers.fireDue(10))).toBe(1);

      expect(await history(h, runId)).toEqual(['RunStarted', 'SignalReceived', 'NodeCompleted', 'TimerFired']);
      expect(await h.statuses(runId)).toEqual({ e: 'COMPLETED', a: 'COMPLETED', w: 'COMPLETED', b: 'PENDING' });
      expect(h.dispatcher.jobs.map((j) => j.nodeId)).toEqual(['a', 'b']);
      expect((await h.outbox(runId)).map((o) => [o.attempt, o.enqueued_at !== null])).toEqual([
        [0, true],
        [0, true],
      ]);
      expect((await h.run(runId)).eventSeq).toBe(4);
      // The pool threw the dead connections away: the run goes on as usual.
      await h.complete('b', { done: true });
      expect((await h.run(runId)).status).toBe('SUCCEEDED');
    } finally {
      await killer.stop();
    }
  });
});

describe('serialization failures, deadlocks and lock timeouts', () => {
  it.each([
    ['a serialization failure', '40001'],
    ['a deadlock', '40P01'],
    ['a lock timeout', '55P03'],
  ])('retry the whole event after %s and apply it once', async (_what, sqlState) => {
    const h = await setup();
    const startFault = await onEvent(h.tenantId, 'RunStarted', act.raise(sqlState), { times: 3 });
    const runId = await h.start(def([http('a', undefined, { retry: { max_attempts: 2, backoff_seconds: 1 } }), http('b')], [edge('a', 'b')]));
    expect(await startFault.hits()).toBe(4);
    await startFault.remove();
    expect(await countRows(db.ds, h.tenantId, 'runs')).toBe(1);
    expect(await countRows(db.ds, h.tenantId, 'tasks')).toBe(1);

    const failFault = await onEvent(h.tenantId, 'NodeFailed', act.raise(sqlState), { times: 3 });
    expect(await h.fail('a', 'HTTP 503')).toEqual({});
    expect(await failFault.hits()).toBe(4);
    await failFault.remove();
    // The retry's 1 s backoff: then a poll (or this process's timer for the hold) admits it.
    for (let i = 0; i < 200 && !h.dispatcher.forNode('a').some((j) => j.attempt === 1); i++) {
      await new Promise((r) => setTimeout(r, 50));
      await h.coordinator.outbox.relay(10);
    }
    const doneFault = await onEvent(h.tenantId, 'NodeCompleted', act.raise(sqlState), { times: 3 });
    expect(await h.complete('a', { ok: true })).toEqual({});
    expect(await doneFault.hits()).toBe(4);
    await doneFault.remove();

    expect(await history(h, runId)).toEqual(['RunStarted', 'NodeFailed', 'NodeCompleted']);
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'COMPLETED', attempt: 1 });
    expect(h.dispatcher.jobs.map((j) => `${j.nodeId}:${j.attempt}`)).toEqual(['a:0', 'a:1', 'b:0']);
    expect((await h.outbox(runId)).map((o) => o.attempt)).toEqual([1, 0]);
  });

  it('gives up with TRANSIENT after its retries, having written nothing, and the same report applies once later', async () => {
    const h = await coordinatorHarness(db.ds, { now: undefined, maxEventRetries: 3 });
    const runId = await h.start(def([http('a'), http('b')], [edge('a', 'b')]));
    const fault = await onEvent(h.tenantId, 'NodeCompleted', act.raise('40001'));
    const err = await h.complete('a', { ok: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WeftError);
    expect(err).toMatchObject({ code: 'TRANSIENT', message: expect.stringMatching(/injected fault 40001/) });
    expect(await fault.hits()).toBe(4);
    expect(await history(h, runId)).toEqual(['RunStarted']);
    expect((await h.tasks(runId)).a!.status).toBe('PENDING');
    expect(h.dispatcher.forNode('b')).toEqual([]);

    await fault.remove();
    expect(await h.complete('a', { ok: true })).toEqual({});
    expect(await history(h, runId)).toEqual(['RunStarted', 'NodeCompleted']);
    expect(h.dispatcher.forNode('b')).toHaveLength(1);
  });
});

describe('a worker whose report cannot be written for a while', () => {
  let platform: Awaited<ReturnType<typeof startWorkerPlatform>>;
  let stub: Awaited<ReturnType<typeof stubServer>>;
  let killer: ReturnType<typeof backendKiller>;

  beforeAll(async () => {
    stub = await stubServer();
    platform = await startWorkerPlatform(db, { WEFT_QUEUES: 'http' });
    killer = backendKiller(db.owner, db.name);
  });
  afterAll(async () => {
    await killer?.stop();
    await platform?.close();
    await stub?.close();
  });

  it.each([
    ['fails with serialization failures', act.raise('40001')],
    ['has its connection killed', act.sleep(10)],
  ])('keeps retrying the report, not the task, while every write of it %s for 3 s', async (_what, action) => {
    const { tenantId } = await createTenant(db.ds);
    const { coordinator } = platform;
    const path = `/charge-${tenantId}`;
    const { workflowId } = await publishWorkflow(
      db.ds,
      tenantId,
      def(
        [
          http('charge', { url: `${stub.base}${path}`, method: 'POST', body: { amount: 42 } }, { retry: { max_attempts: 3, backoff_seconds: 1 } }),
          http('notify', { url: `${stub.base}/notify-${tenantId}` }),
        ],
        [edge('charge', 'notify')],
      ),
    );
    const fault = await onEvent(tenantId, 'NodeCompleted', action, { forMs: 3000 });
    try {
      const { runId } = await coordinator.runs.startRun(tenantId, { workflowId });
      const runs = new RunRepository(db.ds);
      const run = await eventually(
        'the run ends',
        async () => {
          const r = await runs.findRun(tenantId, runId);
          return r && r.status !== 'RUNNING' ? r : undefined;
        },
        15_000,
        50,
      );
      // The charge was made once; its report went through only after the window closed.
      expect(run.status).toBe('SUCCEEDED');
      expect(stub.count(path)).toBe(1);
      expect(stub.count(`/notify-${tenantId}`)).toBe(1);
      // The run finished after the window closed, on the database's clock (its writes' clock).
      const [finished] = (await db.owner.query(`SELECT finished_at >= $2::timestamptz AS after FROM runs WHERE id = $1`, [runId, fault.until])) as {
        after: boolean;
      }[];
      expect(finished).toEqual({ after: true });
      expect(await fault.hits()).toBeGreaterThan(2);
      const events = await runs.eventsOfRun(tenantId, runId);
      const charge = events.filter((e) => e.nodeId === 'charge');
      expect(charge.map((e) => [e.type, e.attempt, e.ignored])).toEqual([['NodeCompleted', 0, null]]);
      const tasks = await runs.tasksOfRun(tenantId, runId);
      expect(tasks.find((t) => t.nodeId === 'charge')).toMatchObject({ status: 'COMPLETED', attempt: 0, output: { ok: true } });
    } finally {
      await fault.remove();
    }
  });
});

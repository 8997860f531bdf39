import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RunRepository, type RunEventEntity } from '@weft/persistence';
import { jobId, WeftError, type JsonValue, type WorkflowNode } from '@weft/engine';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createTenant, def, edge, http, publishWorkflow, waitFor } from '../support/builders.js';
import { eventually, openReplica, sleep, startWorkerPlatform, stubServer, type Replica } from '../support/faults.js';

/**
 * Races that other workflow engines have shipped bugs for, each played on the
 * real PostgreSQL, Redis, worker and scheduler: cancel during a retry backoff, a signal meeting
 * its WAIT_FOR_EVENT timeout, a worker's success meeting the node's own timeout. In each, one
 * side wins, the other changes nothing, and the run ends in one consistent state.
 */

let db: TestDatabase;
let platform: Awaited<ReturnType<typeof startWorkerPlatform>>;
let stub: Awaited<ReturnType<typeof stubServer>>;
const runs = () => new RunRepository(db.ds);

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 12 });
  // `/slow/<ms>` answers after <ms>; `/flaky-*` fails its first request with 503 and answers the
  // later ones after 800 ms (so a retry that did start cannot finish within these races).
  stub = await stubServer((req, res, n) => {
    const path = req.url ?? '/';
    const slow = /^\/slow\/(\d+)/.exec(path);
    if (slow) return void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(`{"waited":${slow[1]}}`), Number(slow[1]));
    if (path.startsWith('/flaky') && n === 1) return void res.writeHead(503).end('try later');
    const delay = path.startsWith('/flaky') ? 800 : 0;
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), delay);
  });
  platform = await startWorkerPlatform(db, { WEFT_QUEUES: 'http,js' });
});
afterAll(async () => {
  await platform?.close();
  await stub?.close();
  await db?.drop();
});

async function runEnded(tenantId: string, runId: string, timeoutMs = 60_000) {
  return eventually(
    `run ${runId} ends`,
    async () => {
      const r = await runs().findRun(tenantId, runId);
      return r && r.status !== 'RUNNING' ? r : undefined;
    },
    timeoutMs,
    25,
  );
}

async function tasksOf(tenantId: string, runId: string) {
  return Object.fromEntries((await runs().tasksOfRun(tenantId, runId)).map((t) => [t.nodeId, t]));
}

const applied = (events: RunEventEntity[], type: string) => events.filter((e) => e.type === type && e.ignored === null && e.error === null);
const ignored = (events: RunEventEntity[], type: string) => events.filter((e) => e.type === type && e.ignored !== null);

describe('cancel while a task waits in retry backoff', () => {
  // Mirrors hatchet-dev/hatchet#4900 ("CANCEL_IN_PROGRESS leaves superseded retry-backoff work
  // runnable": the cancelled workflow's pending retry still ran and started its downstream task)
  // and restatedev/restate#3656 ("cancelling invocations in the Backing-Off state seems to have no
  // effect"). Here the retry is held in its queue's backlog until its backoff ends, after the cancel.
  const flow = (tenantId: string, backoffSeconds: number) =>
    def(
      [
        http('charge', { url: `${stub.base}/flaky-${tenantId}-{{input.i}}` }, { retry: { max_attempts: 3, backoff_seconds: backoffSeconds } }),
        http('ship', { url: `${stub.base}/ship-${tenantId}-{{input.i}}` }),
      ],
      [edge('charge', 'ship')],
    );

  it('the retry never runs, nothing downstream starts and the run ends CANCELLED', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, flow(tenantId, 1.5));
    const { runId } = await platform.coordinator.runs.startRun(tenantId, { workflowId, input: { i: 0 } });
    // The first attempt fails (503); attempt 1 waits 1.5 s in the backlog, with no job.
    const backoff = await eventually('charge waits in backoff', async () => {
      const t = (await tasksOf(tenantId, runId)).charge;
      return t?.attempt === 1 && t.status === 'QUEUED' ? t : undefined;
    });
    expect(await platform.queues.queue('http').getJob(jobId(backoff.id, 1))).toBeNull();

    await platform.coordinator.runs.cancelRun(tenantId, { runId, reason: 'customer changed their mind' });
    // Past the backoff, with the scheduler polling every 50 ms: the held row was dropped, never enqueued.
    await sleep(1_500 + 300);
    expect(await platform.queues.queue('http').getJob(jobId(backoff.id, 1))).toBeNull();

    expect(stub.count(`/flaky-${tenantId}-0`)).toBe(1);
    expect(stub.count(`/ship-${tenantId}-0`)).toBe(0);
    expect(await tasksOf(tenantId, runId)).toEqual({ charge: expect.objectContaining({ status: 'CANCELLED', attempt: 1 }) });
    expect(await runs().findRun(tenantId, runId)).toMatchObject({ status: 'CANCELLED' });
    expect((await runs().eventsOfRun(tenantId, runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeFailed', 'RunCancelled']);
  });

  it('when the cancel lands as the backoff ends, whatever started is dropped and nothing downstream starts (10 runs)', async () => {
    const { tenantId } = await createTenant(db.ds);
    const { workflowId } = await publishWorkflow(db.ds, tenantId, flow(tenantId, 0.4));
    const rounds = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const { runId } = await platform.coordinator.runs.startRun(tenantId, { workflowId, input: { i } });
        await eventually('charge fails once', async () => (await tasksOf(tenantId, runId)).charge?.attempt === 1);
        await sleep(150 + i * 25); // 150 … 375 ms after the failure was seen, in a 400 ms backoff
        await platform.coordinator.runs.cancelRun(tenantId, { runId });
        return runId;
      }),
    );
    await sleep(1200); // any retry that started has answered (800 ms) and reported by now
    for (const [i, runId] of rounds.entries()) {
      const events = await runs().eventsOfRun(tenantId, runId);
      const cancelledAt = events.findIndex((e) => e.type === 'RunCancelled');
      expect(cancelledAt).toBeGreaterThan(0);
      // Whatever the retry reported after the cancel changed nothing (ignored, or refused).
      expect(events.slice(cancelledAt + 1).filter((e) => e.ignored === null && e.error === null)).toEqual([]);
      expect(applied(events, 'NodeCompleted')).toEqual([]);
      expect(stub.count(`/ship-${tenantId}-${i}`)).toBe(0);
      expect(stub.count(`/flaky-${tenantId}-${i}`)).toBeLessThanOrEqual(2);
      expect(Object.keys(await tasksOf(tenantId, runId))).toEqual(['charge']);
      expect((await tasksOf(tenantId, runId)).charge!.status).toBe('CANCELLED');
      expect((await runs().findRun(tenantId, runId))!.status).toBe('CANCELLED');
    }
  });
});

describe('a signal and its WAIT_FOR_EVENT timeout arriving together', () => {
  // Mirrors temporalio/sdk-typescript#466 (a timer cancelled by a signal and fired in the same
  // activation broke the workflow) and the race noted in indeedeng/iwf#519 (a workflow timing out
  // at the same time as it receives its signal). Here the scheduler fires the timeouts while an
  // API replica delivers the signals, from separate pools — on a database of their own, so the
  // platform's scheduler (polling every 50 ms) does not take the timeouts first.
  let own: TestDatabase;
  let scheduler: Replica;
  let api: Replica;
  const runs = () => new RunRepository(own.ds);
  const tasksOf = async (tenantId: string, runId: string) => Object.fromEntries((await runs().tasksOfRun(tenantId, runId)).map((t) => [t.nodeId, t]));
  beforeAll(async () => {
    own = await createTestDatabase({ poolSize: 2 });
    [scheduler, api] = await Promise.all([openReplica(own.url, { poolSize: 2 }), openReplica(own.url, { poolSize: 6 })]);
    await Promise.all([scheduler.warm(2), api.warm(6)]);
  });
  afterAll(async () => {
    await Promise.all([scheduler?.close(), api?.close()]);
    await own?.drop();
  });

  it('exactly one wins each of 20 rounds, and the loser changes nothing', async () => {
    const { tenantId } = await createTenant(own.ds);
    const { workflowId } = await publishWorkflow(
      own.ds,
      tenantId,
      def([waitFor('approval', 'approve', 1), http('ship', { url: `${stub.base}/never` })], [edge('approval', 'ship')]),
    );
    const runIds: string[] = [];
    for (let i = 0; i < 20; i++) runIds.push((await api.coordinator.runs.startRun(tenantId, { workflowId, input: { i } })).runId);
    await sleep(1100); // every timeout is due

    // The scheduler fires the timeouts oldest first; the signals go out newest first, in parallel.
    const [fired, signals] = await Promise.all([
      scheduler.coordinator.timers.fireDue(100),
      Promise.all(
        [...runIds].reverse().map((runId) =>
          api.coordinator.runs.sendSignal(tenantId, { runId, name: 'approve', payload: { by: 'ops' } }).then(
            (r) => ({ runId, delivered: r.delivered }),
            (e: unknown) => ({ runId, refused: e instanceof WeftError ? e.code : String(e) }),
          ),
        ),
      ),
    ]);
    const outcomes = { signal: 0, timeout: 0, timersFired: 0 };
    for (const runId of runIds) {
      const events = await runs().eventsOfRun(tenantId, runId);
      const tasks = await tasksOf(tenantId, runId);
      const run = (await runs().findRun(tenantId, runId))!;
      const signal = signals.find((s) => s.runId === runId)!;
      const signalWon = applied(events, 'SignalReceived').length === 1;
      const timeoutWon = applied(events, 'TimerFired').length === 1;
      expect([signalWon, timeoutWon]).toContainEqual(true);
      expect(signalWon && timeoutWon).toBe(false);
      outcomes.timersFired += events.filter((e) => e.type === 'TimerFired').length;
      if (signalWon) {
        outcomes.signal++;
        // A timeout claimed before the signal landed was a no-op recorded as ignored (one claimed
        // after it found nothing to fire); either way it can never fire again.
        expect(signal).toEqual({ runId, delivered: true });
        expect(ignored(events, 'TimerFired').length).toBeLessThanOrEqual(1);
        expect(events.filter((e) => e.ignored === null).map((e) => e.type)).toEqual(['RunStarted', 'SignalReceived']);
        expect(tasks.approval).toMatchObject({ status: 'COMPLETED', output: { by: 'ops' }, wakeAt: null });
        // Dispatched: in its queue's backlog or admitted (nothing claims jobs of this queue here).
        expect(['QUEUED', 'PENDING']).toContain(tasks.ship!.status);
        expect(run.status).toBe('RUNNING');
      } else {
        outcomes.timeout++;
        // The late signal was refused (the run had ended) and wrote nothing.
        expect(signal).toEqual({ runId, refused: 'CONFLICT' });
        expect(events.map((e) => e.type)).toEqual(['RunStarted', 'TimerFired']);
        expect(tasks.approval).toMatchObject({ status: 'FAILED', error: 'timed out waiting for event "approve"' });
        expect(tasks.ship).toBeUndefined();
        expect(run.status).toBe('FAILED');
      }
      expect(await api.coordinator.runs.sendSignal(tenantId, { runId, name: 'approve' }).catch((e: WeftError) => e.code)).toEqual(
        signalWon ? { delivered: false } : 'CONFLICT',
      );
    }
    // Both sides won some rounds: the race was really run both ways.
    expect(outcomes.signal).toBeGreaterThan(0);
    expect(outcomes.timeout).toBeGreaterThan(0);
    expect(outcomes.timersFired).toBe(fired);
    // And some timeouts were claimed and fired while their signal landed: ignored, not applied.
    expect(outcomes.timersFired - outcomes.timeout).toBeGreaterThan(0);
  });
});

describe("a worker's success report racing the node's own timeout", () => {
  // Mirrors Netflix/conductor#1249 ("Workflow gets TIMED_OUT even after worker acknowledges with
  // SUCCESS") and conductor-oss/conductor#322 (a timed-out task's late update is dropped): the
  // node must end one way, and the run must agree with it.
  const jsSleep = (id: string, ms: number): WorkflowNode => ({
    node_id: id,
    type: 'CODE',
    runtime: 'js',
    spec: { code: 'async function handler(input) { await new Promise((r) => setTimeout(r, input.ms)); return { slept: input.ms }; }', ms, timeout_seconds: 1 },
  });

  it('a CODE or HTTP node finishing around its timeout_seconds ends once, and the run agrees', async () => {
    const { tenantId } = await createTenant(db.ds);
    // Well before the deadline a node must succeed, well after it must time out; around it, either.
    const cases: { node: WorkflowNode; ms: number }[] = [];
    for (const ms of [300, 700, 850, 950, 1000, 1050, 1150, 5000]) {
      cases.push({ node: jsSleep('work', ms), ms });
      cases.push({ node: http('work', { url: `${stub.base}/slow/${ms}`, timeout_seconds: 1 }), ms });
    }
    const started = await Promise.all(
      cases.map(async (c) => {
        const { workflowId } = await publishWorkflow(db.ds, tenantId, def([c.node]));
        return { ...c, runId: (await platform.coordinator.runs.startRun(tenantId, { workflowId })).runId };
      }),
    );
    const seen = { completed: 0, timedOut: 0 };
    for (const c of started) {
      const run = await runEnded(tenantId, c.runId);
      const work = (await tasksOf(tenantId, c.runId)).work!;
      const events = await runs().eventsOfRun(tenantId, c.runId);
      const reports = events.filter((e) => (e.type === 'NodeCompleted' || e.type === 'NodeFailed') && e.ignored === null);
      expect(reports).toHaveLength(1);
      if (reports[0]!.type === 'NodeCompleted') {
        seen.completed++;
        // Only well after the deadline must it time out: a loaded machine can fire the worker's
        // timeout timer late (seconds, at a load of 15 on 2 cores) while the node's own sleep ends on time.
        // (Nor is a case well before the deadline sure to succeed there: starting the sandbox or
        // the request can take the whole second.)
        expect(c.ms).toBeLessThan(5000);
        expect(run).toMatchObject({ status: 'SUCCEEDED', error: null });
        expect(work).toMatchObject({ status: 'COMPLETED', error: null });
        expect(run.output).toEqual({ work: work.output });
      } else {
        seen.timedOut++;
        expect(work).toMatchObject({ status: 'FAILED', output: null, error: expect.stringMatching(/timed out after 1s/) });
        expect(run).toMatchObject({ status: 'FAILED', output: null });
      }
    }
    // The 5 s cases always time out. That some case succeeds is likely but not sure: on a loaded
    // machine the whole second can go to starting sixteen executions at once.
    expect(seen.timedOut).toBeGreaterThanOrEqual(2);
  });

  it('a success and a timeout failure of one attempt reported at once from two workers: one applies, the other is ignored (20 rounds)', async () => {
    // Nothing claims the jobs of queue `parked`: every attempt is admitted however many wait. On
    // a database of its own, so the platform's scheduler (its window of a few unclaimed jobs
    // soon full) does not lease the backlog rows first and leave them unadmitted.
    const own = await createTestDatabase({ poolSize: 2 });
    const replica = () => openReplica(own.url, { poolSize: 3, dispatchWindowFloor: 1_000_000 });
    const [w1, w2] = await Promise.all([replica(), replica()]);
    const ownRuns = new RunRepository(own.ds);
    const tasksOf = async (tenantId: string, runId: string) => Object.fromEntries((await ownRuns.tasksOfRun(tenantId, runId)).map((t) => [t.nodeId, t]));
    try {
      const { tenantId } = await createTenant(own.ds);
      const node = http('work', { url: `${stub.base}/never` }, { queue: 'parked', retry: { max_attempts: 2, backoff_seconds: 60 } });
      const { workflowId } = await publishWorkflow(
        own.ds,
        tenantId,
        def([node, http('next', { url: `${stub.base}/never`, queue: 'parked' })], [edge('work', 'next')]),
      );
      const wins = { completed: 0, failed: 0 };
      for (let round = 0; round < 20; round++) {
        const { runId } = await w1.coordinator.runs.startRun(tenantId, { workflowId });
        const job = w1.dispatcher.last('work');
        const base = { runId, taskId: job.taskId, nodeId: 'work', attempt: 0 };
        const [done, failed] = await Promise.all([
          w1.coordinator.runs.reportCompleted(tenantId, { ...base, output: { round } as JsonValue }),
          w2.coordinator.runs.reportFailed(tenantId, { ...base, error: 'timed out after 1s' }),
        ]);
        expect([done.ignored === undefined, failed.ignored === undefined].filter(Boolean)).toHaveLength(1);
        const events = await ownRuns.eventsOfRun(tenantId, runId);
        const work = (await tasksOf(tenantId, runId)).work!;
        const next = (await tasksOf(tenantId, runId)).next;
        if (done.ignored === undefined) {
          wins.completed++;
          expect(failed.ignored).toBe('stale or duplicate failure of work attempt 0');
          expect(work).toMatchObject({ status: 'COMPLETED', attempt: 0, output: { round } });
          expect(['QUEUED', 'PENDING']).toContain(next?.status);
        } else {
          wins.failed++;
          // The failure took the attempt: attempt 1 waits in backoff in the backlog; the success of attempt 0 is stale.
          expect(done.ignored).toBe('stale or duplicate completion of work attempt 0');
          expect(work).toMatchObject({ status: 'QUEUED', attempt: 1, output: null, error: 'timed out after 1s' });
          expect(next).toBeUndefined();
        }
        expect(events.map((e) => [e.type, e.ignored === null])).toEqual(
          expect.arrayContaining([
            ['NodeCompleted', done.ignored === undefined],
            ['NodeFailed', failed.ignored === undefined],
          ]),
        );
        expect((await ownRuns.findRun(tenantId, runId))!.status).toBe('RUNNING');
      }
      expect(wins.completed + wins.failed).toBe(20);
    } finally {
      await Promise.all([w1.close(), w2.close()]);
      await own.drop();
    }
  });
});

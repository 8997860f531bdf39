import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mapDriverError, sql, withTenant } from '@weft/persistence';
import { WeftError } from '@weft/engine';
import { type RunCoordinatorOptions } from '@weft/engine/coordinator';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { coordinatorHarness } from '../support/coordinator-harness.js';
import { refusedTaskValues } from '../support/refused-values.js';
import { createTenant, def, edge, http, publishWorkflow, wait, waitFor } from '../support/builders.js';

/**
 * Values PostgreSQL cannot store (NUL characters, lone surrogates, oversized JSON) and commands
 * the machine rejects: a run must never stay RUNNING because a report cannot be written, and a
 * refused command must leave no trace.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function setup(opts: RunCoordinatorOptions = {}) {
  return coordinatorHarness(db.ds, opts);
}

/** The WeftError code and message a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string; problems?: unknown }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof WeftError) return { code: e.code, message: e.message, problems: e.problems };
    return { code: 'NOT A WEFT ERROR', message: String(e) };
  }
  throw new Error('expected a rejection');
}

/** Two attempts, the second due at once (so it is admitted from the backlog at once). */
const twoAttempts = (id: string) => http(id, undefined, { retry: { max_attempts: 2, backoff_seconds: 0 } });

describe('a worker output PostgreSQL cannot store', () => {
  it.each([
    ['a NUL character in a string', { s: 'a\u0000b' }, 'output is not storable: NUL character at $.s'],
    ['a NUL character in a key', { ok: 1, 'k\u0000': 1 }, 'output is not storable: NUL character in key at $["k\\u0000"]'],
    ['a lone surrogate', { list: [1, 'x\ud800'] }, 'output is not storable: lone surrogate U+D800 at $.list[1]'],
    ['a lone low surrogate deep down', { a: { b: [{ c: '\udc00' }] } }, 'output is not storable: lone surrogate U+DC00 at $.a.b[0].c'],
  ])('fails the attempt instead of sticking: %s', async (_what, output, reason) => {
    const h = await setup();
    const runId = await h.start(def([twoAttempts('a')]));
    expect(await h.complete('a', output)).toEqual({});
    // The attempt failed with the reason and the retry policy applied: attempt 1 is dispatched.
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'PENDING', attempt: 1, error: reason, output: null });
    expect(h.dispatcher.last('a').attempt).toBe(1);
    // The same output again exhausts the attempts: the run ends.
    expect(await h.complete('a', output)).toEqual({});
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'FAILED', attempt: 1, error: reason });
    expect(await h.run(runId)).toMatchObject({ status: 'FAILED', error: `node a failed: ${reason}` });
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeFailed', 'NodeFailed']);
  });

  it('fails an output over maxOutputBytes (default 1 MiB) with OUTPUT_TOO_LARGE', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a')]));
    await h.complete('a', { s: 'x'.repeat(Math.round(2.3 * 1024 * 1024)) });
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'FAILED', error: 'output too large: 2.3 MiB > 1 MiB (OUTPUT_TOO_LARGE)' });
    expect((await h.run(runId)).status).toBe('FAILED');

    const small = await setup({ maxOutputBytes: 1024 });
    const r2 = await small.start(def([http('a')]));
    await small.complete('a', { s: 'x'.repeat(2000) });
    expect((await small.tasks(r2)).a).toMatchObject({ status: 'FAILED', error: 'output too large: 2 KiB > 1 KiB (OUTPUT_TOO_LARGE)' });
    const r3 = await small.start(def([http('a')]));
    await small.complete('a', { s: 'x'.repeat(900) });
    expect((await small.tasks(r3)).a!.status).toBe('COMPLETED');
  });

  it('stores a failure text with NUL characters and lone surrogates sanitized, and cuts a huge one', async () => {
    const h = await setup();
    const runId = await h.start(def([twoAttempts('a')]));
    expect(await h.fail('a', 'bad\u0000byte and \ud800 half a pair, \ud83d\ude00 whole')).toEqual({});
    expect((await h.tasks(runId)).a).toMatchObject({ status: 'PENDING', attempt: 1, error: 'bad\ufffdbyte and \ufffd half a pair, \ud83d\ude00 whole' });
    await h.fail('a', `${'e'.repeat(100_000)}\u0000`);
    const a = (await h.tasks(runId)).a!;
    expect(a.status).toBe('FAILED');
    expect(a.error!.length).toBeLessThan(8300);
    expect(a.error).toMatch(/^e{8192}… \(truncated, 100001 chars\)$/);
    expect((await h.run(runId)).status).toBe('FAILED');
  });

  it('ignores a report whose attempt is no attempt number, without an error', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a')]));
    const job = h.dispatcher.last('a');
    for (const attempt of [2 ** 40, -1, 1.5, Number.NaN]) {
      expect(await h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: job.taskId, nodeId: 'a', attempt, output: {} })).toEqual({
        ignored: `invalid attempt ${attempt}`,
      });
    }
    expect(await h.coordinator.runs.reportCompleted(h.tenantId, { runId, taskId: job.taskId, nodeId: 'a\u0000', attempt: 0, output: {} })).toMatchObject({
      ignored: expect.stringMatching(/stale/),
    });
    expect(await h.coordinator.leases.markRunning(h.tenantId, job.taskId, 2 ** 40)).toBeNull();
    expect((await h.tasks(runId)).a!.status).toBe('PENDING');
  });
});

describe('user input PostgreSQL cannot store', () => {
  it('refuses a run input, config, idempotency key or start node it cannot store, naming the field and path', async () => {
    const h = await setup();
    const { workflowId } = await publishWorkflow(db.ds, h.tenantId, def([http('a')]));
    const start = (extra: object) => rejection(h.coordinator.runs.startRun(h.tenantId, { workflowId, ...extra }));
    expect(await start({ input: { a: { b: 'x\u0000' } } })).toEqual({
      code: 'BAD_USER_INPUT',
      message: 'input is not storable: NUL character at $.a.b',
      problems: [{ path: 'input.a.b', message: 'input is not storable: NUL character at $.a.b' }],
    });
    expect(await start({ config: ['\ud800'] })).toMatchObject({ code: 'BAD_USER_INPUT', message: 'config is not storable: lone surrogate U+D800 at $[0]' });
    expect(await start({ input: { 'two words\u0000': 1 } })).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'input is not storable: NUL character in key at $["two words\\u0000"]',
    });
    expect(await start({ input: { big: 'x'.repeat(1024 * 1024) } })).toMatchObject({ code: 'BAD_USER_INPUT', message: 'input too large: 1 MiB > 1 MiB' });
    expect(await start({ idempotencyKey: 'k\u0000' })).toMatchObject({ code: 'BAD_USER_INPUT', message: 'idempotencyKey is not storable: NUL character' });
    expect(await start({ idempotencyKey: 'k'.repeat(5000) })).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'idempotencyKey is longer than 1024 characters',
    });
    expect(await start({ startNodeId: 'a\u0000' })).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(await start({ version: 2 ** 40 })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await rejection(h.coordinator.runs.startRun(h.tenantId, { workflowId: 'wf\u0000' }))).toMatchObject({ code: 'NOT_FOUND' });
    const count = await withTenant(db.ds, h.tenantId, (m) => sql<{ n: string }>(m, `SELECT count(*) AS n FROM runs WHERE tenant_id = $1`, [h.tenantId]));
    expect(count.rows[0]!.n).toBe('0');
  });

  it('refuses a signal name or payload, a cancel reason and retry input it cannot store, writing nothing', async () => {
    const h = await setup();
    const runId = await h.start(def([waitFor('w', 'go'), http('b')], [edge('w', 'b')]));
    expect(await rejection(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go', payload: { x: 'a\u0000' } }))).toEqual({
      code: 'BAD_USER_INPUT',
      message: 'payload is not storable: NUL character at $.x',
      problems: [{ path: 'payload.x', message: 'payload is not storable: NUL character at $.x' }],
    });
    expect(await rejection(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go', payload: { ['\ud800']: 1 } }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'payload is not storable: lone surrogate U+D800 in key at $["\\ud800"]',
    });
    expect(await rejection(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'g\u0000o' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'name is not storable: NUL character',
    });
    expect(await rejection(h.coordinator.runs.cancelRun(h.tenantId, { runId, reason: 'why\u0000' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'reason is not storable: NUL character',
    });
    expect(await rejection(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'w', input: { s: '\u0000' } }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: 'input is not storable: NUL character at $.s',
    });
    expect(await rejection(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'w', version: 2 ** 40 }))).toMatchObject({ code: 'NOT_FOUND' });
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted']);
    expect(await h.signalCount(runId)).toBe(0);
    expect((await h.tasks(runId)).w!.status).toBe('WAITING');
    // A storable signal still goes through.
    expect(await h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go', payload: { x: 'fine \ud83d\ude00' } })).toEqual({ delivered: true });
  });
});

describe('values the database refuses although they passed the checks (INVALID_DATA)', () => {
  // The machine checks every value it computes (a template yielding a NUL character fails the
  // node), so a trigger plays a database refusing a task input that passed those checks.
  const POISON = { s: 'poison-22P05' };
  const refused = () => refusedTaskValues(db.owner, 'refuse_poison', 'input', POISON.s);
  beforeAll(async () => {
    await refused().install();
  });
  afterAll(async () => {
    await refused().remove();
  });

  it('maps SQLSTATE class 22 and 54 to INVALID_DATA, never transient', async () => {
    for (const code of ['22P05', '22P02', '22021', '22003', '22008', '54001']) {
      expect(mapDriverError(Object.assign(new Error('x'), { code }))).toMatchObject({ code: 'INVALID_DATA', sqlState: code });
    }
    const { tenantId } = await createTenant(db.ds);
    const err = await withTenant(db.ds, tenantId, (m) => sql(m, `SELECT $1::jsonb`, ['{"s":"a\\u0000b"}'])).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_DATA', sqlState: '22P05' });
    const text = await withTenant(db.ds, tenantId, (m) => sql(m, `SELECT $1::text`, ['a\u0000b'])).catch((e: unknown) => e);
    expect(text).toMatchObject({ code: 'INVALID_DATA', sqlState: '22021' });
  });

  it('applies a completion the database refuses once more as a failure of the same attempt', async () => {
    // The successor's input passes every check; only the database refuses it.
    const h = await setup();
    const runId = await h.start(def([twoAttempts('a'), http('b', POISON)], [edge('a', 'b')]));
    expect(await h.complete('a', { ok: true })).toEqual({});
    const a = (await h.tasks(runId)).a!;
    expect(a).toMatchObject({ status: 'PENDING', attempt: 1 });
    expect(a.error).toMatch(/^could not store the NodeCompleted of node a: .*\(INVALID_DATA\)$/);
    expect(await h.complete('a', { ok: true })).toEqual({});
    expect(await h.run(runId)).toMatchObject({ status: 'FAILED' });
    expect(Object.keys(await h.tasks(runId))).toEqual(['a']);
    expect(h.logger.warnings.join('\n')).toMatch(/applying it as a failure/);
  });

  it('fails the waiting task and the run when a timer the database refuses fires', async () => {
    const h = await setup();
    const runId = await h.start(def([wait('w', 1), http('b', POISON)], [edge('w', 'b')]));
    h.clock.advance(2000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(1);
    expect((await h.tasks(runId)).w).toMatchObject({
      status: 'FAILED',
      wakeAt: null,
      error: expect.stringMatching(/^could not store the TimerFired of node w: .*\(INVALID_DATA\)$/),
    });
    const run = await h.run(runId);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatch(/^could not store the TimerFired of node w/);
    expect((await h.events(runId)).at(-1)).toMatchObject({ type: 'TimerFired', error: expect.stringMatching(/INVALID_DATA/) });
    // Nothing left to fire.
    h.clock.advance(120_000);
    expect(await h.coordinator.timers.fireDue(10)).toBe(0);
  });

  it('refuses a signal whose delivery the database refuses, as BAD_USER_INPUT, writing nothing', async () => {
    const h = await setup();
    const runId = await h.start(def([waitFor('w', 'go'), http('b', POISON)], [edge('w', 'b')]));
    expect(await rejection(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/^the signal cannot be stored: /),
    });
    expect((await h.tasks(runId)).w!.status).toBe('WAITING');
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted']);
  });
});

describe('rejected commands write nothing', () => {
  it('leaves a finished run, its history and its signals untouched however many commands are refused', async () => {
    const h = await setup();
    const runId = await h.start(def([http('a')]));
    await h.complete('a', { done: true });
    const before = await h.run(runId);
    expect(before.status).toBe('SUCCEEDED');
    for (let i = 0; i < 25; i++) {
      expect((await rejection(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: 'go', payload: { i } }))).code).toBe('CONFLICT');
    }
    expect((await rejection(h.coordinator.runs.sendSignal(h.tenantId, { runId, name: '' }))).code).toBe('BAD_USER_INPUT');
    expect((await rejection(h.coordinator.runs.cancelRun(h.tenantId, { runId }))).code).toBe('CONFLICT');
    expect((await rejection(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'ghost' }))).code).toBe('BAD_USER_INPUT');
    const after = await h.run(runId);
    expect(after.eventSeq).toBe(before.eventSeq);
    expect(after.updatedAt).toEqual(before.updatedAt);
    expect((await h.events(runId)).map((e) => e.type)).toEqual(['RunStarted', 'NodeCompleted']);
    expect(await h.signalCount(runId)).toBe(0);
  });

  it('refuses a retry while tasks are active without a history row, but still records stale worker reports', async () => {
    const h = await setup();
    const runId = await h.start(def([twoAttempts('a')]));
    const first = h.dispatcher.last('a');
    expect((await rejection(h.coordinator.runs.retryRun(h.tenantId, { runId, fromNodeId: 'a' }))).code).toBe('CONFLICT');
    await h.fail('a', 'HTTP 503');
    expect((await h.complete('a', {}, first)).ignored).toMatch(/stale/);
    const events = await h.events(runId);
    expect(events.map((e) => [e.type, e.ignored !== null])).toEqual([
      ['RunStarted', false],
      ['NodeFailed', false],
      ['NodeCompleted', true],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WeftClient } from '@weft/client';
import { publish, rejection, startE2E, type E2E } from '../support/e2e-platform.js';

/**
 * Schedules over the GraphQL API on a whole platform (API, worker, scheduler polling every
 * 50 ms): the field problems of createSchedule, the roles, upcoming times in a zone, a trigger's
 * run with its scheduleId and nominalTime (and the run filter), a backfill's progress to the end,
 * pause and unpause with who and why, update and delete. Waits are for conditions, never times.
 */

const FIELDS = `id workflowId version cron intervalSeconds timeZone input config startAt endAt jitterSeconds note overlapPolicy catchUpSeconds
  paused pauseNote pausedBy nextFireAt bufferedTimes firedCount skipped { overlap missed bufferFull startFailed alreadyFired } lastError`;

let e2e: E2E;
let admin: WeftClient;
let viewer: WeftClient;

const create = (c: WeftClient, i: Record<string, unknown>) =>
  c.request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { ${FIELDS} } }`, { i }).then((r) => r.createSchedule);

/** Polls `read` until `done` holds (the scheduler works in the background), giving up after many tries. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const v = await read();
    if (done(v) || i > 400) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  e2e = await startE2E();
  ({ client: admin } = await e2e.tenant('scheduler'));
  const key = (await admin.request(`mutation { createApiKey(input: {name: "watcher", role: viewer}) { secret } }`)).createApiKey.secret;
  viewer = new WeftClient(e2e.url, key);
  await publish(admin, 'nightly', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
}, 60_000);
afterAll(async () => {
  await viewer?.close();
  await e2e?.close();
});

describe('createSchedule', () => {
  it.each([
    ['a bad cron expression', { cron: '61 * * * *' }, 'cron'],
    ['a cron expression with 4 fields', { cron: '* * * *' }, 'cron'],
    ['an unknown time zone', { cron: '0 2 * * *', timeZone: 'Mars/Olympus_Mons' }, 'timeZone'],
    ['an interval under 1 s', { intervalSeconds: 0 }, 'intervalSeconds'],
    ['both cron and interval', { cron: '@daily', intervalSeconds: 60 }, 'intervalSeconds'],
    ['an end before the start', { intervalSeconds: 60, startAt: '2030-02-01T00:00:00Z', endAt: '2030-01-01T00:00:00Z' }, 'endAt'],
    ['an unknown workflow', { workflowId: 'nope', cron: '@daily' }, 'workflowId'],
    ['an unknown version', { version: 9, cron: '@daily' }, 'version'],
    ['the reserved input key', { cron: '@daily', input: { schedule: 1 } }, 'input.schedule'],
    // Every fire would start a run with it, which startRun refuses over 1 MiB.
    ['an input over the size of a run input', { cron: '@daily', input: { blob: 'x'.repeat(1024 * 1024 + 1) } }, 'input'],
    ['a config with a NUL character', { cron: '@daily', config: { k: 'a\u0000b' } }, 'config.k'],
    ['a jitter as long as the interval', { intervalSeconds: 60, jitterSeconds: 60 }, 'jitterSeconds'],
  ])('refuses %s with BAD_USER_INPUT naming the field', async (_what, fields, path) => {
    const err = await rejection(create(admin, { workflowId: 'nightly', ...fields }));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect((err.errors[0]?.extensions?.problems as any[]).map((p) => p.path)).toEqual([path]);
  });

  it('creates a cron schedule in a time zone with its defaults, and tells its upcoming times', async () => {
    const s = await create(admin, { workflowId: 'nightly', cron: '0 9 * * *', timeZone: 'Asia/Kolkata', note: 'morning report' });
    expect(s).toMatchObject({
      timeZone: 'Asia/Kolkata',
      overlapPolicy: 'SKIP',
      catchUpSeconds: 60,
      jitterSeconds: 0,
      paused: false,
      firedCount: 0,
      version: null,
    });
    const r = await viewer.request(`query($id: ID!) { schedule(id: $id) { upcoming(count: 3) } }`, { id: s.id });
    expect(r.schedule.upcoming).toHaveLength(3);
    for (const t of r.schedule.upcoming) expect(t).toMatch(/T03:30:00(\.000)?Z$/);
  });

  it('lets a viewer read schedules but not create them', async () => {
    const err = await rejection(create(viewer, { workflowId: 'nightly', cron: '@daily' }));
    expect(err.code).toBe('FORBIDDEN');
    expect((await viewer.request(`{ schedules { edges { node { id } } } }`)).schedules.edges.length).toBeGreaterThan(0);
  });

  it('pages schedules in creation order by cursor, and refuses a cursor it did not give', async () => {
    for (let i = 0; i < 2; i++) await create(admin, { workflowId: 'nightly', cron: '@daily' });
    const first = (await admin.request(`{ schedules(first: 1) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`)).schedules;
    expect(first.pageInfo.hasNextPage).toBe(true);
    const next = (await admin.request(`query($a: String) { schedules(first: 1, after: $a) { edges { node { id } } } }`, { a: first.pageInfo.endCursor }))
      .schedules;
    expect(next.edges[0].node.id > first.edges[0].node.id).toBe(true);
    const err = await rejection(admin.request(`{ schedules(after: "page-2") { edges { cursor } } }`));
    expect((err.errors[0]?.extensions?.problems as any[]).map((p) => p.path)).toEqual(['after']);
  });
});

describe('firing over the API', () => {
  it('triggers a run with its schedule id and nominal time, found by the run filter and in recentRuns', async () => {
    const s = await create(admin, { workflowId: 'nightly', cron: '@yearly' });
    const fire = (
      await admin.request(`mutation($id: ID!) { triggerSchedule(id: $id) { nominalTime outcome reason run { id scheduleId nominalTime input } } }`, {
        id: s.id,
      })
    ).triggerSchedule;
    expect(fire.outcome).toBe('STARTED');
    expect(fire.run.scheduleId).toBe(s.id);
    expect(fire.run.nominalTime).toBe(fire.nominalTime);
    expect(fire.run.input.schedule).toEqual({ id: s.id, nominalTime: new Date(fire.nominalTime).toISOString() });
    const runs = await admin.request(`query($s: ID) { runs(filter: {scheduleId: $s}) { edges { node { id } } } }`, { s: s.id });
    expect(runs.runs.edges.map((e: any) => e.node.id)).toEqual([fire.run.id]);
    const recent = await admin.request(`query($id: ID!) { schedule(id: $id) { firedCount recentRuns { id } } }`, { id: s.id });
    expect(recent.schedule).toEqual({ firedCount: 1, recentRuns: [{ id: fire.run.id }] });
  });

  it('counts upcoming fire times in the cost of a query, so a page of them cannot stall the API', async () => {
    const err = await rejection(admin.request(`{ schedules(first: 200) { edges { node { upcoming(count: 100) } } } }`));
    expect(err.errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(err.message).toMatch(/complexity \d+ exceeds the budget/);
    // One schedule's hundred times fit.
    const s = await create(admin, { workflowId: 'nightly', cron: '*/7 3-5 * * 1-5', timeZone: 'America/New_York' });
    const one = await admin.request(`query($id: ID!) { schedule(id: $id) { upcoming(count: 100) } }`, { id: s.id });
    expect(one.schedule.upcoming).toHaveLength(100);
  });

  it('refuses a backfill over more fire times than it takes, having counted them', async () => {
    // Paused: a paused schedule holds its backfills, so none of these fire.
    const s = await create(admin, { workflowId: 'nightly', cron: '* * * * *', paused: true });
    // A week of minutes: 10,081 times, more than the 10,000 a backfill takes.
    const err = await rejection(
      admin.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2030-01-01T00:00:00Z", to: "2030-01-08T00:00:00Z") { id } }`, { id: s.id }),
    );
    expect(err.message).toMatch(/more than 10000 fire times/);
    // Just under: 10,000 minutes from the first.
    const ok = await admin.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2030-01-01T00:00:00Z", to: "2030-01-07T22:39:00Z") { total } }`, {
      id: s.id,
    });
    expect(ok.backfillSchedule.total).toBe(10_000);
    await admin.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id });
  });

  it('backfills a range as a tracked batch until it is finished', async () => {
    const s = await create(admin, { workflowId: 'nightly', cron: '*/10 * * * *' });
    const b = (
      await admin.request(
        `mutation($id: ID!) { backfillSchedule(id: $id, from: "2030-01-01T00:00:00Z", to: "2030-01-01T02:00:00Z") { id total started pending } }`,
        { id: s.id },
      )
    ).backfillSchedule;
    expect(b).toMatchObject({ total: 13, started: 0, pending: 13 });
    const done = await until(
      async () =>
        (await admin.request(`query($id: ID!) { scheduleBackfill(id: $id) { total started skipped pending finishedAt } }`, { id: b.id })).scheduleBackfill,
      (x: any) => x.finishedAt !== null,
    );
    expect(done).toMatchObject({ total: 13, started: 13, skipped: 0, pending: 0 });
    const runs = await admin.request(`query($s: ID) { runs(first: 50, filter: {scheduleId: $s}) { edges { node { nominalTime } } } }`, { s: s.id });
    expect(runs.runs.edges).toHaveLength(13);
    const err = await rejection(
      admin.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2030-01-02T00:00:00Z", to: "2030-01-01T00:00:00Z") { id } }`, { id: s.id }),
    );
    expect((err.errors[0]?.extensions?.problems as any[]).map((p) => p.path)).toEqual(['to']);
  });

  it('pauses and unpauses with a note and the key that did it', async () => {
    const s = await create(admin, { workflowId: 'nightly', intervalSeconds: 3600 });
    const paused = (await admin.request(`mutation($id: ID!) { pauseSchedule(id: $id, note: "db migration") { paused pauseNote pausedBy } }`, { id: s.id }))
      .pauseSchedule;
    expect(paused).toEqual({ paused: true, pauseNote: 'db migration', pausedBy: 'admin' });
    const back = (await admin.request(`mutation($id: ID!) { unpauseSchedule(id: $id, note: "done") { paused pauseNote nextFireAt } }`, { id: s.id }))
      .unpauseSchedule;
    expect(back).toMatchObject({ paused: false, pauseNote: 'done' });
    expect(new Date(back.nextFireAt).getTime()).toBeGreaterThan(Date.parse(s.nextFireAt) - 1);
    const long = await rejection(
      admin.request(`mutation($id: ID!, $n: String) { pauseSchedule(id: $id, note: $n) { id } }`, { id: s.id, n: 'x'.repeat(2_001) }),
    );
    expect((long.errors[0]?.extensions?.problems as any[]).map((p) => p.path)).toEqual(['note']);
  });

  it('updates the timing (an interval replaces the cron) and deletes, keeping the runs', async () => {
    const s = await create(admin, { workflowId: 'nightly', cron: '@daily', overlapPolicy: 'BUFFER_ALL' });
    const u = (
      await admin.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { cron intervalSeconds overlapPolicy note } }`, {
        i: { id: s.id, intervalSeconds: 90, note: 'faster' },
      })
    ).updateSchedule;
    expect(u).toEqual({ cron: null, intervalSeconds: 90, overlapPolicy: 'BUFFER_ALL', note: 'faster' });
    const err = await rejection(
      admin.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { id } }`, { i: { id: s.id, timeZone: 'Nowhere/At_All' } }),
    );
    expect((err.errors[0]?.extensions?.problems as any[]).map((p) => p.path)).toEqual(['timeZone']);
    const fired = (await admin.request(`mutation($id: ID!) { triggerSchedule(id: $id) { run { id } } }`, { id: s.id })).triggerSchedule;
    expect((await admin.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s.id })).deleteSchedule).toBe(s.id);
    expect((await rejection(admin.request(`query($id: ID!) { schedule(id: $id) { id } }`, { id: s.id }))).code).toBe('NOT_FOUND');
    const run = await admin.request(`query($id: ID!) { run(id: $id) { scheduleId } }`, { id: fired.run.id });
    expect(run.run.scheduleId).toBe(s.id);
  });
});

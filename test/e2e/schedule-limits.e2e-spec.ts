import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, rejection, startE2E, type E2E } from '../support/e2e-platform.js';

/**
 * The per-tenant bounds of schedules over the GraphQL API, on a platform whose caps are small
 * (3 schedules, 2 unfinished backfills per tenant; the smallest gap between fires at its default,
 * 10 s): each refusal names its field, its cap and its setting, and racing requests cannot pass
 * a cap. Each test has its own tenant.
 */

let e2e: E2E;
beforeAll(async () => {
  e2e = await startE2E({ WEFT_MAX_SCHEDULES_PER_TENANT: 3, WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT: 2 });
}, 60_000);
afterAll(async () => {
  await e2e?.close();
});

async function tenant(): Promise<WeftClient> {
  const { client } = await e2e.tenant('limits');
  await publish(client, 'tick', { nodes: [{ node_id: 'a', type: 'FORK' }], edges: [] });
  return client;
}
const create = (c: WeftClient, i: Record<string, unknown>) =>
  c
    .request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, { i: { workflowId: 'tick', ...i } })
    .then((r) => r.createSchedule.id as string);
const problems = (err: { errors: { extensions?: Record<string, unknown> }[] }) => err.errors[0]?.extensions?.problems as { path: string; message: string }[];

describe('the smallest gap between fires (WEFT_MIN_SCHEDULE_INTERVAL_SECONDS, 10 s)', () => {
  it.each([
    ['an interval of 5 s', { intervalSeconds: 5 }, 'intervalSeconds', 'is 5 s'],
    ['a cron expression firing every second', { cron: '* * * * * *' }, 'cron', 'fires as little as 1 s apart'],
    ['a cron expression with two fires a second apart', { cron: '0,1 0 * * * *' }, 'cron', 'fires as little as 1 s apart'],
  ])('refuses %s on create, naming the field, the gap and the setting', async (_what, fields, path, said) => {
    const err = await rejection(create(await tenant(), fields));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(problems(err)).toEqual([{ path, message: `${said}; the smallest gap between fires is 10 s (WEFT_MIN_SCHEDULE_INTERVAL_SECONDS)` }]);
  });

  it('takes a gap of exactly 10 s, and refuses an update to less', async () => {
    const c = await tenant();
    const id = await create(c, { cron: '*/10 * * * * *', paused: true });
    await create(c, { intervalSeconds: 10, paused: true });
    const err = await rejection(c.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { id } }`, { i: { id, intervalSeconds: 2 } }));
    expect(problems(err).map((p) => p.path)).toEqual(['intervalSeconds']);
    // An update that leaves the timing alone is not checked against it again.
    const u = await c.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { note cron } }`, { i: { id, note: 'kept' } });
    expect(u.updateSchedule).toEqual({ note: 'kept', cron: '*/10 * * * * *' });
  });
});

describe('schedules per tenant (WEFT_MAX_SCHEDULES_PER_TENANT = 3)', () => {
  it('creates exactly three of five racing creates, refuses the rest naming the cap and the setting, and leaves other tenants alone', async () => {
    const c = await tenant();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => create(c, { cron: '@daily', paused: true })));
    const made = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(made).toHaveLength(3);
    const err = await rejection(create(c, { cron: '@daily' }));
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(problems(err)).toEqual([
      { path: 'input', message: 'would be schedule 4 of the tenant; it may hold at most 3 (WEFT_MAX_SCHEDULES_PER_TENANT): delete one first' },
    ]);
    expect((await c.request(`{ schedules { edges { node { id } } } }`)).schedules.edges).toHaveLength(3);
    // Another tenant still has its own three.
    await create(await tenant(), { cron: '@daily', paused: true });
    // Deleting one makes room for one.
    await c.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: made[0] });
    await create(c, { cron: '@daily', paused: true });
  });
});

describe('unfinished backfills per tenant (WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT = 2)', () => {
  const backfill = (c: WeftClient, id: string) =>
    c.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2030-01-01T00:00:00Z", to: "2030-01-01T01:00:00Z") { id total } }`, { id });

  it('takes two of five racing backfills across the tenant, refuses the rest with CONFLICT naming the cap and the setting', async () => {
    const c = await tenant();
    // Paused: a paused schedule holds its backfills unfinished.
    const [s1, s2] = [await create(c, { cron: '*/10 * * * *', paused: true }), await create(c, { cron: '0 * * * *', paused: true })];
    const results = await Promise.allSettled([s1, s2, s1, s2, s1].map((id) => backfill(c, id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const err = await rejection(backfill(c, s2));
    expect(err.code).toBe('CONFLICT');
    expect(err.message).toBe(
      'CONFLICT: the tenant has 2 unfinished backfills, the most it may have at once (WEFT_MAX_ACTIVE_BACKFILLS_PER_TENANT = 2): wait for one to finish, or delete its schedule',
    );
    // Deleting a schedule ends its backfills: room again.
    await c.request(`mutation($id: ID!) { deleteSchedule(id: $id) }`, { id: s1 });
    const left = (await c.request(`query($id: ID!) { schedule(id: $id) { backfills { id } } }`, { id: s2 })).schedule.backfills.length;
    for (let i = left; i < 2; i++) await backfill(c, s2);
    expect((await rejection(backfill(c, s2))).code).toBe('CONFLICT');
  });

  it('refuses a range of too many times from its bounds, before the backfill cap', async () => {
    const c = await tenant();
    const id = await create(c, { cron: '*/10 * * * * *', paused: true });
    const err = await rejection(
      c.request(`mutation($id: ID!) { backfillSchedule(id: $id, from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z") { id } }`, { id }),
    );
    expect(problems(err)).toEqual([{ path: 'to', message: 'the range holds more than 10000 fire times; backfill it in parts' }]);
  });
});

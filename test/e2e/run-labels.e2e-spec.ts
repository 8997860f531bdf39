import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { getRun, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * Run labels and the run filters over the GraphQL API on a whole platform: labels read back as
 * given, each limit refused naming its path, every filter alone and combined (runs and countRuns
 * agree), another tenant's runs with the same labels, node and error never matching or counted,
 * and a schedule's labels copied to each run it starts. Waits are for states, never times.
 */

let e2e: E2E;
let a: WeftClient;
let b: WeftClient;

const ids = (r: any): string[] => r.edges.map((e: any) => e.node.id).sort();

/** The ids of a's runs `filter` matches (runs), checked against what countRuns says. */
async function matching(c: WeftClient, filter: Record<string, unknown>): Promise<string[]> {
  const r = await c.request(`query($f: RunFilter) { runs(filter: $f, first: 200) { edges { node { id } } } countRuns(filter: $f) }`, { f: filter });
  expect(r.countRuns).toBe(r.runs.edges.length);
  return ids(r.runs);
}

const problems = async (p: Promise<unknown>) => {
  const err = await rejection(p);
  expect(err.code).toBe('BAD_USER_INPUT');
  return err.errors[0]?.extensions?.problems as { path: string; message: string }[];
};

const cancel = (c: WeftClient, runId: string, reason: string) =>
  c.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { finishedAt } }`, { i: { runId, reason } }).then((r) => r.cancelRun.finishedAt as string);

/** Returns once the clock has moved past `iso` by a few milliseconds, so the next finish is strictly later. */
async function after(iso: string): Promise<void> {
  while (Date.now() <= Date.parse(iso) + 5) await new Promise((r) => setTimeout(r, 5));
}

const GATED = { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } }], edges: [] };
const TIMES_OUT = { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 0.2 } }], edges: [] };

beforeAll(async () => {
  e2e = await startE2E();
  ({ client: a } = await e2e.tenant('labels-a'));
  ({ client: b } = await e2e.tenant('labels-b'));
  for (const c of [a, b]) {
    await publish(c, 'gated', GATED);
    await publish(c, 'times-out', TIMES_OUT);
  }
}, 60_000);
afterAll(async () => {
  await e2e?.close();
});

describe('startRun labels', () => {
  it('reads the labels back on the started run, the run and the runs list; a run without labels has {}', async () => {
    const labels = { team: 'core', 'env.kind': 'prod-1', owner_id: '', note: 'ünïcødé 😀' };
    const started = (await a.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id labels } }`, { i: { workflowId: 'gated', labels } })).startRun;
    expect(started.labels).toEqual(labels);
    expect((await getRun(a, started.id, 'labels')).labels).toEqual(labels);
    const listed = await a.request(`query($f: RunFilter) { runs(filter: $f) { edges { node { id labels } } } }`, { f: { labels: { team: 'core' } } });
    expect(listed.runs.edges).toEqual([{ node: { id: started.id, labels } }]);
    const plain = await start(a, 'gated');
    expect((await getRun(a, plain, 'labels')).labels).toEqual({});
    await cancel(a, started.id, 'done');
    await cancel(a, plain, 'done');
  });

  it.each([
    ['17 labels', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'labels', /at most 16/],
    ['a key with a space', { 'a b': 'v' }, 'labels["a b"]', /key must be 1 to 64 characters/],
    ['an empty key', { '': 'v' }, 'labels[""]', /key must be 1 to 64 characters/],
    ['a key of 65 characters', { ['k'.repeat(65)]: 'v' }, `labels.${'k'.repeat(65)}`, /key must be 1 to 64 characters/],
    ['a value of 257 characters', { team: 'x'.repeat(257) }, 'labels.team', /at most 256/],
    ['a number value', { team: 7 }, 'labels.team', /must be a string, got number/],
    ['a null value', { team: null }, 'labels.team', /must be a string, got null/],
    ['an array', ['team'], 'labels', /JSON object/],
  ])('refuses %s with BAD_USER_INPUT naming the label', async (_what, labels, path, message) => {
    const found = await problems(a.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: 'gated', labels } }));
    expect(found.map((p) => p.path)).toEqual([path]);
    expect(found[0]!.message).toMatch(message);
  });

  it('starts nothing for refused labels', async () => {
    const before = (await a.request(`{ countRuns }`)).countRuns;
    await rejection(a.request(`mutation($i: StartRunInput!) { startRun(input: $i) { id } }`, { i: { workflowId: 'gated', labels: { 'no/slash': 'v' } } }));
    expect((await a.request(`{ countRuns }`)).countRuns).toBe(before);
  });
});

describe('run filters', () => {
  const A: Record<string, string> = {};
  const finished: Record<string, string> = {};

  beforeAll(async () => {
    // In a: two cancelled runs of team pay (errors that differ where an unescaped % or _ would not see it),
    // a failed run of team ops whose node `gate` failed, a running one with no labels.
    // They end in this order: prod, dev, then ops (started only once dev has ended).
    A.prod = await start(a, 'gated', {}, { labels: { team: 'pay', env: 'prod' } });
    A.dev = await start(a, 'gated', {}, { labels: { team: 'pay', env: 'dev' } });
    A.open = await start(a, 'gated');
    finished.prod = await cancel(a, A.prod, 'Card 100%_declined by BANK');
    await after(finished.prod);
    finished.dev = await cancel(a, A.dev, 'card 100x declined');
    await after(finished.dev);
    A.ops = await start(a, 'times-out', {}, { labels: { team: 'ops' } });
    const failed = await waitRun(a, A.ops);
    expect(failed.status).toBe('FAILED');
    finished.ops = failed.finishedAt;
    // In b: the same labels, node and error on runs of its own.
    const bProd = await start(b, 'gated', {}, { labels: { team: 'pay', env: 'prod' } });
    await cancel(b, bProd, 'Card 100%_declined by BANK');
    expect((await waitRun(b, await start(b, 'times-out', {}, { labels: { team: 'ops' } }))).status).toBe('FAILED');
  }, 60_000);

  afterAll(async () => {
    await cancel(a, A.open!, 'done');
  });

  it('finds runs carrying every label asked for', async () => {
    expect(await matching(a, { labels: { team: 'pay' } })).toEqual([A.prod, A.dev].sort());
    expect(await matching(a, { labels: { team: 'pay', env: 'prod' } })).toEqual([A.prod]);
    expect(await matching(a, { labels: { team: 'pay', env: 'staging' } })).toEqual([]);
    expect(await matching(a, { labels: { env: 'PROD' } })).toEqual([]);
    // {} asks for nothing: every run.
    expect((await matching(a, { labels: {} })).length).toBe((await matching(a, {})).length);
  });

  it('finds runs with a FAILED task of a node', async () => {
    expect(await matching(a, { failedNodeId: 'gate' })).toEqual([A.ops]);
    expect(await matching(a, { failedNodeId: 'nope' })).toEqual([]);
  });

  it('finds runs by a piece of their error, ignoring case, with % and _ taken literally', async () => {
    expect(await matching(a, { errorContains: 'CARD 100' })).toEqual([A.prod, A.dev].sort());
    expect(await matching(a, { errorContains: '100%_' })).toEqual([A.prod]);
    expect(await matching(a, { errorContains: '%' })).toEqual([A.prod]);
    expect(await matching(a, { errorContains: 'by bank' })).toEqual([A.prod]);
    expect(await matching(a, { errorContains: '\\' })).toEqual([]);
  });

  it('finds runs by when they finished; unfinished runs never match', async () => {
    expect(await matching(a, { finishedAfter: finished.dev })).toEqual([A.dev, A.ops].sort());
    expect(await matching(a, { finishedBefore: finished.dev })).toEqual(expect.arrayContaining([A.prod]));
    expect(await matching(a, { finishedBefore: finished.dev })).not.toContain(A.dev);
    expect(await matching(a, { finishedAfter: finished.prod, finishedBefore: finished.ops })).toEqual([A.prod, A.dev].sort());
    const all = await matching(a, { finishedAfter: '2000-01-01T00:00:00Z' });
    expect(all).not.toContain(A.open);
  });

  it('combines every filter with AND', async () => {
    expect(await matching(a, { labels: { team: 'pay' }, errorContains: '100x' })).toEqual([A.dev]);
    expect(await matching(a, { labels: { team: 'pay' }, failedNodeId: 'gate' })).toEqual([]);
    expect(
      await matching(a, { labels: { team: 'ops' }, failedNodeId: 'gate', status: 'FAILED', workflowId: 'times-out', finishedAfter: finished.dev }),
    ).toEqual([A.ops]);
    expect(await matching(a, { labels: { team: 'pay' }, status: 'CANCELLED', finishedBefore: finished.dev, errorContains: 'declined' })).toEqual([A.prod]);
  });

  it("never matches or counts another tenant's runs", async () => {
    const mine = await matching(b, { labels: { team: 'pay' } });
    expect(mine).toHaveLength(1);
    for (const id of Object.values(A)) expect(mine).not.toContain(id);
    expect(await matching(b, { failedNodeId: 'gate' })).toHaveLength(1);
    expect(await matching(b, { errorContains: '100x' })).toEqual([]);
    expect((await b.request(`{ countRuns }`)).countRuns).toBe(2);
  });

  it('refuses bad filter labels and times naming the path', async () => {
    expect((await problems(a.request(`{ countRuns(filter: {labels: {team: 3}}) }`))).map((p) => p.path)).toEqual(['filter.labels.team']);
    const spaced = a.request(`query($f: RunFilter) { runs(filter: $f) { edges { node { id } } } }`, { f: { labels: { 'a b': 'v' } } });
    expect((await problems(spaced)).map((p) => p.path)).toEqual(['filter.labels["a b"]']);
    const bad = await rejection(a.request(`{ countRuns(filter: {finishedAfter: "yesterday"}) }`));
    expect(bad.code).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(bad.errors)).toContain('finishedAfter');
  });
});

describe('schedule labels', () => {
  const FIELDS = 'id labels';
  const trigger = (id: string) =>
    a
      .request(`mutation($id: ID!) { triggerSchedule(id: $id) { run { id labels } } }`, { id })
      .then((r) => r.triggerSchedule.run as { id: string; labels: unknown });

  it('copies the labels a schedule sets to each run it starts, and an update changes them for the next', async () => {
    const s = (
      await a.request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { ${FIELDS} } }`, {
        i: { workflowId: 'gated', cron: '@yearly', labels: { source: 'cron', team: 'ops' } },
      })
    ).createSchedule;
    expect(s.labels).toEqual({ source: 'cron', team: 'ops' });
    const first = await trigger(s.id);
    expect(first.labels).toEqual({ source: 'cron', team: 'ops' });
    expect((await getRun(a, first.id, 'labels')).labels).toEqual({ source: 'cron', team: 'ops' });
    await cancel(a, first.id, 'done');
    const updated = (
      await a.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { ${FIELDS} } }`, { i: { id: s.id, labels: { source: 'cron2' } } })
    ).updateSchedule;
    expect(updated.labels).toEqual({ source: 'cron2' });
    // An update that does not name labels keeps them.
    const kept = (await a.request(`mutation($i: UpdateScheduleInput!) { updateSchedule(input: $i) { ${FIELDS} } }`, { i: { id: s.id, note: 'n' } }))
      .updateSchedule;
    expect(kept.labels).toEqual({ source: 'cron2' });
    const second = await trigger(s.id);
    expect(second.labels).toEqual({ source: 'cron2' });
    expect(await matching(a, { labels: { source: 'cron2' } })).toEqual([second.id]);
    await cancel(a, second.id, 'done');
  });

  it('refuses schedule labels startRun would refuse, naming the path', async () => {
    const found = await problems(
      a.request(`mutation($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, {
        i: { workflowId: 'gated', cron: '@yearly', labels: { team: 'x'.repeat(300) } },
      }),
    );
    expect(found.map((p) => p.path)).toEqual(['labels.team']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { TenantRepository } from '@weft/persistence';
import { WeftClient } from '@weft/client';
import { startPlatform, type RunningPlatform } from '@weft/cli';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { publish, testConfig } from '../support/e2e-platform.js';

/**
 * startRun answers a new RUNNING or QUEUED run from the row its start wrote instead of reading it
 * back: the answer must be exactly what a following `run(id)` reads, field for field, also for
 * input and config (whose object keys `jsonb` orders its own way), and for an idempotent repeat
 * (which reads the run it names). Only the API runs, so nothing moves a run between the two.
 */
const FIELDS = `id status workflowId version input config output error startNodeId idempotencyKey parentRunId parentTaskId
  scheduleId nominalTime depth priority concurrencyKey seq createdAt updatedAt finishedAt waitReason waitDetail`;

let db: TestDatabase;
let platform: RunningPlatform;
let client: WeftClient;
const statements: string[] = [];
let recording = false;
const query = pg.Client.prototype.query;

beforeAll(async () => {
  db = await createTestDatabase();
  platform = await startPlatform(testConfig(db), { api: true, host: '127.0.0.1' });
  const t = await new TenantRepository(db.ds).createTenant('start-answer');
  client = new WeftClient(platform.url!, t.apiKey);
  const gated = { nodes: [{ node_id: 'a', type: 'HTTP', spec: { url: 'http://127.0.0.1:9/a' } }], edges: [] };
  await publish(client, 'plain', gated);
  await publish(client, 'limited', { ...gated, concurrency: { key: '{{ input.customer }}', limit: 1 } });
  // Every statement sent, a prepared one run as `EXECUTE name(…)` by its text.
  const texts = new Map<string, string>();
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string; name?: string };
    if (typeof q !== 'string' && q.name) texts.set(q.name, q.text);
    if (recording) {
      if (typeof q !== 'string') statements.push(q.text);
      else for (const [, name] of q.matchAll(/EXECUTE (weftc?_[0-9a-f]{24})/g)) statements.push(texts.get(name!) ?? name!);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
});
afterAll(async () => {
  pg.Client.prototype.query = query;
  await client?.close();
  await platform?.close();
  await db?.drop();
});

async function start(input: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await client.request(`mutation($i: StartRunInput!) { startRun(input: $i) { ${FIELDS} } }`, { i: input })).startRun;
}
async function read(id: string): Promise<Record<string, unknown>> {
  return (await client.request(`query($id: ID!) { run(id: $id) { ${FIELDS} } }`, { id })).run;
}
/** The run rows read from `runs` while `fn` runs (the start's own writes aside). */
async function runReads(fn: () => Promise<unknown>): Promise<number> {
  statements.length = 0;
  recording = true;
  try {
    await fn();
  } finally {
    recording = false;
  }
  return statements.filter((s) => /^\s*SELECT\b[\s\S]*\bFROM runs WHERE tenant_id = \$1 AND id = \$2/.test(s)).length;
}

const input = { zeta: 1, b: [{ yy: true, x: null }], '10': 'ten', '9': 'nine', é: 'accent', aa: { '': 0, c: -1.5e-7 } };

describe('the answer of startRun', () => {
  it('is what run(id) reads for a RUNNING run, without reading it back', async () => {
    let started!: Record<string, unknown>;
    expect(await runReads(async () => (started = await start({ workflowId: 'plain', input, config: { k: 'v', a: 1 }, priority: 2, startNodeId: 'a' })))).toBe(
      0,
    );
    expect(started.status).toBe('RUNNING');
    const again = await read(started.id as string);
    expect(started).toEqual(again);
    expect(JSON.stringify(started)).toBe(JSON.stringify(again)); // key order too
  });

  it('is what run(id) reads for a QUEUED run (no free slot), without reading it back', async () => {
    const first = await start({ workflowId: 'limited', input: { customer: 'acme' } });
    expect(first.status).toBe('RUNNING');
    let queued!: Record<string, unknown>;
    expect(await runReads(async () => (queued = await start({ workflowId: 'limited', input: { customer: 'acme', n: 2 } })))).toBe(0);
    expect(queued).toMatchObject({ status: 'QUEUED', concurrencyKey: 'acme', waitReason: 'CONCURRENCY_LIMIT', seq: 0 });
    const again = await read(queued.id as string);
    expect(JSON.stringify(queued)).toBe(JSON.stringify(again));
  });

  it('is the existing run, read, for an idempotent repeat', async () => {
    const first = await start({ workflowId: 'plain', input, idempotencyKey: 'once' });
    let repeat!: Record<string, unknown>;
    expect(await runReads(async () => (repeat = await start({ workflowId: 'plain', input, idempotencyKey: 'once' })))).toBe(1);
    expect(JSON.stringify(repeat)).toBe(JSON.stringify(first));
    expect(JSON.stringify(repeat)).toBe(JSON.stringify(await read(first.id as string)));
  });
});

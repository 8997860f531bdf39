import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  closeAttack,
  neighbourConnects,
  neighbourLatencies,
  prepareAttack,
  runAttacks,
  type AttackOutcome,
  type AttackSizes,
  type PreparedAttack,
} from '../../bench/attack-mix.js';
import { publish, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * One tenant running four load attacks at once against a whole platform, while another tenant
 * goes about its business: wide alias queries over a run with large outputs, publishes of a
 * definition over the node cap, graphql-ws connections over several keys past the tenant's cap,
 * and backfills of millions of cron times. Each attack must meet its bound (a refusal naming it),
 * and every request and the live connection of the neighbour must succeed meanwhile. The same
 * attacks, at their reported sizes, are measured by `npm run bench:attack`, which compares the
 * neighbour's latency idle and under attack; this suite asserts outcomes, never times.
 */

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const TENANT_CONNECTIONS = 12;
const SIZES: AttackSizes = {
  bigTasks: 8,
  outputBytes: 900_000,
  aliases: 8,
  definitionNodes: 2_500,
  keys: 3,
  connectionsPerKey: 8,
  parallelBackfills: 4,
};
const ATTACK_SECONDS = 8;

describe('one tenant attacking the platform on four fronts at once', () => {
  let e2e: E2E;
  let prepared: PreparedAttack;
  let b: Awaited<ReturnType<E2E['tenant']>>;
  let outcomes: Map<AttackOutcome['name'], AttackOutcome>;
  let neighbour: { ms: number[]; failures: string[] };
  let neighbourSocket: string;

  beforeAll(async () => {
    e2e = await startE2E({
      WEFT_MAX_RESPONSE_BYTES: MAX_RESPONSE_BYTES,
      WEFT_WS_MAX_CONNECTIONS_PER_TENANT: TENANT_CONNECTIONS,
      WEFT_WS_MAX_CONNECTIONS_PER_KEY: 10,
    });
    const a = await e2e.tenant('attacker');
    b = await e2e.tenant('neighbour');
    prepared = await prepareAttack(e2e.url, a.client, SIZES);
    const connectAfter = new Promise<string>((resolve) => setTimeout(() => resolve(neighbourConnects(e2e.url, b.apiKey)), (ATTACK_SECONDS * 1000) / 2));
    const [attacks, latencies, socket] = await Promise.all([
      runAttacks(prepared, SIZES, ATTACK_SECONDS),
      neighbourLatencies(e2e.url, b.apiKey, ATTACK_SECONDS),
      connectAfter,
    ]);
    outcomes = new Map(attacks.map((o) => [o.name, o]));
    neighbour = latencies;
    neighbourSocket = socket;
  }, 240_000);

  afterAll(async () => {
    if (prepared) await closeAttack(prepared);
    await e2e?.close();
  });

  it('refuses every wide alias query over the large outputs, naming the bound', () => {
    const o = outcomes.get('responses')!;
    expect(o.attempts).toBeGreaterThan(0);
    expect(o.answers).toEqual({ BAD_USER_INPUT: o.attempts });
    expect(o.samples.BAD_USER_INPUT).toContain('WEFT_MAX_RESPONSE_BYTES');
    expect(o.samples.BAD_USER_INPUT).toContain(String(MAX_RESPONSE_BYTES));
  });

  it("refuses every publish over the node cap, naming the count, or past the tenant's share of the validation thread", () => {
    const o = outcomes.get('definitions')!;
    expect(o.attempts).toBeGreaterThan(0);
    expect(Object.keys(o.answers).filter((k) => k !== 'BAD_USER_INPUT' && k !== 'TRANSIENT')).toEqual([]);
    expect(o.samples.BAD_USER_INPUT).toContain(`definition has ${SIZES.definitionNodes} nodes; at most 2000 are allowed (WEFT_MAX_DEFINITION_NODES)`);
    if (o.answers.TRANSIENT) expect(o.samples.TRANSIENT).toContain('large definitions of this tenant');
  });

  it("holds the attacker's keys to the tenant's connection cap", () => {
    const o = outcomes.get('connections')!;
    expect(o.attempts).toBe(SIZES.keys * SIZES.connectionsPerKey);
    expect(o.answers.ok).toBe(TENANT_CONNECTIONS);
    expect(o.answers['close 4029']).toBe(o.attempts - TENANT_CONNECTIONS);
    expect(o.samples['close 4029']).toContain('TOO_MANY_TENANT_CONNECTIONS');
  });

  it('refuses every backfill of millions of times', () => {
    const o = outcomes.get('backfills')!;
    expect(prepared.scheduleRefused).toBeUndefined();
    expect(o.attempts).toBeGreaterThan(0);
    expect(o.answers).toEqual({ BAD_USER_INPUT: o.attempts });
    expect(o.samples.BAD_USER_INPUT).toMatch(/more than 10000 fire times/);
  });

  it("answers every request of the neighbour's meanwhile, and acknowledges its live connection", () => {
    expect(neighbour.failures).toEqual([]);
    expect(neighbour.ms.length).toBeGreaterThan(0);
    expect(neighbourSocket).toBe('ack');
  });

  it('still runs the neighbour’s workflow to the end afterwards', async () => {
    await publish(b.client, 'after-attack', { nodes: [{ node_id: 'w', type: 'WAIT', spec: { duration_seconds: 0.1 } }], edges: [] });
    const id = await start(b.client, 'after-attack');
    const run = await waitRun(b.client, id);
    expect(run.status).toBe('SUCCEEDED');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, type E2E } from '../support/e2e-platform.js';
import { cli, type CliResult } from '../support/weft-cli.js';

/**
 * An idempotency key reused for another start, over GraphQL and through `weft run`: the same
 * start answers the run the key named, another input, config or version is refused with CONFLICT
 * naming that run and what differs (`weft run` exits 4).
 */
describe('idempotency conflicts end to end', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  const gate = { node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } };

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('idempotency'));
    await publish(client, 'checkout', { nodes: [gate], edges: [] });
  }, 60_000);
  afterAll(() => e2e?.close());

  it('answers the same run for the same start, and CONFLICT for another input, config or version', async () => {
    const runId = await start(client, 'checkout', { order: 7, lines: [1, 2] }, { idempotencyKey: 'order-7', config: { dry: false } });
    // Keys in another order are the same input.
    expect(await start(client, 'checkout', { lines: [1, 2], order: 7 }, { idempotencyKey: 'order-7', config: { dry: false }, version: 1 })).toBe(runId);

    const input = await rejection(start(client, 'checkout', { order: 8, lines: [1, 2] }, { idempotencyKey: 'order-7', config: { dry: false } }));
    expect(input.code).toBe('CONFLICT');
    expect(input.errors[0]!.extensions!.code).toBe('CONFLICT');
    expect(input.errors[0]!.message).toBe(`idempotency key "order-7" was used by run ${runId} with a different input`);
    const config = await rejection(start(client, 'checkout', { order: 7, lines: [1, 2] }, { idempotencyKey: 'order-7' }));
    expect(config.errors[0]!.message).toBe(`idempotency key "order-7" was used by run ${runId} with a different config`);

    await publish(client, 'checkout', { nodes: [gate, { node_id: 'after', type: 'FORK' }], edges: [{ from: 'gate', to: 'after' }] });
    const version = await rejection(start(client, 'checkout', { order: 7, lines: [1, 2] }, { idempotencyKey: 'order-7', config: { dry: false } }));
    expect(version.errors[0]!.message).toBe(`idempotency key "order-7" was used by run ${runId} with a different version (it ran 1, this start 2)`);
  });

  it('weft run says so on stderr, exit code 4, and prints the run for the same start', async () => {
    const first = await weft('run', 'checkout', '--input', '{"n": 1}', '--idempotency-key', 'cli-1', '-o', 'json');
    expect(first.code).toBe(0);
    const runId = JSON.parse(first.stdout).id as string;
    expect(JSON.parse((await weft('run', 'checkout', '--input', '{"n": 1}', '--idempotency-key', 'cli-1', '-o', 'json')).stdout).id).toBe(runId);
    expect(await weft('run', 'checkout', '--input', '{"n": 2}', '--idempotency-key', 'cli-1')).toEqual({
      code: 4,
      stdout: '',
      stderr: `error: CONFLICT: idempotency key "cli-1" was used by run ${runId} with a different input\n`,
    });
  });
});

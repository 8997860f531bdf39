import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, statuses, waitRun, type E2E } from '../support/e2e-platform.js';
import { cli, type CliResult } from '../support/weft-cli.js';

/**
 * A SWITCH's decision as a user sees it: `Task.decision` over GraphQL, the run history's
 * sentence, and `weft run-status` saying `no branch taken` (with the conditions) or
 * `default taken: <id>`.
 */

const DECISION = `id status tasks { nodeId status decision { branches default defaultTaken conditions { to condition value } } }
  history { type actions }`;

/** s (SWITCH, with `spec`) ─(input.n > 10)→ big, ─(input.n < 0)→ neg, plus `extra` edges and nodes. */
function definition(spec: unknown, extraNodes: unknown[] = [], extraEdges: unknown[] = []): unknown {
  const wait = (id: string) => ({ node_id: id, type: 'WAIT', spec: { duration_seconds: 0 } });
  return {
    nodes: [{ node_id: 's', type: 'SWITCH', ...(spec === undefined ? {} : { spec }) }, wait('big'), wait('neg'), ...extraNodes],
    edges: [{ from: 's', to: 'big', condition: '{{input.n > 10}}' }, { from: 's', to: 'neg', condition: '{{input.n < 0}}' }, ...extraEdges],
  };
}

describe('a SWITCH decision end to end', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('switch-decision'));
    await publish(client, 'no-default', definition(undefined));
    await publish(
      client,
      'with-default',
      definition({ default: 'other' }, [{ node_id: 'other', type: 'WAIT', spec: { duration_seconds: 0 } }], [{ from: 's', to: 'other' }]),
    );
  }, 60_000);
  afterAll(() => e2e?.close());

  it('shows that no branch was taken, with each condition and its value, in the task, the history and run-status', async () => {
    const id = await start(client, 'no-default', { n: 5 });
    const run = await waitRun(client, id, undefined, undefined, DECISION);
    expect(run.status).toBe('SUCCEEDED');
    expect(statuses(run)).toEqual({ s: 'COMPLETED', big: 'SKIPPED', neg: 'SKIPPED' });
    const s = run.tasks.find((t: any) => t.nodeId === 's');
    expect(s.decision).toEqual({
      branches: [],
      default: null,
      defaultTaken: false,
      conditions: [
        { to: 'big', condition: '{{input.n > 10}}', value: false },
        { to: 'neg', condition: '{{input.n < 0}}', value: false },
      ],
    });
    expect(run.tasks.find((t: any) => t.nodeId === 'big').decision).toBeNull();
    const created = run.history.flatMap((e: any) => e.actions).find((a: any) => a.type === 'CreateTask' && a.nodeId === 's');
    expect(created.decision).toBe('no branch taken: conditions evaluated: to=big {{input.n > 10}} → false; to=neg {{input.n < 0}} → false');

    const status = await weft('run-status', id);
    expect(status.code).toBe(0);
    const row = status.stdout.split('\n').find((l) => /^s\s/.test(l));
    expect(row).toContain('no branch taken: conditions evaluated: to=big {{input.n > 10}} → false; to=neg {{input.n < 0}} → false');
    const json = JSON.parse((await weft('run-status', id, '-o', 'json')).stdout);
    expect(json.tasks.find((t: any) => t.nodeId === 's').decision.defaultTaken).toBe(false);
  });

  it('takes the default when no condition holds and skips it when one does', async () => {
    const fallen = await waitRun(client, await start(client, 'with-default', { n: 5 }), undefined, undefined, DECISION);
    expect(statuses(fallen)).toEqual({ s: 'COMPLETED', big: 'SKIPPED', neg: 'SKIPPED', other: 'COMPLETED' });
    expect(fallen.tasks.find((t: any) => t.nodeId === 's').decision).toMatchObject({ branches: ['other'], default: 'other', defaultTaken: true });
    const status = await weft('run-status', fallen.id);
    expect(status.stdout.split('\n').find((l) => /^s\s/.test(l))).toContain('default taken: other');

    const taken = await waitRun(client, await start(client, 'with-default', { n: 50 }), undefined, undefined, DECISION);
    expect(statuses(taken)).toEqual({ s: 'COMPLETED', big: 'COMPLETED', neg: 'SKIPPED', other: 'SKIPPED' });
    expect(taken.tasks.find((t: any) => t.nodeId === 's').decision).toMatchObject({ branches: ['big'], defaultTaken: false });
  });

  it('refuses a default that is not an unconditioned successor at publish, with its path', async () => {
    const bad = definition({ default: 'neg' });
    const e = await rejection(publish(client, 'bad-default', bad));
    expect(e.message).toContain('edges[1].condition');
    expect(e.message).toContain('remove its condition');
  });
});

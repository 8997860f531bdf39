import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import YAML from 'yaml';
import type { WeftClient } from '@weft/client';
import { publish, waitRun, startE2E, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

/**
 * Run labels and the run filters from the command line, against a whole Weft: `run --label`,
 * `schedules create --label` (copied to the runs it starts), labels shown by `runs` and
 * `run-status` as a table, JSON and YAML, `runs --label --failed-node --error --finished-after
 * --finished-before`, and every malformed flag a usage error (exit code 2) before any request.
 */
describe('weft labels and run filters', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  async function asJson(...args: string[]): Promise<any> {
    const r = await weft(...args, '-o', 'json');
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  }
  const ids = (runs: { id: string }[]) => runs.map((r) => r.id).sort();
  let pay: string;
  let ops: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('labels-cli'));
    await publish(client, 'gated', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go' } }], edges: [] });
    await publish(client, 'times-out', { nodes: [{ node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'never', timeout_seconds: 0.2 } }], edges: [] });
  });
  afterAll(() => e2e.close());

  it('starts a run with repeated --label and prints its labels as JSON and YAML', async () => {
    const started = await asJson('run', 'gated', '--label', 'team=pay', '--label', 'env=prod=eu', '--label', 'empty=');
    expect(started.labels).toEqual({ team: 'pay', env: 'prod=eu', empty: '' });
    pay = started.id;
    const yaml = await weft('run-status', pay, '-o', 'yaml');
    expect(yaml.code).toBe(0);
    expect(YAML.parse(yaml.stdout).labels).toEqual({ team: 'pay', env: 'prod=eu', empty: '' });
    expect((await asJson('run-status', pay)).labels).toEqual({ team: 'pay', env: 'prod=eu', empty: '' });
  });

  it('shows labels in the tables of runs and run-status', async () => {
    const table = await weft('runs', '--label', 'team=pay');
    expect(table.code).toBe(0);
    const [head, ...rows] = table.stdout.trimEnd().split('\n');
    expect(head).toMatch(/\bLABELS$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^${pay}\\b.*empty=,env=prod=eu,team=pay$`));
    const status = await weft('run-status', pay);
    expect(status.stdout).toMatch(/^labels\s+empty=,env=prod=eu,team=pay$/m);
    const yaml = await weft('runs', '--label', 'team=pay', '-o', 'yaml');
    expect(YAML.parse(yaml.stdout)[0].labels).toEqual({ team: 'pay', env: 'prod=eu', empty: '' });
  });

  it('filters runs by labels, failed node, error text and finish time', async () => {
    ops = (await asJson('run', 'times-out', '--label', 'team=ops')).id;
    expect((await waitRun(client, ops)).status).toBe('FAILED');
    const cancelled = await weft('cancel', pay, '--reason', 'Card 100%_declined');
    expect(cancelled.code).toBe(0);
    expect(ids(await asJson('runs', '--label', 'team=pay', '--label', 'env=prod=eu'))).toEqual([pay]);
    expect(await asJson('runs', '--label', 'team=pay', '--label', 'env=dev')).toEqual([]);
    expect(ids(await asJson('runs', '--failed-node', 'gate'))).toEqual([ops]);
    expect(ids(await asJson('runs', '--error', 'card 100%_'))).toEqual([pay]);
    expect(ids(await asJson('runs', '--finished-after', '1h'))).toEqual([ops, pay].sort());
    expect(await asJson('runs', '--finished-before', '2000-01-01T00:00:00Z')).toEqual([]);
    expect(ids(await asJson('runs', '--finished-after', '2000-01-01T00:00:00Z', '--finished-before', '2999-01-01T00:00:00Z', '--label', 'team=ops'))).toEqual([
      ops,
    ]);
  });

  it('gives a schedule --label, and each run it starts carries it', async () => {
    const created = await asJson('schedules', 'create', '--workflow', 'gated', '--cron', '@yearly', '--label', 'source=cli');
    expect(created.labels).toEqual({ source: 'cli' });
    const fired = await client.request(`mutation($id: ID!) { triggerSchedule(id: $id) { run { id } } }`, { id: created.id });
    expect((await asJson('run-status', fired.triggerSchedule.run.id)).labels).toEqual({ source: 'cli' });
    expect(ids(await asJson('runs', '--label', 'source=cli'))).toEqual([fired.triggerSchedule.run.id]);
    const describe = await weft('schedules', 'describe', created.id);
    expect(describe.stdout).toMatch(/^labels\s+source=cli$/m);
  });

  it.each([
    [['run', 'gated', '--label', 'team'], /--label.*must be KEY=VALUE, got "team"/],
    [['run', 'gated', '--label', 'a b=c'], /--label.*key "a b" must be 1 to 64 characters/],
    [['run', 'gated', '--label', `${'k'.repeat(65)}=v`], /--label.*must be 1 to 64 characters/],
    [['run', 'gated', '--label', `k=${'v'.repeat(257)}`], /--label.*value of k is longer than 256 characters/],
    [['run', 'gated', '--label', 'k=1', '--label', 'k=2'], /--label.*label k is given twice/],
    [['run', 'gated', ...Array.from({ length: 17 }, (_, i) => ['--label', `k${i}=v`]).flat()], /--label.*at most 16 labels/],
    [['runs', '--label', '=v'], /--label.*key "" must be/],
    [['runs', '--finished-after', 'yesterday'], /--finished-after.*must be a length of time/],
    [['runs', '--finished-before', '2030-02-30T00:00:00Z'], /--finished-before.*must be a length of time/],
    [['schedules', 'create', '--workflow', 'gated', '--cron', '@daily', '--label', 'nope'], /--label.*must be KEY=VALUE/],
  ])('refuses %j as a usage error, exit code 2', async (args, message) => {
    const before = (await client.request(`{ countRuns }`)).countRuns;
    const r = await weft(...(args as string[]));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toMatch(message);
    expect((await client.request(`{ countRuns }`)).countRuns).toBe(before);
  });
});

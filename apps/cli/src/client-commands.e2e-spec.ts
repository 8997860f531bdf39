import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { WeftClient } from '@weft/client';
import { publish, rejection, start, startE2E, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

/**
 * The client commands against a whole Weft (API, worker, scheduler) on the test database: what
 * they print for people and for programs, their exit codes, paging past the API's 200-run page,
 * and attempts shown 1-based with the node's limit.
 */
describe('the weft client commands', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let dir: string;
  /** Runs `weft <args>` against the platform with the tenant's key in the environment. */
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  /** Runs of `quick`, in the order they were started. */
  const quickRuns: string[] = [];
  let flakyRun: string;
  let doomedRun: string;

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('cli'));
    dir = await mkdtemp(join(tmpdir(), 'weft-cli-e2e-'));
    // A FORK alone completes as the run starts: a run that needs no worker.
    await publish(client, 'quick', { nodes: [{ node_id: 'only', type: 'FORK' }], edges: [] });
    await publish(client, 'quick', { nodes: [{ node_id: 'single', type: 'FORK' }], edges: [] });
    // fetch fails once (503), then succeeds on its second attempt of three.
    await publish(client, 'flaky', {
      nodes: [
        {
          node_id: 'fetch',
          type: 'HTTP',
          retry: { max_attempts: 3, backoff_seconds: 0 },
          spec: { url: '{{config.shop}}/flaky/{{input.key}}?fail=1', method: 'GET' },
        },
      ],
      edges: [],
    });
    // fetch fails both of its attempts.
    await publish(client, 'doomed', {
      nodes: [
        {
          node_id: 'fetch',
          type: 'HTTP',
          retry: { max_attempts: 2, backoff_seconds: 0 },
          spec: { url: '{{config.shop}}/flaky/{{input.key}}?fail=99', method: 'GET' },
        },
      ],
      edges: [],
    });
    await publish(client, 'approval', { nodes: [{ node_id: 'approval', type: 'WAIT_FOR_EVENT', spec: { event: 'approve' } }], edges: [] });

    for (let i = 0; i < 205; i++) quickRuns.push(await start(client, 'quick', { i }));
    flakyRun = await start(client, 'flaky', { key: `f-${Date.now()}` }, { config: { shop: e2e.shop.url } });
    doomedRun = await start(client, 'doomed', { key: `d-${Date.now()}` }, { config: { shop: e2e.shop.url } });
    await waitRun(client, flakyRun);
    await waitRun(client, doomedRun);
  });
  afterAll(async () => {
    await e2e.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('runs', () => {
    it('pages past the 200 runs the API returns at once, newest first', async () => {
      const refused = await rejection(client.request(`query { runs(first: 205) { edges { node { id } } } }`));
      expect(refused.code).toBe('BAD_USER_INPUT');

      const r = await weft('runs', '--workflow', 'quick', '--limit', '205', '-o', 'json');
      expect(r.code).toBe(0);
      const listed = JSON.parse(r.stdout) as { id: string; createdAt: string; status: string; workflowId: string }[];
      expect(listed).toHaveLength(205);
      expect(new Set(listed.map((x) => x.id))).toEqual(new Set(quickRuns));
      const created = listed.map((x) => Date.parse(x.createdAt));
      expect(created).toEqual([...created].sort((a, b) => b - a));
      expect(listed[0]).toMatchObject({ id: quickRuns.at(-1), workflowId: 'quick', status: 'SUCCEEDED', version: 2 });
    });

    it('stops at --limit and says when more runs match', async () => {
      const r = await weft('runs', '--workflow', 'quick', '--limit', '201', '-o', 'json');
      expect(JSON.parse(r.stdout)).toHaveLength(201);
      const table = await weft('runs', '--workflow', 'quick');
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(21);
      expect(table.stderr).toBe('note: the newest 20 runs shown; more match (--limit N to see them)\n');
    });

    it('prints a table with a header and durations', async () => {
      const lines = (await weft('runs', '--limit', '300')).stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+WORKFLOW\s+VERSION\s+STATUS\s+PRIORITY\s+CREATED\s+DURATION\s+WAITING$/);
      expect(lines).toHaveLength(1 + 207);
      const doomed = lines.find((l) => l.startsWith(doomedRun))!;
      expect(doomed).toMatch(new RegExp(`^${doomedRun}\\s+doomed\\s+1\\s+FAILED\\s+3\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+(\\d+ms|[\\d.]+s)$`));
    });

    it('filters by --status and --since', async () => {
      const failed = JSON.parse((await weft('runs', '--status', 'failed', '-o', 'json')).stdout);
      expect(failed.map((x: { id: string }) => x.id)).toEqual([doomedRun]);
      expect(JSON.parse((await weft('runs', '--since', '1h', '--limit', '500', '-o', 'json')).stdout)).toHaveLength(207);
      expect(JSON.parse((await weft('runs', '--since', '2999-01-01T00:00:00Z', '-o', 'json')).stdout)).toEqual([]);

      await new Promise((r) => setTimeout(r, 50));
      const later = [await start(client, 'quick'), await start(client, 'quick')];
      const { run } = await client.request(`query($id: ID!) { run(id: $id) { createdAt } }`, { id: later[0] });
      const since = JSON.parse((await weft('runs', '--since', run.createdAt, '-o', 'json')).stdout);
      expect(since.map((x: { id: string }) => x.id)).toEqual([later[1], later[0]]);
    });

    it('prints the same runs as YAML', async () => {
      const json = JSON.parse((await weft('runs', '--limit', '3', '-o', 'json')).stdout);
      expect(YAML.parse((await weft('runs', '--limit', '3', '-o', 'yaml')).stdout)).toEqual(json);
    });
  });

  describe('workflows', () => {
    it('lists each workflow with its default, latest and number of versions', async () => {
      const lines = (await weft('workflows')).stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+NAME\s+DEFAULT\s+LATEST\s+VERSIONS\s+UPDATED$/);
      expect(lines.find((l) => l.startsWith('quick '))).toMatch(/^quick\s+-\s+2\s+2\s+2\s+\S+Z$/);
      await client.request(`mutation { setDefaultVersion(workflowId: "quick", version: 1) { id } }`);
      try {
        expect((await weft('workflows')).stdout.split('\n').find((l) => l.startsWith('quick '))).toMatch(/^quick\s+-\s+1 \(pinned\)\s+2\s+2\s+\S+Z$/);
        const json = JSON.parse((await weft('workflows', '-o', 'json')).stdout);
        expect(json.find((w: { id: string }) => w.id === 'quick')).toMatchObject({
          defaultVersion: 1,
          pinnedVersion: 1,
          latestVersion: 2,
          versions: [expect.objectContaining({ version: 1, deprecated: false }), expect.objectContaining({ version: 2 })],
        });
        expect(json.map((w: { id: string }) => w.id).sort()).toEqual(['approval', 'doomed', 'flaky', 'quick']);
      } finally {
        await client.request(`mutation { setDefaultVersion(workflowId: "quick", version: null) { id } }`);
      }
    });
  });

  describe('attempts, counted from 1 for people', () => {
    it('run-status shows the attempt that succeeded as 2 of 3, and -o json/yaml the API values', async () => {
      const r = await weft('run-status', flakyRun);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^run\\s+${flakyRun}\\nworkflow\\s+flaky version 1\\nstatus\\s+SUCCEEDED\\n`));
      expect(r.stdout).toMatch(/\nNODE\s+STATUS\s+ATTEMPT\s+ITERATIONS\s+DETAIL\nfetch\s+COMPLETED\s+2 of 3\n/);
      const json = JSON.parse((await weft('run-status', flakyRun, '-o', 'json')).stdout);
      expect(json.tasks).toEqual([expect.objectContaining({ nodeId: 'fetch', status: 'COMPLETED', attempt: 1 })]);
      expect(YAML.parse((await weft('run-status', flakyRun, '-o', 'yaml')).stdout)).toEqual(json);
    });

    it('history lists each event with its attempt of the limit; -o json is the API history', async () => {
      const r = await weft('history', flakyRun);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^SEQ\s+TIME\s+EVENT\s+NODE\s+ATTEMPT\s+DETAIL$/);
      expect(lines[1]).toMatch(/^1\s+\S+\s+RunStarted\s+-\s+-\s+→ CreateTask fetch, DispatchTask fetch$/);
      expect(lines[2]).toMatch(/^2\s+\S+\s+NodeFailed\s+fetch\s+1 of 3\s+error: .*503.* → RetryTask fetch$/);
      expect(lines[3]).toMatch(/^3\s+\S+\s+NodeCompleted\s+fetch\s+2 of 3\s+→ CompleteTask fetch, FinishRun SUCCEEDED$/);
      const { run } = await client.request(`query($id: ID!) { run(id: $id) { history { seq type at nodeId attempt payload actions ignored error } } }`, {
        id: flakyRun,
      });
      expect(JSON.parse((await weft('history', flakyRun, '-o', 'json')).stdout)).toEqual(run.history);
    });

    it('the schema says that attempts count from 0', async () => {
      const { __type } = await client.request(`{ __type(name: "RunEvent") { fields { name description } } }`);
      expect(__type.fields.find((f: { name: string }) => f.name === 'attempt').description).toMatch(/counted from 0/);
      const task = await client.request(`{ __type(name: "Task") { fields { name description } } }`);
      expect(task.__type.fields.find((f: { name: string }) => f.name === 'attempt').description).toMatch(/counted from 0: 0 is the first execution/);
    });
  });

  describe('watch', () => {
    it('prints the progress and the outcome of a run that succeeded, exit code 0', async () => {
      const r = await weft('watch', flakyRun);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(
        `fetch: COMPLETED (attempt 2 of 3)\n${JSON.stringify({ status: 'SUCCEEDED', output: { fetch: { ok: true, calls: 2 } }, error: null }, null, 2)}\n`,
      );
    });

    it('exits 3 for a run that failed, as run --watch does', async () => {
      const watched = await weft('watch', doomedRun);
      expect(watched.code).toBe(3);
      expect(watched.stdout).toMatch(/^fetch: FAILED \(attempt 2 of 2; error: .*503.*\)\n/);
      const run = await weft(
        'run',
        'doomed',
        '--input',
        JSON.stringify({ key: `d2-${Date.now()}` }),
        '--config',
        JSON.stringify({ shop: e2e.shop.url }),
        '--watch',
      );
      expect(run.code).toBe(3);
      expect(run.stdout).toMatch(/^run \S+ RUNNING\n[\s\S]*"status": "FAILED"/);
    });

    it('follows a run live until it ends, one JSON object per update with -o json', async () => {
      const runId = await start(client, 'approval');
      await waitRun(client, runId, (r) => r.tasks.some((t: { status: string }) => t.status === 'WAITING'));
      const watching = weft('watch', runId, '-o', 'json');
      await new Promise((r) => setTimeout(r, 300));
      await client.request(`mutation { sendSignal(input: {runId: "${runId}", name: "approve", payload: {ok: true}}) { delivered } }`);
      const r = await watching;
      expect(r.code).toBe(0);
      const updates = r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(updates[0]).toMatchObject({ id: runId, status: 'RUNNING', tasks: [{ nodeId: 'approval', status: 'WAITING', awaitedSignal: 'approve' }] });
      expect(updates.at(-1)).toMatchObject({ status: 'SUCCEEDED', tasks: [{ nodeId: 'approval', status: 'COMPLETED' }] });
    });

    it('fails with the API error for an unknown run, exit code 1', async () => {
      const r = await weft('watch', '00000000-0000-4000-8000-000000000000');
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(/^error: NOT_FOUND: /);
    });
  });

  describe('input from files and contexts', () => {
    it('starts a run with --input @FILE and --config @FILE', async () => {
      await writeFile(join(dir, 'in.json'), JSON.stringify({ order_id: 7, items: ['pallet'] }));
      await writeFile(join(dir, 'config.json'), '{"region": "eu"}\n');
      const r = await weft('run', 'quick', '--input', `@${join(dir, 'in.json')}`, '--config', `@${join(dir, 'config.json')}`);
      expect(r.code).toBe(0);
      const runId = /^run (\S+) /.exec(r.stdout)![1];
      const { run } = await client.request(`query($id: ID!) { run(id: $id) { input config } }`, { id: runId });
      expect(run).toEqual({ input: { order_id: 7, items: ['pallet'] }, config: { region: 'eu' } });
    });

    it('talks to the API of the current context, given as the server root', async () => {
      const config = join(dir, 'config.yaml');
      const env = { WEFT_CONFIG: config, WEFT_URL: undefined, WEFT_API_KEY: undefined };
      const root = e2e.url.replace(/\/graphql$/, '');
      expect((await cli(env, 'context', 'add', 'e2e', '--url', root, '--api-key', apiKey)).code).toBe(0);
      const r = await cli(env, 'workflows', '-o', 'json');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(
        JSON.parse(r.stdout)
          .map((w: { id: string }) => w.id)
          .sort(),
      ).toEqual(['approval', 'doomed', 'flaky', 'quick']);
      const wrongKey = await cli({ ...env, WEFT_API_KEY: 'weft_not_a_key' }, 'workflows');
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stderr).toMatch(/^error: UNAUTHENTICATED/);
    });
  });
});

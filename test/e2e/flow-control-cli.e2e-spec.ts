import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WeftClient } from '@weft/client';
import { eventually } from '../support/faults.js';
import { getRun, iterations, jsNode, publish, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';
import { cli, type CliResult } from '../support/weft-cli.js';

/**
 * What a user of the `weft` commands sees of flow control on a whole Weft: a run cancelled or
 * queued by its concurrency key when `weft run` starts it, QUEUED runs in `weft runs`, held
 * for_each iterations in `weft run-status`, and a definition whose key is an unquoted YAML
 * template refused by `weft apply` as `weft validate` refuses it.
 */

/** The dispatch window of a queue no worker serves: the coordinator's default `dispatchWindowFloor`. */
const WINDOW_FLOOR = 8;

describe('flow control in the weft commands', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let dir: string;
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);
  const gate = { node_id: 'gate', type: 'WAIT_FOR_EVENT', spec: { event: 'go', timeout_seconds: 600 } };

  beforeAll(async () => {
    e2e = await startE2E();
    ({ client, apiKey } = await e2e.tenant('flow-cli'));
    dir = await mkdtemp(join(tmpdir(), 'weft-flow-cli-'));
    await publish(client, 'newest-out', { nodes: [gate], edges: [], concurrency: { key: '{{ input.customer }}', limit: 1, strategy: 'cancel_newest' } });
    await publish(client, 'one-at-a-time', { nodes: [gate], edges: [], concurrency: { key: '{{ input.customer }}', limit: 1 }, priority: 2 });
  }, 60_000);

  afterAll(async () => {
    await e2e?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('weft run prints why a run was cancelled at once, exit code 3, as for a watched run that did not succeed; run-status --watch follows it', async () => {
    await waitRun(client, await start(client, 'newest-out', { customer: 'acme' }), (r) => r.status === 'RUNNING');
    const r = await weft('run', 'newest-out', '--input', '{"customer": "acme"}');
    expect(r).toEqual({
      code: 3,
      stdout: expect.stringMatching(/^run \S+ CANCELLED: concurrency limit 1 reached for key "acme" \(cancel_newest\)\n$/),
      stderr: '',
    });
    // run-status --watch follows it as weft watch does: ended already, it is shown at once.
    const id = /^run (\S+)/.exec(r.stdout)![1]!;
    const watched = await weft('run-status', id, '--watch');
    expect(watched.code).toBe(3);
    expect(JSON.parse(watched.stdout)).toEqual({ status: 'CANCELLED', output: null, error: 'concurrency limit 1 reached for key "acme" (cancel_newest)' });
    expect((await weft('run-status', id, '--watch', '--mermaid')).code).toBe(2);
  });

  it('weft run, runs and run-status say a QUEUED run is queued, for how long and why', async () => {
    const running = await start(client, 'one-at-a-time', { customer: 'zeta' });
    await waitRun(client, running, (x) => x.status === 'RUNNING');
    const r = await weft('run', 'one-at-a-time', '--input', '{"customer": "zeta"}');
    const why = 'concurrency limit 1 reached for key "zeta" (1 active, 1 queued)';
    expect(r.code).toBe(0);
    const id = new RegExp(`^run (\\S+) QUEUED \\(CONCURRENCY_LIMIT: ${why.replace(/[()]/g, '\\$&')}\\)\\n$`).exec(r.stdout)?.[1];
    expect(id).toBeDefined();

    const listed = JSON.parse((await weft('runs', '--status', 'queued', '-o', 'json')).stdout);
    expect(listed).toEqual([
      expect.objectContaining({ id, status: 'QUEUED', priority: 2, concurrencyKey: 'zeta', waitReason: 'CONCURRENCY_LIMIT', waitDetail: why }),
    ]);
    const all = JSON.parse((await weft('runs', '--workflow', 'one-at-a-time', '-o', 'json')).stdout);
    expect(all.find((x: { id: string }) => x.id === running)).toMatchObject({
      status: 'RUNNING',
      priority: 2,
      concurrencyKey: 'zeta',
      waitReason: null,
      waitDetail: null,
    });

    const table = (await weft('runs', '--workflow', 'one-at-a-time')).stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(/^ID\s+WORKFLOW\s+VERSION\s+STATUS\s+PRIORITY\s+CREATED\s+DURATION\s+WAITING$/);
    expect(table.find((l) => l.startsWith(id!))).toMatch(new RegExp(`QUEUED\\s+2\\s+\\S+Z\\s+\\S+\\s+CONCURRENCY_LIMIT: ${why.replace(/[()]/g, '\\$&')}$`));
    expect(table.find((l) => l.startsWith(running))).toMatch(/RUNNING\s+2\s+\S+Z\s+\S+$/);

    const status = (await weft('run-status', id!)).stdout;
    expect(status).toMatch(/^finished\s+- \(queued for \S+\)$/m);
    expect(status).not.toContain('running for');
    expect(status).toMatch(new RegExp(`^waiting\\s+CONCURRENCY_LIMIT: ${why.replace(/[()]/g, '\\$&')}$`, 'm'));
  });

  it('weft run-status lists held for_each iterations with why they wait, and -o json has every iteration', async () => {
    const count = WINDOW_FLOOR + 3;
    await publish(client, 'fan-nowhere', { nodes: [{ ...jsNode('each', 'return {};'), queue: 'nowhere', for_each: '{{ input.xs }}' }], edges: [] });
    const id = await start(client, 'fan-nowhere', { xs: Array.from({ length: count }, (_, i) => i) });
    const fields = 'id status tasks { id nodeId iteration status waitReason waitDetail }';
    const run = await eventually('iterations of fan-nowhere held for a worker slot', async () => {
      const r = await getRun(client, id, fields);
      return iterations(r, 'each').filter((t: any) => t.waitReason === 'QUEUE_BACKLOG').length === count - WINDOW_FLOOR ? r : undefined;
    });
    // One held by a rate limit, as weft_dispatch holds it, its key's one start of the minute made
    // 10 s ago: the detail shows the window as it stands (next start when that start leaves it).
    const ratedTask = iterations(run, 'each').find((t: any) => t.status === 'QUEUED');
    await e2e.owner.query(`UPDATE tasks SET flow_rate_key = 'partner', flow_rate_limit = 1, flow_rate_per_seconds = 60 WHERE id = $1`, [ratedTask.id]);
    await e2e.owner.query(
      `UPDATE outbox SET hold_reason = 'RATE_LIMIT', hold_detail = 'as the pass wrote it', held_until = now() + interval '10 minutes' WHERE task_id = $1 AND enqueued_at IS NULL`,
      [ratedTask.id],
    );
    const [rated] = (await e2e.owner.query(
      `INSERT INTO flow_rate_starts (tenant_id, rate_key, started_at, task_id, attempt) SELECT tenant_id, 'partner', now() - interval '10 seconds', id, 0 FROM tasks WHERE id = $1 RETURNING started_at`,
      [ratedTask.id],
    )) as { started_at: Date }[];
    const detail = `rate limit "partner" 1 per 60 s, next start ${new Date(rated!.started_at.getTime() + 60_000).toISOString().slice(11)}`;

    const lines = (await weft('run-status', id)).stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('each '));
    expect(lines[at]).toMatch(new RegExp(`^each\\s+RUNNING\\s+-\\s+×${count}: .*\\b${count - WINDOW_FLOOR} queued`));
    const held = lines.slice(at + 1).filter((l) => l.startsWith('  each['));
    expect(held).toHaveLength(count - WINDOW_FLOOR);
    expect(held).toContainEqual(
      expect.stringMatching(new RegExp(`^ {2}each\\[${ratedTask.iteration}\\]\\s+QUEUED\\s+1 of 1\\s+RATE_LIMIT: rate limit "partner"`)),
    );
    expect(held.filter((l) => l.includes('QUEUE_BACKLOG: waiting for a worker slot on queue "nowhere"'))).toHaveLength(count - WINDOW_FLOOR - 1);

    const json = JSON.parse((await weft('run-status', id, '-o', 'json')).stdout);
    const node = json.tasks.find((t: { nodeId: string }) => t.nodeId === 'each');
    expect(node.iterationTasks).toHaveLength(count);
    expect(node.iterationTasks.find((t: { iteration: number }) => t.iteration === ratedTask.iteration)).toMatchObject({
      status: 'QUEUED',
      waitReason: 'RATE_LIMIT',
      waitDetail: detail,
    });
  });

  it('weft apply refuses a key written as an unquoted YAML template in the words of weft validate', async () => {
    const file = join(dir, 'unquoted.yaml');
    await writeFile(
      file,
      [
        'concurrency: {key: {{ input.customer }}, limit: 1}',
        'nodes:',
        '  - node_id: call',
        '    type: HTTP',
        '    spec: {url: "https://example.com"}',
        '    rate_limit:',
        '      key: {{ input.partner }}',
        '      limit: 5',
        '      per_seconds: 1',
        '',
      ].join('\n'),
    );
    const problems = [
      '  - concurrency.key: concurrency.key must be a string; YAML read the unquoted template {{ input.customer }} as a map: quote it, key: "{{ input.customer }}"',
      '  - nodes[0].rate_limit.key (node call): rate_limit.key must be a string; YAML read the unquoted template {{ input.partner }} as a map: quote it, key: "{{ input.partner }}"',
    ];
    const validated = await weft('validate', '-f', file);
    expect(validated).toEqual({ code: 1, stdout: [`${file}: 2 problems`, ...problems, ''].join('\n'), stderr: '' });
    const applied = await weft('apply', '-f', file);
    expect(applied).toEqual({ code: 1, stdout: '', stderr: ['error: BAD_USER_INPUT: invalid workflow definition: 2 problem(s)', ...problems, ''].join('\n') });

    const long = join(dir, 'long-key.yaml');
    await writeFile(long, `concurrency: {key: "${'k'.repeat(300)}", limit: 1}\nnodes: [{node_id: a, type: WAIT, spec: {duration_seconds: 1}}]\n`);
    expect((await weft('apply', '-f', long)).stderr).toBe(
      'error: BAD_USER_INPUT: invalid workflow definition: 1 problem(s)\n  - concurrency.key: concurrency.key is 300 characters; at most 256\n',
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, start, startE2E, waitRun, type E2E } from '../../../test/support/e2e-platform.js';
import { cli, type CliResult } from '../../../test/support/weft-cli.js';

/**
 * `weft webhooks` against a whole Weft (API, worker, scheduler) on the test database, with a
 * receiver on 127.0.0.1: create (the secret printed once, as JSON), list, deliveries after a run
 * failed, delete; a bad event is a usage error, an unknown id NOT_FOUND.
 */
describe('weft webhooks', () => {
  let e2e: E2E;
  let client: WeftClient;
  let apiKey: string;
  let server: Server;
  let url: string;
  const received: string[] = [];
  const weft = (...args: string[]): Promise<CliResult> => cli({ WEFT_URL: e2e.url, WEFT_API_KEY: apiKey }, ...args);

  beforeAll(async () => {
    e2e = await startE2E({ WEFT_WEBHOOK_BACKOFF_MS: 20 });
    ({ client, apiKey } = await e2e.tenant('cli-hooks'));
    await publish(client, 'fails', { nodes: [jsNode('boom', 'throw new Error("boom");')], edges: [] });
    server = createServer((req, res) => {
      received.push(String(req.headers['weft-event']));
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }, 120_000);
  afterAll(async () => {
    server?.close();
    await e2e?.close();
  });

  it('creates a webhook, shows its deliveries once a run failed, and deletes it', async () => {
    const created = await weft('webhooks', 'create', url, '--event', 'run.failed', '--event', 'run.timed_out');
    expect(created).toMatchObject({ code: 0, stderr: 'Store the secret now: it cannot be shown again.\n' });
    const hook = JSON.parse(created.stdout);
    expect(hook).toMatchObject({ url, events: ['run.failed', 'run.timed_out'], secret: expect.stringMatching(/^whsec_/) });

    const listed = await weft('webhooks', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID +URL +EVENTS +CREATED$/);
    expect(listed.stdout).toContain(`${hook.id}  ${url}  run.failed,run.timed_out`);
    const listedJson = JSON.parse((await weft('webhooks', 'list', '-o', 'json')).stdout);
    expect(listedJson).toEqual([{ id: hook.id, url, events: ['RUN_FAILED', 'RUN_TIMED_OUT'], createdAt: hook.createdAt }]);

    const run = await start(client, 'fails');
    await waitRun(client, run);
    let deliveries: any[] = [];
    for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      deliveries = JSON.parse((await weft('webhooks', 'deliveries', hook.id, '-o', 'json')).stdout);
      if (deliveries[0]?.status === 'DELIVERED') break;
    }
    expect(deliveries).toEqual([expect.objectContaining({ event: 'RUN_FAILED', runId: run, status: 'DELIVERED', attempts: 1, lastStatusCode: 204 })]);
    expect(received).toEqual(['run.failed']);
    const table = await weft('webhooks', 'deliveries', hook.id);
    expect(table.stdout).toMatch(new RegExp(`run\\.failed +${run} +DELIVERED +1 +204 +- `));

    expect(await weft('webhooks', 'delete', hook.id)).toMatchObject({ code: 0, stdout: `webhook ${hook.id} deleted\n` });
    expect((await weft('webhooks', 'list', '-o', 'json')).stdout.trim()).toBe('[]');
  });

  it('refuses an unknown event before asking the API, and an unknown webhook with NOT_FOUND', async () => {
    const bad = await weft('webhooks', 'create', url, '--event', 'run.exploded');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('run.exploded');
    const missing = await weft('webhooks', 'delete', '01900000-0000-7000-8000-000000000000');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('webhook 01900000-0000-7000-8000-000000000000 not found');
  });
});

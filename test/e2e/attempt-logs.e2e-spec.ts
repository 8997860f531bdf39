import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WeftClient } from '@weft/client';
import { jsNode, publish, rejection, start, startE2E, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * Attempt logs end to end: what a CODE node prints and what an HTTP node requests, kept per
 * attempt, stored by the coordinator and read back through `Task.attempts`; a sensitive node's
 * values never stored; another tenant reads nothing.
 */
describe('attempt logs end to end', () => {
  let e2e: E2E;
  let client: WeftClient;
  let server: Server;
  let base: string;
  let flakyHits = 0;

  const ATTEMPTS = `id status tasks { nodeId status attempt output error attempts { attempt logs startedAt finishedAt error } }`;
  const attemptsOf = (run: any, nodeId: string) => run.tasks.find((t: any) => t.nodeId === nodeId).attempts;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/flaky' && flakyHits++ === 0) res.writeHead(503).end('busy');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"served":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    e2e = await startE2E();
    ({ client } = await e2e.tenant('logs'));
  });
  afterAll(async () => {
    await e2e.close();
    await new Promise((r) => server.close(r));
  });

  it('keeps the last 64 KiB of a CODE node that prints 1 MiB, after a marker, and the run still succeeds with its result', async () => {
    // 65,536 lines of 16 bytes: the last 4,096 are kept, 983,040 bytes are cut.
    await publish(client, 'noisy', {
      nodes: [jsNode('noisy', 'for (let i = 0; i < 65536; i++) console.log("line " + String(i).padStart(10, "0")); return {ok: 1};')],
      edges: [],
    });
    const run = await waitRun(client, await start(client, 'noisy'), undefined, 60_000, ATTEMPTS);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.tasks[0].output).toEqual({ ok: 1 });
    const [only, ...more] = attemptsOf(run, 'noisy');
    expect(more).toEqual([]);
    expect(only).toMatchObject({ attempt: 0, error: null });
    expect(Date.parse(only.finishedAt)).toBeGreaterThanOrEqual(Date.parse(only.startedAt));
    const [marker, ...lines] = only.logs.split('\n');
    expect(marker).toBe('… 983,040 bytes cut …');
    expect(Buffer.byteLength(only.logs) - Buffer.byteLength(`${marker}\n`)).toBe(64 * 1024);
    expect(lines[0]).toBe('line 0000061440');
    expect(lines.at(-2)).toBe('line 0000065535');
  });

  it("never stores nor answers a sensitive node's resolved values in its logs", async () => {
    const secret = 'tok-9f8e7d6c5b4a';
    await publish(client, 'vault', {
      nodes: [
        {
          ...jsNode('vault', 'console.log("token " + input.token); console.error(JSON.stringify(input)); return {len: input.token.length};', {
            token: '{{input.token}}',
          }),
          sensitive: true,
        },
      ],
      edges: [],
    });
    const runId = await start(client, 'vault', { token: secret });
    const run = await waitRun(client, runId, undefined, 30_000, ATTEMPTS);
    expect(run.status).toBe('SUCCEEDED');
    const [attempt] = attemptsOf(run, 'vault');
    expect(attempt.logs).toBe('token <redacted>\n{"token":"<redacted>"}\n');
    expect(JSON.stringify(run)).not.toContain(secret);
    const stored = await e2e.owner.query(`SELECT logs FROM task_attempt_logs WHERE run_id = $1`, [runId]);
    expect(stored).toHaveLength(1);
    expect(stored[0].logs).not.toContain(secret);
  });

  it("records each HTTP attempt: method, url, status and duration, with the failed attempt's error", async () => {
    await publish(client, 'fetch', {
      nodes: [{ node_id: 'fetch', type: 'HTTP', spec: { url: `${base}/flaky` }, retry: { max_attempts: 2, backoff_seconds: 0.1 } }],
      edges: [],
    });
    const run = await waitRun(client, await start(client, 'fetch'), undefined, 30_000, ATTEMPTS);
    expect(run.status).toBe('SUCCEEDED');
    const attempts = attemptsOf(run, 'fetch').map((a: any) => ({ ...a, logs: a.logs.replace(/\(\d+ ms\)\n$/, '(N ms)\n') }));
    expect(attempts).toEqual([
      {
        attempt: 0,
        logs: `GET ${base}/flaky -> 503 (N ms)\n`,
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
        error: expect.stringContaining('returned status 503'),
      },
      { attempt: 1, logs: `GET ${base}/flaky -> 200 (N ms)\n`, startedAt: expect.any(String), finishedAt: expect.any(String), error: null },
    ]);
  });

  it('lists an attempt that printed nothing without logs, and no attempts for a node no worker runs', async () => {
    await publish(client, 'quiet', {
      nodes: [jsNode('quiet', 'return 1;'), { node_id: 'pause', type: 'WAIT', spec: { duration_seconds: 0.05 } }],
      edges: [{ from: 'quiet', to: 'pause' }],
    });
    const run = await waitRun(client, await start(client, 'quiet'), undefined, 30_000, ATTEMPTS);
    expect(run.status).toBe('SUCCEEDED');
    expect(attemptsOf(run, 'quiet')).toEqual([{ attempt: 0, logs: null, startedAt: null, finishedAt: expect.any(String), error: null }]);
    expect(attemptsOf(run, 'pause')).toEqual([]);
  });

  it("gives another tenant nothing of a run's logs", async () => {
    const runId = await start(client, 'fetch');
    await waitRun(client, runId);
    const other = (await e2e.tenant('other')).client;
    const err = await rejection(other.request(`query($id: ID!) { run(id: $id) { tasks { attempts { logs } } } }`, { id: runId }));
    expect(err.code).toBe('NOT_FOUND');
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { WeftClient } from '@weft/client';
import { startPlatform } from '@weft/cli';
import { createTestDatabase } from '../support/test-database.js';
import { stubServer } from '../support/faults.js';
import { publish, start, startE2E, testConfig, waitRun, type E2E } from '../support/e2e-platform.js';
import { freePort, get, waitForPort } from '../support/net.js';

/** The value of the series `name` whose labels include `labels` (summed when several match); 0 when none. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

describe('metrics, health and readiness', () => {
  let e2e: E2E;
  let client: WeftClient;
  let stub: Awaited<ReturnType<typeof stubServer>>;
  let root: string;
  let ops: string;

  beforeAll(async () => {
    stub = await stubServer((req, res) => {
      if (req.url?.startsWith('/broken')) res.writeHead(500).end('down');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    e2e = await startE2E({ WEFT_METRICS_PORT: 0 });
    root = e2e.url.replace(/\/graphql$/, '');
    ops = e2e.metricsUrl!;
    ({ client } = await e2e.tenant('ops'));
    await publish(client, 'two-steps', {
      nodes: [
        { node_id: 'a', type: 'HTTP', spec: { url: `${stub.base}/a` } },
        { node_id: 'b', type: 'HTTP', spec: { url: `${stub.base}/b` } },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    await publish(client, 'always-fails', {
      nodes: [{ node_id: 'call', type: 'HTTP', spec: { url: `${stub.base}/broken` }, retry: { max_attempts: 2, backoff_seconds: 0.05 } }],
    });
    await publish(client, 'pause', { nodes: [{ node_id: 'nap', type: 'WAIT', spec: { duration_seconds: 0.2 } }] });
    await publish(client, 'unserved', { nodes: [{ node_id: 'stuck', type: 'HTTP', queue: 'nobody-serves', spec: { url: `${stub.base}/a` } }] });
  });
  afterAll(async () => {
    await e2e.close();
    await stub.close();
  });

  it('counts runs, attempts, retries, failures, timers and requests by the right amounts', async () => {
    const before = (await get(`${ops}/metrics`)).body;
    await client.request(`query { run(id: "00000000-0000-7000-8000-000000000000") { id } }`).catch(() => undefined);
    const ok = [await start(client, 'two-steps'), await start(client, 'two-steps')];
    const failed = await start(client, 'always-fails');
    const paused = await start(client, 'pause');
    for (const id of ok) expect((await waitRun(client, id)).status).toBe('SUCCEEDED');
    expect((await waitRun(client, failed)).status).toBe('FAILED');
    expect((await waitRun(client, paused)).status).toBe('SUCCEEDED');

    const scraped = await get(`${ops}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const after = scraped.body;
    const delta = (name: string, labels: Record<string, string> = {}) => metric(after, name, labels) - metric(before, name, labels);

    expect(delta('weft_runs_started_total', { workflow: 'two-steps' })).toBe(2);
    expect(delta('weft_runs_started_total', { workflow: 'always-fails' })).toBe(1);
    expect(delta('weft_runs_finished_total', { workflow: 'two-steps', status: 'SUCCEEDED' })).toBe(2);
    expect(delta('weft_runs_finished_total', { workflow: 'always-fails', status: 'FAILED' })).toBe(1);
    expect(delta('weft_runs_finished_total', { workflow: 'pause', status: 'SUCCEEDED' })).toBe(1);
    expect(delta('weft_run_duration_seconds_count', { status: 'SUCCEEDED' })).toBe(3);
    // 2 runs × 2 nodes, and the failing node's 2 attempts.
    expect(delta('weft_task_attempts_total', { queue: 'http', node_type: 'HTTP' })).toBe(6);
    expect(delta('weft_task_retries_total', { queue: 'http', node_type: 'HTTP' })).toBe(1);
    expect(delta('weft_task_failures_total', { queue: 'http', node_type: 'HTTP', error_class: 'http_status' })).toBe(2);
    expect(delta('weft_task_execution_seconds_count', { queue: 'http', outcome: 'succeeded' })).toBe(4);
    expect(delta('weft_task_execution_seconds_count', { queue: 'http', outcome: 'failed' })).toBe(2);
    expect(delta('weft_task_report_seconds_count', { queue: 'http' })).toBe(6);
    // The WAIT's timer, and the retry's backoff (a timer of its own).
    expect(delta('weft_timer_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(delta('weft_api_request_duration_seconds_count', { field: 'startRun', type: 'mutation', outcome: 'ok' })).toBe(4);
    // The outcome is the code the caller got.
    expect(delta('weft_api_request_duration_seconds_count', { field: 'run', type: 'query', outcome: 'NOT_FOUND' })).toBe(1);
    expect(metric(after, 'weft_db_pool_max')).toBe(10);
    expect(metric(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(after).not.toContain(ok[0]);
  });

  it('reports a queue nobody serves: its backlog and how long its oldest task waits', async () => {
    const runId = await start(client, 'unserved');
    await new Promise((r) => setTimeout(r, 300));
    const text = (await get(`${ops}/metrics`)).body;
    expect(metric(text, 'weft_queue_backlog', { queue: 'nobody-serves' })).toBe(1);
    expect(metric(text, 'weft_queue_running', { queue: 'nobody-serves' })).toBe(0);
    expect(metric(text, 'weft_queue_oldest_pending_age_seconds', { queue: 'nobody-serves' })).toBeGreaterThan(0.2);
    expect(text).toMatch(/^weft_outbox_unsent \d+$/m);
    await client.request(`mutation($i: CancelRunInput!) { cancelRun(input: $i) { id } }`, { i: { runId } });
  });

  it('keeps /metrics and /readyz off the API’s public port: they are on the ops listener, on loopback', async () => {
    expect(new URL(ops).hostname).toBe('127.0.0.1');
    expect(new URL(ops).port).not.toBe(new URL(root).port);
    expect((await get(`${root}/metrics`)).status).toBe(404);
    expect((await get(`${root}/readyz`)).status).toBe(404);
    // A bare liveness stays on the public port, for a load balancer.
    expect(await get(`${root}/healthz`)).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect((await get(`${ops}/metrics`)).status).toBe(200);
    expect(await get(`${ops}/readyz`)).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(await get(`${ops}/healthz`)).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });
});

describe('the listener of a process without the API', () => {
  it('serves metrics and health on WEFT_METRICS_PORT, and is not ready while Redis is down or the schema is behind', async () => {
    const db = await createTestDatabase();
    const worker = await startPlatform(testConfig(db, { WEFT_METRICS_PORT: 0 }), { worker: true, host: '127.0.0.1' });
    // A Redis of its own, stopped while the process runs (the shared one must stay up).
    const port = await freePort();
    const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitForPort(port);
    const noRedis = await startPlatform(testConfig(db, { WEFT_METRICS_PORT: 0, REDIS_URL: `redis://127.0.0.1:${port}` }), { host: '127.0.0.1' });
    try {
      expect((await get(`${noRedis.metricsUrl}/readyz`)).status).toBe(200);
      redis.kill('SIGKILL');
      await new Promise((r) => redis.once('exit', r));
      await new Promise((r) => setTimeout(r, 1_100)); // past the reuse of the last answer
      expect(worker.url).toBeUndefined();
      expect(await get(`${worker.metricsUrl}/healthz`)).toMatchObject({ status: 200 });
      expect((await get(`${worker.metricsUrl}/readyz`)).status).toBe(200);
      const text = (await get(`${worker.metricsUrl}/metrics`)).body;
      expect(text).toContain('# TYPE weft_task_attempts_total counter');
      // Queue gauges come from the scheduler's processes only.
      expect(text).not.toContain('weft_queue_backlog');

      // Which check is down, and nothing of why (the address of Redis, the driver's message).
      const down = await get(`${noRedis.metricsUrl}/readyz`);
      expect(down).toMatchObject({ status: 503, body: '{"status":"down","failing":["redis"]}' });

      await db.owner.query('DROP FUNCTION weft_queue_stats(timestamptz)');
      await new Promise((r) => setTimeout(r, 1_100));
      const behind = await get(`${worker.metricsUrl}/readyz`);
      expect(behind).toMatchObject({ status: 503, body: '{"status":"down","failing":["database"]}' });
      expect((await get(`${worker.metricsUrl}/healthz`)).status).toBe(200);
    } finally {
      redis.kill('SIGKILL');
      await noRedis.close();
      await worker.close();
      await db.drop();
    }
  });
});

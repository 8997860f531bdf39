import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WeftClient } from '@weft/client';
import { publish, start, startE2E, statuses, task, waitRun, type E2E } from '../support/e2e-platform.js';

/**
 * A node's retry policy by outcome on a whole Weft: an HTTP status listed in
 * `retry.non_retryable` fails the node at its first attempt (its error edge still applies), one
 * not listed is retried, a class never matches 408, 425 or 429; a CODE handler raising
 * NonRetryableError, in Python and in JavaScript, fails at its first attempt.
 */
describe('retry policy by outcome end to end', () => {
  let e2e: E2E;
  let client: WeftClient;
  let server: Server;
  let base: string;
  /** Requests per path of the local service, which answers `/status/<code>/<name>` with that status. */
  const hits = new Map<string, number>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const code = Number(/^\/status\/(\d{3})\//.exec(path)?.[1] ?? 500);
      res.writeHead(code, { 'content-type': 'text/plain' }).end(`answered ${code}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Loopback is allowed: the platform runs with WEFT_HTTP_ALLOW_PRIVATE.
    e2e = await startE2E();
    ({ client } = await e2e.tenant('retry-outcomes'));
  }, 60_000);

  afterAll(async () => {
    await e2e?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** Runs a one-node workflow calling `/status/<code>/<name>` with `non_retryable`, three attempts; the run as it ended. */
  async function call(name: string, code: number, nonRetryable: unknown[]): Promise<any> {
    await publish(client, name, {
      nodes: [{ node_id: 'charge', type: 'HTTP', spec: { url: `${base}/status/${code}/${name}` }, retry: { max_attempts: 3, non_retryable: nonRetryable } }],
      edges: [],
    });
    return waitRun(client, await start(client, name));
  }

  it('a listed 404 fails at its first attempt, saying it was not retried and why', async () => {
    const run = await call('listed-404', 404, [404]);
    expect(run.status).toBe('FAILED');
    expect(hits.get('/status/404/listed-404')).toBe(1);
    expect(task(run, 'charge')).toMatchObject({ status: 'FAILED', attempt: 0 });
    expect(task(run, 'charge').error).toBe(`HTTP GET ${base}/status/404/listed-404 returned status 404: answered 404 (non-retryable: 404, not retried)`);
  });

  it('a 503 with 4xx listed is retried up to max_attempts', async () => {
    const run = await call('class-503', 503, ['4xx']);
    expect(run.status).toBe('FAILED');
    expect(hits.get('/status/503/class-503')).toBe(3);
    expect(task(run, 'charge').attempt).toBe(2);
    expect(task(run, 'charge').error).not.toContain('non-retryable');
  });

  it('a 429 with "4xx" listed is retried; listed explicitly, it is not', async () => {
    const byClass = await call('class-429', 429, ['4xx']);
    expect([byClass.status, hits.get('/status/429/class-429')]).toEqual(['FAILED', 3]);
    const explicit = await call('explicit-429', 429, ['4xx', '429']);
    expect([explicit.status, hits.get('/status/429/explicit-429')]).toEqual(['FAILED', 1]);
    expect(task(explicit, 'charge').error).toMatch(/\(non-retryable: 429, not retried\)$/);
  });

  it("takes the node's error edge after a non-retryable failure, as after any final one", async () => {
    await publish(client, 'compensated', {
      nodes: [
        {
          node_id: 'charge',
          type: 'HTTP',
          spec: { url: `${base}/status/410/compensated` },
          retry: { max_attempts: 5, backoff_seconds: 30, non_retryable: ['4xx'] },
        },
        { node_id: 'refund', type: 'CODE', runtime: 'js', spec: { code: 'function handler() { return { refunded: true }; }' } },
      ],
      edges: [{ from: 'charge', to: 'refund', on_error: true }],
    });
    const run = await waitRun(client, await start(client, 'compensated'));
    expect(run.status).toBe('SUCCEEDED');
    expect(statuses(run)).toEqual({ charge: 'FAILED', refund: 'COMPLETED' });
    expect(hits.get('/status/410/compensated')).toBe(1);
  });

  it.each([
    [
      'python',
      'def handler(input):\n    raise NonRetryableError("card declined")\n',
      /^NonRetryableError: card declined \(handler\.py, line 2, .*\(non-retryable error, not retried\)$/,
    ],
    [
      'js',
      'function handler() {\n  throw new NonRetryableError("card declined");\n}\n',
      /^NonRetryableError: card declined \(handler\.js:2:9\) \(non-retryable error, not retried\)$/,
    ],
  ])('a %s handler raising NonRetryableError fails at its first attempt', async (runtime, code, error) => {
    await publish(client, `code-${runtime}`, {
      nodes: [{ node_id: 'charge', type: 'CODE', runtime, spec: { code }, retry: { max_attempts: 3 } }],
      edges: [],
    });
    const run = await waitRun(client, await start(client, `code-${runtime}`));
    expect(run.status).toBe('FAILED');
    expect(task(run, 'charge')).toMatchObject({ status: 'FAILED', attempt: 0 });
    expect(task(run, 'charge').error).toMatch(error);
  });
});

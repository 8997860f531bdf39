import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpExecutor, addressRefusal } from './http.executor.js';
import { failure } from './execution-failure.testing.js';

const ctx = { taskId: 't001', nodeId: 'fetch', attempt: 1 };

/** A local service with a route per behaviour; `hits` counts requests per path. */
function startServer(): Promise<{ server: Server; base: string; port: number; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://local');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      switch (url.pathname) {
        case '/json':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"total": 1250, "items": [1, 2]}');
          return;
        case '/text':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello, world');
          return;
        case '/json-as-text':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('{"ok":true}');
          return;
        case '/empty':
          res.writeHead(204).end();
          return;
        case '/status': {
          const code = Number(url.searchParams.get('code'));
          res.writeHead(code, { 'content-type': 'text/plain', 'x-reason': 'test' }).end(`status ${code} from upstream`);
          return;
        }
        case '/echo':
          res.writeHead(201, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              method: req.method,
              contentType: req.headers['content-type'] ?? null,
              auth: req.headers.authorization ?? null,
              body: body === '' ? null : JSON.parse(body),
            }),
          );
          return;
        case '/slow':
          setTimeout(() => res.writeHead(200).end('late'), 5000).unref();
          return;
        case '/redirect':
          res.writeHead(Number(url.searchParams.get('code') ?? 302), { location: url.searchParams.get('to') ?? '/' }).end();
          return;
        case '/loop':
          res.writeHead(302, { location: '/loop' }).end();
          return;
        case '/big':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(4096));
          return;
        case '/secret':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"s3cr3t"}');
          return;
        default:
          res.writeHead(404).end('not found');
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, base: `http://127.0.0.1:${port}`, port, hits });
    });
  });
}

describe('HttpExecutor', () => {
  let server: Server;
  let base: string;
  let port: number;
  let hits: Map<string, number>;
  // The test service is on loopback: allow-list exactly that host, so the guard stays active for others.
  const http = new HttpExecutor({ allowPrivate: false, allowHosts: ['127.0.0.1'] });
  const strict = new HttpExecutor({ allowPrivate: false });
  const open = new HttpExecutor({ allowPrivate: true });
  const small = new HttpExecutor({ allowPrivate: true, maxResponseBytes: 1024 });

  beforeAll(async () => {
    ({ server, base, port, hits } = await startServer());
  });

  afterAll(async () => {
    await Promise.all([http.close(), strict.close(), open.close(), small.close()]);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('parses a JSON response into the output', async () => {
    expect(await http.execute({ url: `${base}/json` }, ctx)).toEqual({ total: 1250, items: [1, 2] });
  });

  it('returns text as text, and text that parses as JSON as JSON', async () => {
    expect(await http.execute({ url: `${base}/text` }, ctx)).toBe('hello, world');
    expect(await http.execute({ url: `${base}/json-as-text` }, ctx)).toEqual({ ok: true });
    expect(await http.execute({ url: `${base}/empty` }, ctx)).toBeNull();
  });

  it('gives status, headers and body with response: full', async () => {
    const out = (await http.execute({ url: `${base}/json`, response: 'full' }, ctx)) as {
      status: number;
      headers: Record<string, string>;
      body: unknown;
    };
    expect(out.status).toBe(200);
    expect(out.headers['content-type']).toBe('application/json');
    expect(out.body).toEqual({ total: 1250, items: [1, 2] });
  });

  it('fails the attempt on a non-2xx status, naming method, url, status and body', async () => {
    const err = await failure(http.execute({ url: `${base}/status?code=503` }, ctx));
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(`HTTP GET ${base}/status?code=503 returned status 503: status 503 from upstream`);
  });

  it('fails for good on a status the node lists as non-retryable, saying it was not retried and why', async () => {
    const listed = await failure(http.execute({ url: `${base}/status?code=404` }, { ...ctx, nonRetryable: [404] }));
    expect(listed.retryable).toBe(false);
    expect(listed.kind).toBe('http_status');
    expect(listed.message).toBe(`HTTP GET ${base}/status?code=404 returned status 404: status 404 from upstream (non-retryable: 404, not retried)`);
    const byClass = await failure(http.execute({ url: `${base}/status?code=404` }, { ...ctx, nonRetryable: ['4xx'] }));
    expect([byClass.retryable, byClass.message.endsWith('(non-retryable: 4xx, not retried)')]).toEqual([false, true]);
    // A class leaves the other class, and 408, 425 and 429, to the retry policy; an explicit 429 does not.
    for (const code of [503, 429, 408, 425])
      expect((await failure(http.execute({ url: `${base}/status?code=${code}` }, { ...ctx, nonRetryable: ['4xx'] }))).retryable).toBe(true);
    expect((await failure(http.execute({ url: `${base}/status?code=429` }, { ...ctx, nonRetryable: ['4xx', 429] }))).retryable).toBe(false);
  });

  it('accepts the statuses listed in accept_status, replacing 2xx', async () => {
    expect(await http.execute({ url: `${base}/status?code=404`, accept_status: [404] }, ctx)).toBe('status 404 from upstream');
    expect(await http.execute({ url: `${base}/status?code=409`, accept_status: ['2xx', '4xx'] }, ctx)).toBe('status 409 from upstream');
    expect(await http.execute({ url: `${base}/status?code=418`, accept_status: ['400-499'] }, ctx)).toBe('status 418 from upstream');
    const err = await failure(http.execute({ url: `${base}/json`, accept_status: [404] }, ctx));
    expect(err.message).toContain('returned status 200');
    const bad = await failure(http.execute({ url: `${base}/json`, accept_status: ['2yy'] }, ctx));
    expect(bad.retryable).toBe(false);
  });

  it('sends an object body as JSON and round-trips it', async () => {
    const out = await http.execute({ url: `${base}/echo`, method: 'post', body: { order: 7, lines: [{ sku: 'a', qty: 2 }] } }, ctx);
    expect(out).toEqual({
      method: 'POST',
      contentType: 'application/json',
      auth: null,
      body: { order: 7, lines: [{ sku: 'a', qty: 2 }] },
    });
  });

  it('sends a string body as is, keeping a content-type set by the spec', async () => {
    const out = await http.execute({ url: `${base}/echo`, method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: '[1,2,3]' }, ctx);
    expect(out).toMatchObject({ method: 'PUT', contentType: 'text/plain', body: [1, 2, 3] });
  });

  it('fails the attempt when timeout_seconds elapses', async () => {
    const err = await failure(http.execute({ url: `${base}/slow`, timeout_seconds: 0.3 }, ctx));
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(`HTTP GET ${base}/slow timed out after 0.3s`);
  });

  it('refuses loopback without allowPrivate, and allows it with it', async () => {
    const before = hits.get('/secret') ?? 0;
    const err = await failure(strict.execute({ url: `${base}/secret` }, ctx));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('refused to connect to 127.0.0.1: a loopback address');
    expect(hits.get('/secret') ?? 0).toBe(before);

    expect(await open.execute({ url: `${base}/secret` }, ctx)).toEqual({ secret: 's3cr3t' });
  });

  it('refuses a host name that resolves to loopback (checked after DNS resolution)', async () => {
    const before = hits.get('/secret') ?? 0;
    const err = await failure(http.execute({ url: `http://localhost:${port}/secret` }, ctx));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/refused to connect to localhost \((127\.0\.0\.1|::1)\): a loopback address/);
    expect(hits.get('/secret') ?? 0).toBe(before);
  });

  it('refuses IPv6 loopback and IPv4-mapped loopback literals', async () => {
    const v6 = await failure(strict.execute({ url: `http://[::1]:${port}/secret` }, ctx));
    expect(v6.message).toContain('a loopback address');
    const mapped = await failure(strict.execute({ url: `http://[::ffff:127.0.0.1]:${port}/secret` }, ctx));
    expect(mapped.message).toContain('a loopback address');
    expect(mapped.retryable).toBe(false);
  });

  it('follows a same-host redirect', async () => {
    expect(await http.execute({ url: `${base}/redirect?to=/json` }, ctx)).toEqual({ total: 1250, items: [1, 2] });
  });

  it('turns a POST into a GET on 303 and keeps it on 307', async () => {
    const see = await http.execute({ url: `${base}/redirect?code=303&to=/echo`, method: 'POST', body: { a: 1 } }, ctx);
    expect(see).toMatchObject({ method: 'GET', contentType: null, body: null });
    const keep = await http.execute({ url: `${base}/redirect?code=307&to=/echo`, method: 'POST', body: { a: 1 } }, ctx);
    expect(keep).toMatchObject({ method: 'POST', contentType: 'application/json', body: { a: 1 } });
  });

  it('refuses a redirect to a private address when only the first host is allow-listed', async () => {
    const before = hits.get('/secret') ?? 0;
    const target = encodeURIComponent(`http://localhost:${port}/secret`);
    const err = await failure(http.execute({ url: `${base}/redirect?to=${target}` }, ctx));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('refused to connect to localhost');
    const literal = encodeURIComponent(`http://[::1]:${port}/secret`);
    const err6 = await failure(http.execute({ url: `${base}/redirect?to=${literal}` }, ctx));
    expect(err6.message).toContain('refused to connect to ::1');
    expect(hits.get('/secret') ?? 0).toBe(before);
  });

  it('gives up after 5 redirects', async () => {
    const err = await failure(http.execute({ url: `${base}/loop` }, ctx));
    expect(err.message).toBe(`HTTP GET ${base}/loop: more than 5 redirects`);
  });

  it('fails when the response body exceeds maxResponseBytes', async () => {
    const err = await failure(small.execute({ url: `${base}/big` }, ctx));
    expect(err.message).toContain('response body exceeds 1024 bytes (OUTPUT_TOO_LARGE)');
  });

  it('rejects specs that can never work as non-retryable', async () => {
    for (const input of [{}, { url: '' }, { url: 'not a url' }, { url: 'ftp://example.com/x' }, 'x']) {
      const err = await failure(http.execute(input, ctx));
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/^invalid HTTP spec: /);
    }
  });

  it('reports a refused connection as retryable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await failure(open.execute({ url: `http://127.0.0.1:${freePort}/` }, ctx));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('ECONNREFUSED');
  });
});

describe('addressRefusal', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private address (RFC 1918)'],
    ['172.16.0.1', 'a private address (RFC 1918)'],
    ['192.168.1.1', 'a private address (RFC 1918)'],
    ['169.254.169.254', 'the cloud metadata address (link-local)'],
    ['169.254.1.1', 'a link-local address'],
    ['0.0.0.0', 'an unspecified address'],
    ['100.64.0.1', 'a carrier-grade NAT address (100.64.0.0/10)'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fd00::1', 'a private address (unique local, fc00::/7)'],
    ['fe80::1', 'a link-local address'],
    ['ff02::1', 'a multicast address'],
    ['::ffff:127.0.0.1', 'a loopback address, embedded in ::ffff:7f00:1'],
    ['::ffff:169.254.169.254', 'the cloud metadata address (link-local), embedded in ::ffff:a9fe:a9fe'],
    ['64:ff9b::10.0.0.1', 'a private address (RFC 1918), embedded in 64:ff9b::a00:1'],
    ['2002:7f00:1::1', 'a loopback address, embedded in 2002:7f00:1::1'],
  ])('refuses %s', (address, why) => {
    expect(addressRefusal(address)).toBe(why);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8'])('allows public %s', (address) => {
    expect(addressRefusal(address)).toBeNull();
  });
});

describe('the class of a refused address', () => {
  it('is refused_address, for the failure metrics', async () => {
    const { RefusedAddressError } = await import('./http-address-guard.js');
    const { failureKind } = await import('./executor.js');
    expect(failureKind(new RefusedAddressError('refused', 'a loopback address'))).toBe('refused_address');
  });
});

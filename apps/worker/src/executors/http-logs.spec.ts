import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AttemptLog } from './attempt-log.js';
import { HttpExecutor } from './http.executor.js';
import { failure } from './execution-failure.testing.js';
import { redactLog } from '../processors/redact-inputs.js';

let server: Server;
let base: string;
const http = new HttpExecutor({ allowPrivate: true });

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (path === '/moved') res.writeHead(302, { location: '/ok' }).end();
    else if (path === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"fine":true}');
    else res.writeHead(503).end('down');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await http.close();
  await new Promise((r) => server.close(r));
});

/** A log line with its duration replaced, the one part that is not known ahead. */
const lines = (log: AttemptLog) =>
  log
    .render()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/\(\d+ ms\)$/, '(N ms)'));

describe('HTTP attempt log lines', () => {
  it('records each request sent, a redirect hop included, with its method, url, status and duration', async () => {
    const log = new AttemptLog();
    await expect(http.execute({ url: `${base}/moved`, method: 'POST', body: { a: 1 } }, { taskId: 't', nodeId: 'n', attempt: 0, log })).resolves.toEqual({
      fine: true,
    });
    expect(lines(log)).toEqual([`POST ${base}/moved -> 302 (N ms)`, `GET ${base}/ok -> 200 (N ms)`]);
  });

  it('records the status of an answer that fails the attempt', async () => {
    const log = new AttemptLog();
    await failure(http.execute({ url: `${base}/broken` }, { taskId: 't', nodeId: 'n', attempt: 0, log }));
    expect(lines(log)).toEqual([`GET ${base}/broken -> 503 (N ms)`]);
  });

  it('records the error of a request that got no answer', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const log = new AttemptLog();
    await failure(http.execute({ url: `http://127.0.0.1:${port}/gone` }, { taskId: 't', nodeId: 'n', attempt: 0, log }));
    expect(lines(log)[0]).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/gone -> failed: .*ECONNREFUSED.* \\(N ms\\)$`));
  });

  it("never shows a url's user name and password, a redirect hop's included", async () => {
    const log = new AttemptLog();
    const withUser = base.replace('http://', 'http://alice:pa55word@');
    await http.execute({ url: `${withUser}/moved?page=2` }, { taskId: 't', nodeId: 'n', attempt: 0, log });
    expect(lines(log)).toEqual([`GET ${base}/moved?page=2 -> 302 (N ms)`, `GET ${base}/ok -> 200 (N ms)`]);
    expect(log.render()).not.toMatch(/alice|pa55word/);
  });

  it('shows no url of a sensitive node', async () => {
    const log = new AttemptLog();
    await http.execute({ url: `${base}/ok?token=s3cret-token` }, { taskId: 't', nodeId: 'n', attempt: 0, sensitive: true, log });
    expect(lines(log)).toEqual(['GET <redacted url> -> 200 (N ms)']);
  });
});

describe('redactLog', () => {
  const input = { code: 'x', token: 's3cret-token' };

  it('replaces every input value in the text', () => {
    expect(redactLog('using s3cret-token and "s3cret-token"\n', input, false)).toBe('using <redacted> and "<redacted>"\n');
  });

  it('redacts the end of a value at the beginning of a cut tail', () => {
    expect(redactLog('t-token was printed\n', input, true)).toBe('<redacted> was printed\n');
    expect(redactLog('t-token was printed\n', input, false)).toBe('t-token was printed\n');
  });
});

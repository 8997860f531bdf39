import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { MAX_ERROR_CHARS } from '@weft/engine';
import { HttpExecutor } from '../../apps/worker/src/executors/http.executor.js';
import { failure } from '../../apps/worker/src/executors/execution-failure.testing.js';
import { redactInputs } from '../../apps/worker/src/processors/redact-inputs.js';
import { stubServer } from '../support/faults.js';

/**
 * What a sensitive node's failed attempt may say, at its two sources: the HTTP executor (method,
 * status, error code or class; never url, headers or body) and the worker's redaction of every
 * resolved input value from any executor's message.
 */
const SECRET = 'SUPERSECRET-TOKEN-123';
const sensitive = { taskId: 't001', nodeId: 'secret', attempt: 1, sensitive: true };
const plain = { taskId: 't001', nodeId: 'public', attempt: 1 };

describe('the HTTP executor on a sensitive node', () => {
  let stub: Awaited<ReturnType<typeof stubServer>>;
  let closedPort: number;
  const http = new HttpExecutor({ allowPrivate: true });
  const guarded = new HttpExecutor({ allowPrivate: false });

  beforeAll(async () => {
    stub = await stubServer((req, res) => {
      if (req.url!.startsWith('/loop')) return void res.writeHead(302, { location: req.url }).end();
      if (req.url!.startsWith('/slow')) return void setTimeout(() => res.writeHead(200).end(), 2_000).unref();
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`failed: ${req.url} ${req.headers.authorization}`);
    });
    // A port nothing listens on any more.
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closedPort = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
  });
  afterAll(async () => {
    await Promise.all([http.close(), guarded.close(), stub.close()]);
  });

  const spec = (path: string, extra: Record<string, unknown> = {}) => ({
    url: `${stub.base}${path}?token=${SECRET}`,
    headers: { authorization: `Bearer ${SECRET}` },
    ...extra,
  });

  it('names the method and the status of a refused answer, not the url, headers or body', async () => {
    const err = await failure(http.execute(spec('/fail', { method: 'POST', body: { key: SECRET } }), sensitive));
    expect(err.message).toBe('HTTP POST <redacted url> returned status 500');
    // Without `sensitive`, the same failure names the url and quotes the body.
    expect((await failure(http.execute(spec('/fail'), plain))).message).toContain(`${stub.base}/fail?token=${SECRET} returned status 500: failed:`);
  });

  it('says what went wrong without the url on every other failure', async () => {
    const messages = [
      (await failure(http.execute({ url: `http://127.0.0.1:${closedPort}/x?token=${SECRET}` }, sensitive))).message,
      (await failure(http.execute(spec('/slow', { timeout_seconds: 0.2 }), sensitive))).message,
      (await failure(http.execute(spec('/loop'), sensitive))).message,
      (await failure(guarded.execute(spec('/fail'), sensitive))).message,
      (await failure(http.execute({ url: `not a url ${SECRET}` }, sensitive))).message,
      (await failure(http.execute({ url: stub.base, method: `${SECRET} X` }, sensitive))).message,
    ];
    expect(messages).toEqual([
      'HTTP GET <redacted url> failed: ECONNREFUSED',
      'HTTP GET <redacted url> timed out after 0.2s',
      'HTTP GET <redacted url>: more than 5 redirects',
      'HTTP GET <redacted url>: refused to connect to a loopback address (only public addresses are allowed)',
      'invalid HTTP spec: spec.url is not a valid URL',
      'invalid HTTP spec: spec.method is not a valid HTTP method',
    ]);
  });
});

describe('redactInputs', () => {
  const input = { code: 'function handler() {}', key: SECRET, nested: [{ note: 'line one\nline "two"' }], id: 'abc', n: 12345 };

  it('replaces every input string of 4 characters or more, also JSON-escaped or percent-encoded', () => {
    const message = `Error: bad key ${SECRET} (${encodeURIComponent(SECRET + ' ')}) in ${JSON.stringify(input)} for abc`;
    const out = redactInputs(message, { ...input, spaced: `${SECRET} ` });
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain('line one');
    expect(out).toContain('Error: bad key <redacted>');
    expect(out).toContain('"id":"abc"'); // shorter than 4 characters: an ordinary word
    expect(out).toContain('"n":<redacted>'); // a number prints as itself
  });

  it("catches the forms Python prints a value in: repr() escapes, json.dumps' \\uXXXX, nested keys, numbers", () => {
    const secrets = { ctrl: 'sk\u0001live_CTRL12345', uni: 'pässwört_UNI12345', map: { sk_live_KEYNAME123: 1 }, card: 4111111111111111 };
    // What Python itself prints for them, as a handler's exception would carry it.
    const printed = execFileSync(
      'python3',
      [
        '-c',
        'import json, sys\n' +
          'i = json.load(sys.stdin)\n' +
          'try:\n    float(i["ctrl"])\nexcept ValueError as e:\n    print(e)\n' +
          'print(json.dumps(i["uni"]))\n' +
          'print(repr(i["uni"]), ascii(i["uni"]))\n' +
          'print(str(list(i["map"].keys())))\n' +
          'print("n=" + str(i["card"]))\n',
      ],
      { input: JSON.stringify(secrets), encoding: 'utf8' },
    );
    const out = redactInputs(printed, { s: secrets.ctrl, t: secrets.uni, m: secrets.map, n: secrets.card });
    for (const leak of ['CTRL12345', 'UNI12345', 'KEYNAME123', '4111111111111111']) expect(out).not.toContain(leak);
    expect(out.split('\n').filter(Boolean)).toHaveLength(5);
  });

  it('cuts a long message to what the coordinator stores, redacting a value the cut splits', () => {
    for (let at = MAX_ERROR_CHARS - 120; at < MAX_ERROR_CHARS; at++) {
      const message = `${'x'.repeat(at)}${SECRET}${'\n'.repeat(20_000)}`;
      const out = redactInputs(message, input);
      expect(out.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
      expect(out).toMatch(/… \(truncated, 28\d\d\d chars\)$/);
      expect(out).not.toContain(SECRET.slice(0, 4));
    }
  });
});

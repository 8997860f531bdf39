import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { operation, WeftApiError, WeftClient } from './weft-client.js';

describe('the GraphQL client names what went wrong', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const reply = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      };
      if (req.url === '/too-large') return reply(413, JSON.stringify({ message: 'request entity too large' }));
      if (req.url === '/errors')
        return reply(
          200,
          JSON.stringify({
            errors: [{ message: 'bad', extensions: { code: 'BAD_USER_INPUT', problems: [{ nodeId: 'a', path: 'spec.url', message: 'missing' }] } }],
          }),
        );
      if (req.url === '/html') return reply(502, '<html>bad gateway</html>');
      reply(200, JSON.stringify({ data: { ok: true } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('returns data', async () => {
    expect(await new WeftClient(`${url}/ok`, 'k').request('{ ok }')).toEqual({ ok: true });
  });

  it('types the answer and the variables of an operation (checked by the typecheck), sending the text as it is', async () => {
    const ok = operation<{ ok: boolean }, { id: string }>('query Ok($id: ID!) { ok }');
    const data = await new WeftClient(`${url}/ok`).request(ok, { id: 'x' });
    const answer: boolean = data.ok;
    expect(answer).toBe(true);
    // @ts-expect-error: the operation's variables are { id: string }.
    await new WeftClient(`${url}/ok`).request(ok, { id: 1 });
    // @ts-expect-error: the operation's answer has no `missing`.
    expect(data.missing).toBeUndefined();
  });

  it('turns GraphQL errors into a WeftApiError listing the problems', async () => {
    const err = await new WeftClient(`${url}/errors`).request('{ x }').catch((e) => e);
    expect(err).toBeInstanceOf(WeftApiError);
    expect(err.code).toBe('BAD_USER_INPUT');
    expect(err.message).toContain('a spec.url: missing');
  });

  it('says once what several fields of one answer failed with alike', () => {
    const missing = { message: 'Workflow nope not found', extensions: { code: 'NOT_FOUND' } };
    expect(new WeftApiError([missing, { ...missing, path: ['workflow'] }, { message: 'other', extensions: { code: 'NOT_FOUND' } }]).message).toBe(
      'NOT_FOUND: Workflow nope not found\nNOT_FOUND: other',
    );
  });

  it('does not repeat a lone problem that says what the message says after its path', () => {
    const bad = {
      message: 'url: must be http or https',
      extensions: { code: 'BAD_USER_INPUT', problems: [{ path: 'url', message: 'must be http or https' }] },
    };
    expect(new WeftApiError([bad]).message).toBe('BAD_USER_INPUT: url: must be http or https');
    const more = { ...bad, extensions: { ...bad.extensions, problems: [{ path: 'events', message: 'must name one event' }] } };
    expect(new WeftApiError([more]).message).toBe('BAD_USER_INPUT: url: must be http or https\n  - events: must name one event');
  });

  it('reports an HTTP error without GraphQL errors, with its status', async () => {
    await expect(new WeftClient(`${url}/too-large`).request('{ x }')).rejects.toThrow('413 (request too large): request entity too large');
    await expect(new WeftClient(`${url}/html`).request('{ x }')).rejects.toThrow('answered 502 with non-JSON');
  });

  it('names the URL when the API cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(new WeftClient(`http://127.0.0.1:${port}/graphql`).request('{ x }')).rejects.toThrow(
      `cannot reach the Weft API at http://127.0.0.1:${port}/graphql (ECONNREFUSED)`,
    );
  });
});

import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { TenantRepository } from '@weft/persistence';
import { CoreModule } from '@weft/platform';
import { MAX_MESSAGE_BYTES, SocketServer, startApi, type RunningApi } from '@weft/api';
import { testConfig } from '../support/e2e-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * What a caller could do to the API over graphql-ws before (or without) authenticating: send
 * messages as large as `ws`'s 100 MiB default, which are buffered and parsed whole, open
 * connections without bound, fill every place with sockets that never authenticate, and hold
 * sockets by never answering the server's close. Messages are capped like HTTP bodies,
 * connections in all, per API key, and per remote address until authenticated, each refusal a
 * close code and reason; a connection that closes is released, and one the server closed is
 * destroyed when its peer does not answer. Caps here: 4 connections in all, 2 per key, 2 not yet
 * authenticated per address. Remote addresses are loopback ones (127.0.0.0/8). The API runs
 * alone on the test database.
 */

const MAX_CONNECTIONS = 4;
const MAX_PER_KEY = 2;
const MAX_PENDING = 2;
/**
 * How long a test waits for the server to destroy a socket whose peer never answers its close:
 * the server gives the close handshake 1 s; `ws`'s own default, 30 s, must not be what ends it.
 * Half of that, so a loaded machine has room and the default still cannot pass.
 */
const DESTROYED_BEFORE_WS_DEFAULT_MS = 15_000;
const PENDING_REASON = `TOO_MANY_PENDING_CONNECTIONS: this address holds its most unauthenticated graphql-ws connections (${MAX_PENDING})`;
const TOTAL_REASON = `TOO_MANY_CONNECTIONS: the API holds its most graphql-ws connections (${MAX_CONNECTIONS}); retry later`;

type Close = { code: number; reason: string };
/** A socket and what it got first: `ack` (connection_ack), `open` (not initialised) or its close. */
type Opened = { ws: WebSocket; outcome: 'ack' | 'open' | Close; closed: Promise<Close> };
/**
 * A WebSocket upgraded by hand on a raw TCP socket that reads but never writes after the
 * request: no connection_init, no answer to a close frame. `closeFrame`: the server's close;
 * `isClosed()`: whether the TCP socket closed.
 */
type Raw = { socket: Socket; upgraded: Promise<void>; closeFrame: Promise<Close>; isClosed: () => boolean };

describe('graphql-ws message size and connection caps', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let server: SocketServer;
  let wsUrl: string;
  let keyA: string;
  let keyB: string;
  const sockets: WebSocket[] = [];
  const raws: Socket[] = [];
  let port: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = testConfig(db, {
      WEFT_WS_MAX_CONNECTIONS: MAX_CONNECTIONS,
      WEFT_WS_MAX_CONNECTIONS_PER_KEY: MAX_PER_KEY,
      WEFT_WS_MAX_PENDING_PER_ADDRESS: MAX_PENDING,
    });
    api = await startApi({ port: 0, host: '127.0.0.1', moduleImports: [CoreModule.forRoot(config)], logger: false });
    server = api.app.get(SocketServer);
    wsUrl = api.url.replace(/^http/, 'ws');
    port = Number(new URL(api.url).port);
    const tenants = new TenantRepository(db.ds);
    keyA = (await tenants.createTenant('sockets-a')).apiKey;
    keyB = (await tenants.createTenant('sockets-b')).apiKey;
  });
  afterEach(async () => {
    await closeAll();
    raws.splice(0).forEach((r) => r.destroy());
    await until(() => server.connections === 0 && server.sockets === 0, 'every connection to be released');
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  /**
   * Opens a graphql-ws socket; with `init` (default) sends connection_init with `authorization`
   * and `extra` in its payload. Resolves with the first outcome: ack, close, or open without init.
   */
  function open(authorization?: string, opts: { init?: boolean; extra?: Record<string, unknown>; from?: string } = {}): Promise<Opened> {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws', { maxPayload: 0, localAddress: opts.from });
    sockets.push(ws);
    const closed = new Promise<Close>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('error', () => undefined); // a reset while sending shows as the close that follows
    return new Promise((resolve) => {
      closed.then((c) => resolve({ ws, outcome: c, closed }));
      ws.once('open', () => {
        if (opts.init === false) return resolve({ ws, outcome: 'open', closed });
        ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: authorization && `Bearer ${authorization}`, ...opts.extra } }));
      });
      ws.on('message', (data) => {
        if (JSON.parse(data.toString()).type === 'connection_ack') resolve({ ws, outcome: 'ack', closed });
      });
    });
  }

  /** Upgrades a raw TCP socket from the loopback address `from` on /graphql (see {@link Raw}). */
  function rawUpgrade(from: string): Raw {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    raws.push(socket);
    socket.on('error', () => undefined);
    socket.write(
      `GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
    );
    let data = Buffer.alloc(0);
    let upgraded!: () => void;
    let closeFrame!: (c: Close) => void;
    let closed = false;
    socket.once('close', () => (closed = true));
    const raw: Raw = {
      socket,
      upgraded: new Promise((r) => (upgraded = r)),
      closeFrame: new Promise((r) => (closeFrame = r)),
      isClosed: () => closed,
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (data.subarray(0, 12).toString() === 'HTTP/1.1 101') upgraded();
      // A server frame is unmasked; a close frame (0x88) with a payload under 126 bytes.
      const frame = data.subarray(end + 4);
      if (frame.length >= 2 && frame[0] === 0x88 && frame.length >= 2 + frame[1]!) {
        closeFrame({ code: frame.readUInt16BE(2), reason: frame.subarray(4, 2 + frame[1]!).toString() });
      }
    });
    return raw;
  }

  async function closeAll(): Promise<void> {
    const open = sockets.splice(0).filter((ws) => ws.readyState !== WebSocket.CLOSED);
    await Promise.all(open.map((ws) => new Promise<void>((resolve) => (ws.once('close', () => resolve()), ws.close()))));
  }

  /** Waits for `cond`, checked every 20 ms, at most `ms` (default 30 s, room for a loaded machine; a leak never satisfies it). */
  async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
    for (const deadline = Date.now() + ms; Date.now() < deadline;) {
      if (cond()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    if (cond()) return;
    throw new Error(`timed out waiting for ${what}; ${server.connections} connections counted, ${server.sockets} sockets open`);
  }

  /** POSTs a body of exactly `bytes` bytes of JSON; returns the HTTP status. */
  async function postBytes(bytes: number): Promise<number> {
    const head = JSON.stringify({ query: '{ __typename }', variables: { pad: '' } });
    const body = head.replace('"pad":""', `"pad":"${'x'.repeat(bytes - head.length)}"`);
    expect(Buffer.byteLength(body)).toBe(bytes);
    const res = await fetch(api.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${keyA}` }, body });
    await res.arrayBuffer();
    return res.status;
  }

  /** connection_init padding so the whole message is `bytes` long. */
  const padTo = (bytes: number) => {
    const base = JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${keyA}`, pad: '' } }).length;
    return { pad: 'x'.repeat(bytes - base) };
  };

  describe('message size', () => {
    it('closes a socket whose connection_init is over the HTTP body limit with 1009, without authenticating it', async () => {
      expect(await postBytes(MAX_MESSAGE_BYTES + 1)).toBe(413);
      const { outcome } = await open(keyA, { extra: padTo(MAX_MESSAGE_BYTES + 1) });
      expect(outcome).toEqual({ code: 1009, reason: '' });
      const big = await open(keyA, { extra: padTo(8 * MAX_MESSAGE_BYTES) });
      expect(big.outcome).toEqual({ code: 1009, reason: '' });
    });

    it('accepts a message at the limit, as HTTP accepts a body at it', async () => {
      expect(await postBytes(MAX_MESSAGE_BYTES)).toBe(200);
      const { outcome } = await open(keyA, { extra: padTo(MAX_MESSAGE_BYTES) });
      expect(outcome).toBe('ack');
    });

    it('keeps serving other sockets after refusing an oversized message', async () => {
      const first = await open(keyA);
      expect((await open(keyB, { extra: padTo(MAX_MESSAGE_BYTES + 1) })).outcome).toMatchObject({ code: 1009 });
      expect(first.outcome).toBe('ack');
      expect(first.ws.readyState).toBe(WebSocket.OPEN);
      expect((await open(keyB)).outcome).toBe('ack');
    });
  });

  describe('connections per API key', () => {
    it('closes a connection over the per-key cap with 4029 once authenticated; other keys are not affected', async () => {
      expect((await open(keyA)).outcome).toBe('ack');
      expect((await open(keyA)).outcome).toBe('ack');
      const third = await open(keyA);
      expect(third.outcome).toEqual({ code: 4029, reason: `TOO_MANY_KEY_CONNECTIONS: this API key holds its most graphql-ws connections (${MAX_PER_KEY})` });
      expect((await open(keyB)).outcome).toBe('ack');
    });

    it('releases a key connection when it closes, every time', async () => {
      const held = await open(keyA);
      expect(held.outcome).toBe('ack');
      for (let i = 0; i < 10; i++) {
        const s = await open(keyA);
        expect([i, s.outcome]).toEqual([i, 'ack']);
        s.ws.close();
        await s.closed;
        await until(() => server.connections === 1, `cycle ${i} to be released`);
      }
      expect((await open(keyA)).outcome).toBe('ack');
      expect((await open(keyA)).outcome).toMatchObject({ code: 4029 });
    });

    it('releases a connection the server closed: a refused key, a bad key', async () => {
      expect((await open(keyA)).outcome).toBe('ack');
      expect((await open(keyA)).outcome).toBe('ack');
      for (let i = 0; i < 2 * MAX_CONNECTIONS; i++) {
        expect((await open(keyA)).outcome).toMatchObject({ code: 4029 });
        expect((await open('weft_not_a_key')).outcome).toMatchObject({ code: 4401 });
      }
      await until(() => server.connections === 2, 'refused connections to be released');
      expect((await open(keyB)).outcome).toBe('ack');
    });
  });

  describe('connections in all', () => {
    it('closes a connection over the total cap with 1013 at once, counting sockets not yet authenticated', async () => {
      expect((await open(keyA)).outcome).toBe('ack');
      expect((await open(keyB)).outcome).toBe('ack');
      const idle = [await open(undefined, { init: false }), await open(undefined, { init: false })];
      expect(idle.map((s) => s.outcome)).toEqual(['open', 'open']);
      await until(() => server.connections === MAX_CONNECTIONS, 'four connections to be counted');

      const over = await open(undefined, { init: false });
      expect(await over.closed).toEqual({ code: 1013, reason: TOTAL_REASON });
      expect((await open(keyB)).outcome).toMatchObject({ code: 1013 });
      expect(server.connections).toBe(MAX_CONNECTIONS);

      // One idle socket leaves: there is room for one more, and only one.
      idle[0]!.ws.close();
      await idle[0]!.closed;
      await until(() => server.connections === MAX_CONNECTIONS - 1, 'the idle socket to be released');
      expect((await open(keyB)).outcome).toBe('ack');
      expect((await open(keyA)).outcome).toMatchObject({ code: 1013 });
    });
  });
  describe('sockets that never authenticate', () => {
    it('keeps one address from filling the total cap with sockets that never send connection_init', async () => {
      for (let i = 0; i < MAX_PENDING; i++) await rawUpgrade('127.0.0.1').upgraded;
      await until(() => server.connections === MAX_PENDING, 'the flood to be counted');

      // The flood's address gets no more places, before or after authenticating.
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        expect(await (await open(undefined, { init: false, from: '127.0.0.1' })).closed).toEqual({ code: 1013, reason: PENDING_REASON });
      }
      expect((await open(keyA, { from: '127.0.0.1' })).outcome).toEqual({ code: 1013, reason: PENDING_REASON });
      expect(server.connections).toBe(MAX_PENDING);

      // Other addresses take what is left of the total, and no more.
      expect((await open(keyA, { from: '127.0.0.2' })).outcome).toBe('ack');
      expect((await open(keyB, { from: '127.0.0.3' })).outcome).toBe('ack');
      expect((await open(keyB, { from: '127.0.0.4' })).outcome).toEqual({ code: 1013, reason: TOTAL_REASON });
    });

    it('stops counting a socket under its address once its key is accepted', async () => {
      expect((await open(keyA, { from: '127.0.0.2' })).outcome).toBe('ack');
      expect((await open(keyB, { from: '127.0.0.2' })).outcome).toBe('ack');
      const idle = [await open(undefined, { init: false, from: '127.0.0.2' }), await open(undefined, { init: false, from: '127.0.0.2' })];
      expect(idle.map((s) => s.outcome)).toEqual(['open', 'open']);
      await until(() => server.connections === MAX_CONNECTIONS, 'four connections to be counted');
    });

    it('destroys a socket that never sends connection_init and never answers the close, soon after the init timeout', async () => {
      const raw = rawUpgrade('127.0.0.1');
      await raw.upgraded;
      await until(() => server.connections === 1, 'the socket to be counted');
      expect(await raw.closeFrame).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
      await until(
        () => raw.isClosed() && server.connections === 0 && server.sockets === 0,
        'the unanswered socket to be destroyed',
        DESTROYED_BEFORE_WS_DEFAULT_MS,
      );
    });

    it("destroys refused sockets whose peer never answers the close, before ws's own 30 s close timeout", async () => {
      for (const [key, from] of [
        [keyA, '127.0.0.2'],
        [keyA, '127.0.0.3'],
        [keyB, '127.0.0.2'],
        [keyB, '127.0.0.3'],
      ] as const) {
        expect((await open(key, { from })).outcome).toBe('ack');
      }
      const refused = Array.from({ length: 30 }, (_, i) => rawUpgrade(`127.0.1.${1 + (i % 10)}`));
      expect(await Promise.all(refused.map((r) => r.closeFrame))).toEqual(refused.map(() => ({ code: 1013, reason: TOTAL_REASON })));
      await until(() => refused.every((r) => r.isClosed()), 'the refused sockets to be destroyed', DESTROYED_BEFORE_WS_DEFAULT_MS);
      await until(() => server.sockets === MAX_CONNECTIONS, 'the refused sockets to be gone');
      expect(server.connections).toBe(MAX_CONNECTIONS);
    });
  });
});

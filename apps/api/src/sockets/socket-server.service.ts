import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import type { Disposable } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type ServerOptions, type WebSocket } from 'ws';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { AuthService } from '../auth/auth.service.js';
import { MAX_MESSAGE_BYTES } from '../common/query-limits.js';
import { GRAPHQL_PATH, socketOptions } from '../graphql.options.js';
import { CLOSE_TOO_MANY_CONNECTIONS, ConnectionLimits } from './connection-limits.js';

const log = new Logger('GraphQL-WS');

/** How long a socket the server closed may take to finish the close handshake before it is destroyed, ms. */
export const CLOSE_HANDSHAKE_MS = 1_000;

/**
 * The graphql-ws server on the API's HTTP server, at {@link GRAPHQL_PATH}. It is ours rather than
 * @nestjs/graphql's, whose WebSocketServer cannot be given options: `ws`'s default `maxPayload`
 * is 100 MiB, parsed whole before anything is authenticated, and it counts no connections.
 *
 * - Message size: `maxPayload` is {@link MAX_MESSAGE_BYTES}, the HTTP body limit, so `ws` closes
 *   a socket with 1009 (Message Too Big) from the frame header, before buffering the message.
 * - Connections: at most `WEFT_WS_MAX_CONNECTIONS` in all, counted from the upgrade (a socket not
 *   yet authenticated counts), one more closed at once with 1013 `TOO_MANY_CONNECTIONS`; at most
 *   `WEFT_WS_MAX_PENDING_PER_ADDRESS` per remote address until onConnect accepted their key, one
 *   more closed at once with 1013 `TOO_MANY_PENDING_CONNECTIONS`, so one address cannot fill the
 *   total with sockets that never authenticate; at most `WEFT_WS_MAX_CONNECTIONS_PER_KEY` per API
 *   key and `WEFT_WS_MAX_CONNECTIONS_PER_TENANT` per tenant, counted once onConnect authenticated
 *   it, one more closed with 4029 `TOO_MANY_KEY_CONNECTIONS` or `TOO_MANY_TENANT_CONNECTIONS`
 *   ({@link ConnectionLimits}). A connection is released when its TCP socket closes, however it
 *   closes.
 * - Closing: a socket closed (refused, connection_init timeout, bad or revoked key, shutdown, or
 *   by its peer) is destroyed when the close handshake and TCP close have not finished within
 *   {@link CLOSE_HANDSHAKE_MS}; `ws`'s default of 30 s let a peer that never answers hold the
 *   descriptor and, for a counted socket, its place under the caps.
 * - A protocol error a client causes (a message too big, invalid UTF-8) is logged at debug level:
 *   `ws` has already closed the socket with the matching code; graphql-ws would log each one as
 *   an internal error on the console.
 */
@Injectable()
export class SocketServer implements OnApplicationBootstrap, OnModuleDestroy {
  private http: Server | undefined;
  private wss: WebSocketServer | undefined;
  private graphqlWs: Disposable | undefined;
  private limits: ConnectionLimits | undefined;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly schemaHost: GraphQLSchemaHost,
    private readonly auth: AuthService,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
  ) {}

  /** Open graphql-ws connections counted now (0 before boot). */
  get connections(): number {
    return this.limits?.connections ?? 0;
  }

  /** WebSockets open now, counted or refused, until their TCP socket closes (0 before boot). */
  get sockets(): number {
    return this.wss?.clients.size ?? 0;
  }

  /** Runs once every module is initialized (the schema is built) and before the API listens. */
  onApplicationBootstrap(): void {
    this.http = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!this.http) return;
    const c = this.config;
    this.limits = new ConnectionLimits(c.wsMaxConnections, c.wsMaxConnectionsPerKey, c.wsMaxPendingPerAddress, c.wsMaxConnectionsPerTenant);
    // `closeTimeout` (ws 8.23; not yet in @types/ws) applies to every close, ours or graphql-ws's.
    this.wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, closeTimeout: CLOSE_HANDSHAKE_MS } as ServerOptions);
    this.graphqlWs = useServer(socketOptions(this.auth, this.schemaHost, this.limits, { keyRecheckMs: this.config.wsKeyRecheckMs }), this.wss);
    this.http.on('upgrade', this.onUpgrade);
  }

  /** Closes every socket (1001 Going Away) and the WebSocket server, before the HTTP server closes. */
  async onModuleDestroy(): Promise<void> {
    this.http?.off('upgrade', this.onUpgrade);
    await this.graphqlWs?.dispose();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const wss = this.wss!;
    if (pathOf(req.url) !== GRAPHQL_PATH) {
      socket.destroy();
      return;
    }
    const admission = this.limits!.admit(req.socket.remoteAddress);
    if ('refused' in admission) {
      // Upgraded only to say why in a close frame; never handed to graphql-ws, never counted.
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', (err) => clientError(err));
        ws.close(CLOSE_TOO_MANY_CONNECTIONS, admission.refused);
      });
      return;
    }
    // The TCP socket's close ends every path: a refused handshake, a close, a reset, a shutdown.
    socket.once('close', admission.release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      admission.attach(ws);
      wss.emit('connection', ws, req);
      replaceErrorListener(ws);
    });
  }
}

/**
 * graphql-ws's 'connection' handler (which ran just before) adds an error listener that logs
 * every socket error as an internal error and closes with 1011; the errors `ws` emits on a
 * server socket are the client's protocol errors, after which it already closed the socket with
 * the right code. An 'error' without any listener would throw, so one always stays.
 */
function replaceErrorListener(ws: WebSocket): void {
  ws.removeAllListeners('error');
  ws.on('error', (err) => {
    clientError(err);
    if (ws.readyState === ws.OPEN) ws.close(1011, 'Internal server error');
  });
}

function clientError(err: Error): void {
  const code = (err as { code?: unknown }).code;
  log.debug(`graphql-ws connection closed on a client error: ${err.message}${typeof code === 'string' ? ` (${code})` : ''}`);
}

/** The path of a request URL (`/graphql?x=1` → `/graphql`); undefined when it cannot be parsed. */
function pathOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

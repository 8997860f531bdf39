/**
 * The HTTP stub the workflow's HTTP nodes call: `GET|POST /hit/<run key>/<node>?fail=<n>`.
 *
 * Each request is one side effect: it is recorded (arrival time, hit number) *when it arrives*,
 * whatever happens afterwards. Hit number `k` (0-based, per (run key, node)) fails when
 * `k < n` — with 503, or by resetting the connection (seeded) — and succeeds afterwards with
 * `{key, node, hit, token}` (`token` echoes the POST body's). Every response is delayed by a
 * seeded 0–120 ms so a SIGKILLed worker is regularly caught mid-request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { intOf, unit } from './rng.js';

export interface Hit {
  /** 0-based number of this hit for its (key, node). */
  n: number;
  /** Arrival, ms since the driver started. */
  at: number;
  /** What the stub decided: 200, 503 or `reset`. */
  outcome: 200 | 503 | 'reset';
  /** The client went away before the response was written (e.g. its worker was killed). */
  clientGone: boolean;
}

export class Stub {
  /** Hits per `key/node`. */
  readonly hits = new Map<string, Hit[]>();
  /** Requests that were not `/hit/<key>/<node>`. */
  strayRequests = 0;
  private server?: Server;

  constructor(
    private readonly seed: number,
    private readonly clock: () => number,
  ) {}

  /** Listens on 127.0.0.1 on a free port; resolves the base URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  get totalHits(): number {
    let n = 0;
    for (const h of this.hits.values()) n += h.length;
    return n;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stub');
    const m = url.pathname.match(/^\/hit\/([^/]+)\/([^/]+)$/);
    if (!m) {
      this.strayRequests++;
      res.writeHead(404).end();
      return;
    }
    const [, key, node] = m;
    const fail = Number(url.searchParams.get('fail') ?? 0);
    const list = this.hits.get(`${key}/${node}`) ?? [];
    this.hits.set(`${key}/${node}`, list);
    const n = list.length;
    const outcome: Hit['outcome'] = n < fail ? (unit(this.seed, 'reset', key, node, n) < 0.25 ? 'reset' : 503) : 200;
    const hit: Hit = { n, at: this.clock(), outcome, clientGone: false };
    list.push(hit);
    let resetting = false;
    res.on('close', () => {
      if (!res.writableFinished && !resetting) hit.clientGone = true;
    });

    let body = '';
    req.setEncoding('utf8');
    try {
      for await (const chunk of req) body += chunk;
    } catch {
      hit.clientGone = true;
      return;
    }
    await new Promise((r) => setTimeout(r, intOf(0, 120, this.seed, 'delay', key, node, n)));
    if (res.destroyed) return;
    if (outcome === 'reset') {
      resetting = true;
      req.socket.destroy();
      return;
    }
    if (outcome === 503) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'chaos stub: transient failure', key, node, hit: n }));
      return;
    }
    let token: unknown;
    try {
      token = body ? JSON.parse(body).token : undefined;
    } catch {
      token = undefined;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ key, node, hit: n, token: token ?? null }));
  }
}

import { Injectable, Logger, type INestApplicationContext, type LoggerService, type OnModuleDestroy } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { logStartLine } from '../start-line.js';
import type { WeftConfig } from '../weft-config.js';
import { Readiness } from './readiness.js';
import { WeftMetrics } from './weft-metrics.js';

/**
 * The operators' HTTP listener of a process, apart from the API's public port, without an API
 * key (`WEFT_METRICS_PORT` on `WEFT_METRICS_HOST`, loopback by default):
 *
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process serves (liveness).
 * - `GET /readyz`: 200 `{"status":"ok"}` when PostgreSQL and Redis answer as they should
 *   ({@link Readiness}), else 503 `{"status":"down","failing":["redis"]}`: check names only.
 * - `GET /metrics`: the Prometheus text exposition ({@link WeftMetrics}); it names every
 *   tenant's workflows, which is why it is not on the API's port.
 *
 * Anything else is 404. Closed with the application.
 */
@Injectable()
export class OpsListener implements OnModuleDestroy {
  private readonly log = new Logger('weft');
  private server?: Server;

  constructor(
    private readonly readiness: Readiness,
    private readonly metrics: WeftMetrics,
  ) {}

  /** Listens on `host`:`port` (0: a free port); returns the port. Rejects with the socket's error (e.g. EADDRINUSE). */
  async listen(host: string, port: number): Promise<number> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    return (server.address() as { port: number }).port;
  }

  async onModuleDestroy(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const known = path === '/healthz' || path === '/readyz' || path === '/metrics';
    try {
      if (!known) return send(res, 404, 'application/json; charset=utf-8', '{"status":"not found"}');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        return send(res, 405, 'application/json; charset=utf-8', '{"status":"method not allowed"}');
      }
      if (path === '/healthz') return send(res, 200, 'application/json; charset=utf-8', '{"status":"ok"}');
      if (path === '/readyz') {
        const report = await this.readiness.report();
        return send(res, report.status === 'ok' ? 200 : 503, 'application/json; charset=utf-8', JSON.stringify(report));
      }
      res.setHeader('Cache-Control', 'no-store');
      return send(res, 200, this.metrics.registry.contentType, await this.metrics.text());
    } catch (err) {
      this.log.error(`ops listener: ${path} failed: ${(err as Error).message}`);
      if (!res.headersSent) send(res, 500, 'application/json; charset=utf-8', '{"status":"error"}');
      else res.destroy();
    }
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * Opens the ops listener ({@link OpsListener}) of `app` (which imports {@link OpsModule}) on
 * `config.metricsHost`:`config.metricsPort` and logs where it listens; returns its base URL
 * (`http://<host>:<port>`, loopback for a wildcard host), or undefined without `metricsPort`
 * (and logs that there is none).
 * @throws Error naming the fix when the port is taken.
 */
export async function startOpsListener(app: INestApplicationContext, config: WeftConfig): Promise<string | undefined> {
  if (config.metricsPort === undefined) {
    new Logger('weft').log('no ops listener: set WEFT_METRICS_PORT (or --metrics-port) to serve /metrics, /readyz and /healthz');
    return undefined;
  }
  const host = config.metricsHost;
  let port: number;
  try {
    port = await app.get(OpsListener).listen(host, config.metricsPort);
  } catch (err) {
    if ((err as { code?: string }).code === 'EADDRINUSE') {
      throw new Error(`metrics port ${config.metricsPort} is already in use on ${host}: pass --metrics-port N (0 picks a free port) or set WEFT_METRICS_PORT`);
    }
    throw err;
  }
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const url = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
  const everywhere = shown !== host ? ' (listening on every interface)' : '';
  logStartLine(new Logger('weft'), config, `ops endpoints (metrics, readiness, liveness) on ${host}:${port}${everywhere}: ${url}/metrics, /readyz, /healthz`);
  return url;
}

/** A booted process without the API, and the URL of its ops listener, if any. */
export interface OpsProcess {
  app: INestApplicationContext;
  /** `http://<host>:<port>` of `/metrics`, `/healthz` and `/readyz`; undefined without `metricsPort`. */
  metricsUrl?: string;
}

/**
 * Boots `module` (which imports {@link OpsModule}) as a process without the API: an application
 * context, and with `config.metricsPort` its ops listener ({@link startOpsListener}).
 * @throws Error naming the fix when the port is taken.
 */
export async function bootWithoutApi(module: unknown, config: WeftConfig, logger: LoggerService | false | undefined): Promise<OpsProcess> {
  const opts = { ...(logger === undefined ? {} : { logger }), abortOnError: false };
  const app = await NestFactory.createApplicationContext(module as never, opts);
  try {
    const metricsUrl = await startOpsListener(app, config);
    return { app, ...(metricsUrl ? { metricsUrl } : {}) };
  } catch (err) {
    await app.close();
    throw err;
  }
}

import { Logger, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { WeftConfig } from '../weft-config.js';

/** A booted process without the API, and the URL of its metrics and health listener, if any. */
export interface OpsProcess {
  app: INestApplicationContext;
  /** `http://<host>:<port>` of `/metrics`, `/healthz` and `/readyz`; undefined without `metricsPort`. */
  metricsUrl?: string;
}

/**
 * Boots `module` (which imports {@link OpsModule}) as a process without the API: with
 * `config.metricsPort`, an HTTP application listening on `config.metricsHost` there, serving
 * only `/metrics`, `/healthz` and `/readyz`; without it, an application context with no listener.
 * Logs where it listens. @throws Error naming the fix when the port is taken.
 */
export async function bootWithoutApi(module: unknown, config: WeftConfig, logger: LoggerService | false | undefined): Promise<OpsProcess> {
  const opts = { ...(logger === undefined ? {} : { logger }), abortOnError: false };
  if (config.metricsPort === undefined) return { app: await NestFactory.createApplicationContext(module as never, opts) };
  const app = await NestFactory.create(module as never, opts);
  try {
    await app.listen(config.metricsPort, config.metricsHost);
  } catch (err) {
    await app.close();
    if ((err as { code?: string }).code === 'EADDRINUSE') {
      throw new Error(`metrics port ${config.metricsPort} is already in use on ${config.metricsHost}: pass --metrics-port N (0 picks a free port) or set WEFT_METRICS_PORT`);
    }
    throw err;
  }
  const { port } = (app.getHttpServer() as { address(): { port: number } }).address();
  const shown = config.metricsHost === '0.0.0.0' || config.metricsHost === '::' ? '127.0.0.1' : config.metricsHost;
  const metricsUrl = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
  new Logger('weft').log(`metrics and health on ${config.metricsHost}:${port} (${metricsUrl}/metrics, /healthz, /readyz)`);
  return { app, metricsUrl };
}

import { Controller, Get, Header, Res } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { Readiness } from './readiness.js';
import { WeftMetrics } from './weft-metrics.js';

/**
 * What operators and orchestrators poll, on every Weft process with an HTTP listener, without an
 * API key (keep these paths off the public internet: `/metrics` names workflows):
 *
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process serves (liveness).
 * - `GET /readyz`: 200 when PostgreSQL and Redis answer as they should ({@link Readiness}), else
 *   503; the body (terminus's) says which check is down and why.
 * - `GET /metrics`: the Prometheus text exposition ({@link WeftMetrics}).
 */
@Controller()
export class OpsController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly readiness: Readiness,
    private readonly metrics: WeftMetrics,
  ) {}

  @Get('healthz')
  alive(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.readiness.database(), () => this.readiness.redis()]);
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async scrape(@Res({ passthrough: true }) res: { setHeader(name: string, value: string): void }): Promise<string> {
    res.setHeader('Content-Type', this.metrics.registry.contentType);
    return this.metrics.text();
  }
}

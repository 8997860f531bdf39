import { Controller, Get } from '@nestjs/common';

/**
 * `GET /healthz` on the API's public port: 200 `{"status":"ok"}` while the process serves, for a
 * load balancer in front of the API. It says nothing else; readiness and metrics are served on
 * the ops listener only ({@link OpsListener}).
 */
@Controller()
export class LivenessController {
  @Get('healthz')
  alive(): { status: 'ok' } {
    return { status: 'ok' };
  }
}

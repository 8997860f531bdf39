import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { checkRuntimeRole } from '@weft/persistence';
import { BullTaskQueues } from '../bull-queue.adapter.js';

/** How long one readiness check may take before it counts as down, ms. */
export const READINESS_TIMEOUT_MS = 3_000;

/** How long a check's answer is reused, ms: a flood of `/readyz` costs one check per second. */
export const READINESS_CACHE_MS = 1_000;

/**
 * The checks of `/readyz` (terminus health indicators): `database` — PostgreSQL answers on this
 * process's pool, as a role row-level security holds (not a superuser, no BYPASSRLS, owns no
 * table), on a schema with this version's latest migration; `redis` — Redis answers a PING on the
 * queues' connection. A check that fails or takes longer than {@link READINESS_TIMEOUT_MS} is
 * `down` with a message saying what is wrong. Concurrent callers share one check, and its answer
 * is reused for {@link READINESS_CACHE_MS}, so the endpoint (unauthenticated) cannot exhaust
 * the database pool.
 */
@Injectable()
export class Readiness {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly ds: DataSource,
    private readonly queues: BullTaskQueues,
  ) {}

  database(): PromiseLike<HealthIndicatorResult<'database'>> {
    return this.indicators
      .check('database')
      .attempt(async () => {
        await checkRuntimeRole(this.ds);
      })
      .withTimeout(READINESS_TIMEOUT_MS)
      .cacheFor(READINESS_CACHE_MS);
  }

  redis(): PromiseLike<HealthIndicatorResult<'redis'>> {
    return this.indicators
      .check('redis')
      .attempt(async () => {
        await this.queues.ping();
      })
      .withTimeout(READINESS_TIMEOUT_MS)
      .cacheFor(READINESS_CACHE_MS);
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { checkRuntimeRole } from '@weft/persistence';
import { TaskQueues } from '../task-queues.js';

/** How long one readiness check may take before it counts as down, ms. */
export const READINESS_TIMEOUT_MS = 3_000;

/** How long a check's answer is reused, ms: a flood of `/readyz` costs one check per second. */
export const READINESS_CACHE_MS = 1_000;

/** The names of the checks of `/readyz`. */
export type ReadinessCheck = 'database' | 'redis';

/**
 * What `/readyz` answers: up or down, and the names of the checks that are down. Never the
 * checks' messages: they name hosts, ports, roles and databases, and the endpoint has no key.
 */
export type ReadinessReport = { status: 'ok' } | { status: 'down'; failing: ReadinessCheck[] };

/**
 * The checks of `/readyz` (terminus health indicators): `database` — PostgreSQL answers on this
 * process's pool, as a role row-level security holds (not a superuser, no BYPASSRLS, owns no
 * table), on a schema with this version's latest migration; `redis` — Redis answers a PING on the
 * queues' connection (in process, without Redis: the queues are open). A check that fails or takes longer than {@link READINESS_TIMEOUT_MS} is
 * down. Concurrent callers share one check, and its answer is reused for
 * {@link READINESS_CACHE_MS}, so the endpoint (unauthenticated) cannot exhaust the database pool.
 * Why a check is down goes to the process's log (once per change of reason), not to the caller.
 */
@Injectable()
export class Readiness {
  private readonly log = new Logger('readiness');
  private readonly lastReason = new Map<ReadinessCheck, string>();

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly ds: DataSource,
    private readonly queues: TaskQueues,
  ) {}

  /** Runs (or reuses) every check: `ok`, or `down` with the names of the failing checks. */
  async report(): Promise<ReadinessReport> {
    const results: HealthIndicatorResult[] = await Promise.all([this.database(), this.redis()]);
    const failing: ReadinessCheck[] = [];
    for (const result of results) {
      for (const [name, detail] of Object.entries(result) as [ReadinessCheck, { status: string; message?: unknown }][]) {
        if (detail.status === 'up') {
          if (this.lastReason.delete(name)) this.log.log(`${name} is up again`);
          continue;
        }
        failing.push(name);
        const reason = typeof detail.message === 'string' ? detail.message : 'down';
        if (this.lastReason.get(name) !== reason) this.log.warn(`not ready: ${name} is down: ${reason}`);
        this.lastReason.set(name, reason);
      }
    }
    return failing.length === 0 ? { status: 'ok' } : { status: 'down', failing };
  }

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

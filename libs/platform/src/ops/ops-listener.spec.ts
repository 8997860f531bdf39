import { afterEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { DataSource } from 'typeorm';
import type { BullTaskQueues } from '../bull-queue.adapter.js';
import { OpsListener } from './ops-listener.js';
import { Readiness } from './readiness.js';
import { WeftMetrics } from './weft-metrics.js';
import { get } from '../../../../test/support/net.js';

/** A PostgreSQL pool and a Redis connection that fail as an unreachable server does, naming its address. */
const unreachable = (address: string) => async () => {
  throw new Error(`connect ECONNREFUSED ${address}`);
};
const database = { query: unreachable('10.1.2.3:5432') } as unknown as DataSource;
const queues = { ping: unreachable('10.1.2.4:6379') } as unknown as BullTaskQueues;

describe('the ops listener', () => {
  const warnings: string[] = [];
  let listener: OpsListener | undefined;
  Logger.overrideLogger({ log: () => undefined, error: () => undefined, warn: (m: unknown) => warnings.push(String(m)) });
  afterEach(async () => listener?.onModuleDestroy());

  async function start(): Promise<string> {
    listener = new OpsListener(new Readiness(new HealthIndicatorService(), database, queues), new WeftMetrics({ processMetrics: false }));
    return `http://127.0.0.1:${await listener.listen('127.0.0.1', 0)}`;
  }

  it('answers /readyz down with the failing checks’ names only: no error text, host or port', async () => {
    const base = await start();
    const ready = await get(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: 'down', failing: ['database', 'redis'] });
    expect(ready.body).not.toMatch(/ECONNREFUSED|10\.1\.2|5432|6379|message/);
    // Why, for the operator: in the process's log.
    expect(warnings.join('\n')).toContain('database is down: connect ECONNREFUSED 10.1.2.3:5432');
  });

  it('serves /metrics and /healthz, and nothing else', async () => {
    const base = await start();
    const metrics = await get(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.body).toContain('# TYPE weft_runs_started_total counter');
    expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect((await get(`${base}/graphql`)).status).toBe(404);
  });
});

import { Gauge } from 'prom-client';
import type { DataSource } from 'typeorm';
import { outboxStats, poolStats, queueStats, type OutboxStats, type QueueStats } from '@weft/persistence';
import { OTHER_LABEL } from './bounded-label.js';
import type { WeftMetrics } from './weft-metrics.js';

/** The most queues the queue gauges name; the rest are summed into one `_other` series. */
export const MAX_QUEUE_SERIES = 100;

/**
 * `stats` bounded to {@link MAX_QUEUE_SERIES} queues: the busiest (most active tasks) by name,
 * the rest added up as {@link OTHER_LABEL} (its oldest wait the longest of theirs). Queue names
 * come from definitions, so tenants could otherwise make thousands of series.
 */
export function boundedQueues(stats: QueueStats[]): QueueStats[] {
  if (stats.length <= MAX_QUEUE_SERIES) return stats;
  const active = (q: QueueStats) => q.backlog + q.delayed + q.running;
  const sorted = [...stats].sort((a, b) => active(b) - active(a) || a.queue.localeCompare(b.queue));
  const rest = sorted.slice(MAX_QUEUE_SERIES - 1);
  const other: QueueStats = { queue: OTHER_LABEL, backlog: 0, delayed: 0, running: 0, oldestWaitMs: null };
  for (const q of rest) {
    other.backlog += q.backlog;
    other.delayed += q.delayed;
    other.running += q.running;
    if (q.oldestWaitMs !== null) other.oldestWaitMs = Math.max(other.oldestWaitMs ?? 0, q.oldestWaitMs);
  }
  return [...sorted.slice(0, MAX_QUEUE_SERIES - 1), other];
}

/**
 * Gauges read at scrape time: the process's PostgreSQL pool always; with `queues`, the queues'
 * backlog and the outbox across tenants (one query each per scrape, through the operators'
 * SECURITY DEFINER functions: counts and ages only). Every process that runs the scheduler adds
 * the queue gauges, so several schedulers report the same values: aggregate them with `max`.
 * A scrape whose query fails leaves those gauges out rather than failing the scrape.
 */
export function registerStoreGauges(metrics: WeftMetrics, ds: DataSource, opts: { queues: boolean }): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'weft_db_pool_connections',
    help: "Connections of this process's PostgreSQL pool, by state (open, idle, waiting = callers waiting for one).",
    labelNames: ['state'],
    registers,
    collect() {
      const p = poolStats(ds);
      this.set({ state: 'open' }, p.total);
      this.set({ state: 'idle' }, p.idle);
      this.set({ state: 'waiting' }, p.waiting);
    },
  });
  new Gauge({
    name: 'weft_db_pool_max',
    help: "Largest size of this process's PostgreSQL pool.",
    registers,
    collect() {
      this.set(poolStats(ds).max);
    },
  });
  if (!opts.queues) return;

  // One read of each per scrape, shared by its gauges: a scrape collects every metric at once.
  let queues: Promise<QueueStats[] | undefined> | undefined;
  let outbox: Promise<OutboxStats | undefined> | undefined;
  const readQueues = () =>
    (queues ??= queueStats(ds)
      .then(boundedQueues, () => undefined)
      .finally(() => (queues = undefined)));
  const readOutbox = () =>
    (outbox ??= outboxStats(ds)
      .catch(() => undefined)
      .finally(() => (outbox = undefined)));
  const perQueue = (name: string, help: string, value: (q: QueueStats) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['queue'],
      registers,
      async collect() {
        const stats = await readQueues();
        this.reset();
        for (const q of stats ?? []) {
          const v = value(q);
          if (v !== null) this.set({ queue: q.queue }, v);
        }
      },
    });
  perQueue('weft_queue_backlog', 'Worker tasks due and waiting for a worker, by queue (all tenants).', (q) => q.backlog);
  perQueue('weft_queue_delayed', 'Worker tasks waiting for their retry backoff, by queue (all tenants).', (q) => q.delayed);
  perQueue('weft_queue_running', 'Worker tasks running, by queue (all tenants).', (q) => q.running);
  perQueue(
    'weft_queue_oldest_pending_age_seconds',
    'How long the longest-waiting due task of a queue has waited (0 without backlog; no series for a queue without active tasks).',
    (q) => (q.oldestWaitMs ?? 0) / 1000,
  );
  new Gauge({
    name: 'weft_outbox_unsent',
    help: 'Task attempts committed and not yet enqueued on Bull (all tenants).',
    registers,
    async collect() {
      const o = await readOutbox();
      if (o) this.set(o.unsent);
    },
  });
  new Gauge({
    name: 'weft_outbox_lag_seconds',
    help: 'Age of the oldest task attempt committed and not yet enqueued (0 when none).',
    registers,
    async collect() {
      const o = await readOutbox();
      if (o) this.set((o.oldestAgeMs ?? 0) / 1000);
    },
  });
}

import { cell, duration, table, when } from './client/output.js';

/** A worker as the API answers it (or `weft admin workers` reads it, with its host and pid). */
export interface WorkerRow {
  id: string;
  host?: string | null;
  pid?: number | null;
  version: string;
  queues: string[];
  concurrency: number;
  startedAt: string;
  lastHeartbeatAt: string;
  drainingSince: string | null;
}

/**
 * The workers table; `now` (epoch ms) dates the heartbeats as ages. With `hosts` (the operator's
 * `weft admin workers`), each worker's host and pid too: the API shows them to no tenant.
 */
export function workersTable(workers: readonly WorkerRow[], now: number, hosts = false): string {
  return table(
    ['ID', ...(hosts ? ['HOST', 'PID'] : []), 'VERSION', 'QUEUES', 'CONCURRENCY', 'STARTED', 'HEARTBEAT', 'STATE'],
    workers.map((w) => [
      w.id,
      ...(hosts ? [cell(w.host ?? null), cell(w.pid ?? null)] : []),
      cell(w.version),
      cell(w.queues.join(',')),
      String(w.concurrency),
      when(w.startedAt),
      `${duration(Math.max(0, now - Date.parse(w.lastHeartbeatAt)))} ago`,
      w.drainingSince ? 'draining' : 'live',
    ]),
  );
}

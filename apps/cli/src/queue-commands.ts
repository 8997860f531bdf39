import type { Command } from 'commander';
import { withClient, withConnection, type ConnectionFlags } from './client/connection.js';
import { cell, duration, printAs, table, when, withOutput, type OutputFormat } from './client/output.js';
import { queueAdminCommands } from './queue-admin-commands.js';

const WORKER_FIELDS = 'id host pid version queues concurrency startedAt lastHeartbeatAt drainingSince';

/** A worker as the API answers it. */
interface WorkerRow {
  id: string;
  host: string | null;
  pid: number | null;
  version: string;
  queues: string[];
  concurrency: number;
  startedAt: string;
  lastHeartbeatAt: string;
  drainingSince: string | null;
}

/** A queue as the API answers it. */
interface QueueRow {
  name: string;
  backlog: number;
  running: number;
  delayed: number;
  oldestPendingAgeMs: number | null;
  reserved: boolean;
  allowed: boolean;
  workers: WorkerRow[];
}

/** The queues table: one line per queue, its counts, the oldest wait, its live workers and their slots, its access. */
export function queuesTable(queues: readonly QueueRow[]): string {
  return table(
    ['QUEUE', 'BACKLOG', 'RUNNING', 'DELAYED', 'OLDEST', 'WORKERS', 'SLOTS', 'ACCESS'],
    queues.map((q) => [
      cell(q.name),
      String(q.backlog),
      String(q.running),
      String(q.delayed),
      q.oldestPendingAgeMs === null ? '-' : duration(q.oldestPendingAgeMs),
      String(q.workers.length),
      String(q.workers.filter((w) => !w.drainingSince).reduce((n, w) => n + w.concurrency, 0)),
      !q.allowed ? 'denied' : q.reserved ? 'reserved' : 'shared',
    ]),
  );
}

/** The workers table; `now` (epoch ms) dates the heartbeats as ages. Host and pid are `-` when the key may not see them. */
export function workersTable(workers: readonly WorkerRow[], now: number): string {
  return table(
    ['ID', 'HOST', 'PID', 'VERSION', 'QUEUES', 'CONCURRENCY', 'STARTED', 'HEARTBEAT', 'STATE'],
    workers.map((w) => [
      w.id,
      cell(w.host),
      cell(w.pid),
      cell(w.version),
      cell(w.queues.join(',')),
      String(w.concurrency),
      when(w.startedAt),
      `${duration(Math.max(0, now - Date.parse(w.lastHeartbeatAt)))} ago`,
      w.drainingSince ? 'draining' : 'live',
    ]),
  );
}

/**
 * Registers `weft queues` and `weft workers` (speaking to the API like every client command:
 * `--url`/`--api-key`, the environment, the current context; `-o table|json|yaml`) and the
 * operator's `weft admin queue reserve|release|list` (on the database directly).
 */
export function queueCommands(program: Command): void {
  withOutput(withConnection(program.command('queues')))
    .description("list the queues the tenant has tasks on or a live worker serves: the tenant's own backlog, running and delayed tasks, the oldest wait, the live workers")
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) =>
        c.request<{ queues: QueueRow[] }>(`query { queues { name backlog running delayed oldestPendingAgeMs reserved allowed workers { ${WORKER_FIELDS} } } }`),
      );
      printAs(o.output, r.queues, () => queuesTable(r.queues));
    });

  withOutput(withConnection(program.command('workers')))
    .description('list the live workers serving queues the tenant may use (host and pid for admin keys only)')
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request<{ workers: WorkerRow[] }>(`query { workers { ${WORKER_FIELDS} } }`));
      printAs(o.output, r.workers, () => workersTable(r.workers, Date.now()));
    });

  queueAdminCommands(program);
}

import type { Command } from 'commander';
import { WeftClient } from '@weft/client';
import { duration, FORMATS, outputFormat, printed, table, type OutputFormat } from './output-format.js';
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
      q.name,
      String(q.backlog),
      String(q.running),
      String(q.delayed),
      duration(q.oldestPendingAgeMs),
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
      w.host ?? '-',
      w.pid === null ? '-' : String(w.pid),
      w.version,
      w.queues.join(','),
      String(w.concurrency),
      w.startedAt,
      `${duration(Math.max(0, now - Date.parse(w.lastHeartbeatAt)))} ago`,
      w.drainingSince ? 'draining' : 'live',
    ]),
  );
}

function client(): WeftClient {
  const url = process.env.WEFT_URL ?? 'http://127.0.0.1:4000/graphql';
  const key = process.env.WEFT_API_KEY;
  if (!key) throw new Error('WEFT_API_KEY is not set: create a tenant with `weft admin create-tenant NAME` and export its apiKey');
  return new WeftClient(url, key);
}

/**
 * Registers `weft queues` and `weft workers` (speaking to `WEFT_URL` with `WEFT_API_KEY`) and the
 * operator's `weft admin queue reserve|release|list` (on the database directly).
 */
export function queueCommands(program: Command): void {
  program
    .command('queues')
    .description("list the queues the tenant has tasks on or a live worker serves: the tenant's own backlog, running and delayed tasks, the oldest wait, the live workers")
    .option('-o, --output <format>', `${FORMATS.join(', ')}`, outputFormat, 'table' as OutputFormat)
    .action(async (o: { output: OutputFormat }) => {
      const c = client();
      const r = await c.request<{ queues: QueueRow[] }>(
        `query { queues { name backlog running delayed oldestPendingAgeMs reserved allowed workers { ${WORKER_FIELDS} } } }`,
      );
      process.stdout.write(o.output === 'table' ? queuesTable(r.queues) : printed(r.queues, o.output));
    });

  program
    .command('workers')
    .description('list the live workers serving queues the tenant may use (host and pid for admin keys only)')
    .option('-o, --output <format>', `${FORMATS.join(', ')}`, outputFormat, 'table' as OutputFormat)
    .action(async (o: { output: OutputFormat }) => {
      const r = await client().request<{ workers: WorkerRow[] }>(`query { workers { ${WORKER_FIELDS} } }`);
      process.stdout.write(o.output === 'table' ? workersTable(r.workers, Date.now()) : printed(r.workers, o.output));
    });

  queueAdminCommands(program);
}

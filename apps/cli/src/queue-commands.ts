import type { Command } from 'commander';
import { operation } from '@weft/client';
import { withClient, withConnection, type ConnectionFlags } from './client/connection.js';
import type { QueuesQuery, QueuesQueryVariables, WorkersQuery, WorkersQueryVariables } from './client/generated/graphql.js';
import { cell, duration, printAs, table, withOutput, type OutputFormat } from './client/output.js';
import { queueAdminCommands } from './queue-admin-commands.js';
import { workersTable } from './workers-table.js';

/** What `queues` and `workers` read of a worker (never its host and pid: the API shows them to no tenant). */
const WORKER_FIELDS = /* GraphQL */ `
  fragment WorkerFields on Worker { id version queues concurrency startedAt lastHeartbeatAt drainingSince }
`;

const QUEUES = operation<QueuesQuery, QueuesQueryVariables>(/* GraphQL */ `
  query Queues { queues { name backlog running delayed oldestPendingAgeMs reserved allowed workers { ...WorkerFields } } }
  ${WORKER_FIELDS}
`);

const WORKERS = operation<WorkersQuery, WorkersQueryVariables>(/* GraphQL */ `
  query Workers { workers { ...WorkerFields } }
  ${WORKER_FIELDS}
`);

/** A queue as the API answers it. */
type QueueRow = QueuesQuery['queues'][number];

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

/**
 * Registers `weft queues` and `weft workers` (speaking to the API like every client command:
 * `--url`/`--api-key`, the environment, the current context; `-o table|json|yaml`) and the
 * operator's `weft admin queue reserve|release|list` and `weft admin workers` (on the database directly).
 */
export function queueCommands(program: Command): void {
  withOutput(withConnection(program.command('queues')))
    .description(
      "list the queues the tenant has tasks on or a live worker serves: the tenant's own backlog, running and delayed tasks, the oldest wait, the live workers",
    )
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(QUEUES));
      printAs(o.output, r.queues, () => queuesTable(r.queues));
    });

  withOutput(withConnection(program.command('workers')))
    .description('list the live workers serving queues the tenant may use (their hosts and pids: weft admin workers)')
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(WORKERS));
      printAs(o.output, r.workers, () => workersTable(r.workers, Date.now()));
    });

  queueAdminCommands(program);
}

import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { DataSource } from 'typeorm';
import { redactedUrl, withAdminDatabase, type ServerSide } from './admin-database.js';
import { cell, printAs, table, withOutput, type OutputFormat } from './client/output.js';
import { workersTable } from './workers-table.js';

/** A queue name as workers consume it (`WEFT_QUEUES`): lower case letters, digits, `_`, `.` and `-`. */
export function queueName(v: string): string {
  const q = v.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9_.-]{0,63}$/.test(q))
    throw new InvalidArgumentError('a queue name is 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit (as definitions name it)');
  return q;
}

/** A tenant id as `create-tenant` printed it (a UUID, any case). */
function tenantId(v: string, previous: string[] = []): string[] {
  const id = v.trim().toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
    throw new InvalidArgumentError(`"${v}" is not a tenant id: a tenant id is a UUID, as printed by \`weft admin create-tenant\``);
  }
  return previous.includes(id) ? previous : [...previous, id];
}

/**
 * The operator's queue reservations, on the database directly: `weft admin queue reserve QUEUE
 * --tenant ID…`, `release QUEUE [--tenant ID…]` and `list`. A reserved queue may be used only by
 * its tenants: publishing a definition that routes a node to it is refused for the others, and a
 * worker refuses their tasks on it. The queues every runtime uses by default (`http`, `python`,
 * `js`) cannot be reserved: that would refuse every other tenant's nodes without a `queue`.
 * Registered under `admin` (created when `serverCommands` did not already).
 */
export function queueAdminCommands(program: Command): void {
  const admin = program.commands.find((c) => c.name() === 'admin') ?? program.command('admin').description('administration on the database directly');
  const queue = admin.command('queue').description('reserve queues for some tenants (only they may use a reserved queue), release them, list them');

  withOutput(queue.command('reserve <queue>'))
    .description('reserve a queue for the given tenants (added to those it is already reserved for)')
    .requiredOption('--tenant <id>', 'a tenant the queue is reserved for (repeat for several)', tenantId)
    .action(async (q: string, o: { tenant: string[]; output: OutputFormat }) => {
      const name = queueName(q);
      await withAdminDatabase(async (ds, s, config) => {
        if ((s.DEFAULT_QUEUES as readonly string[]).includes(name)) {
          throw new Error(
            `queue "${name}" is where ${name === 'http' ? 'HTTP' : `${name} CODE`} nodes go by default and cannot be reserved: reserve a dedicated queue (say gpu) and route the tenant's nodes to it (\`queue: gpu\`)`,
          );
        }
        const tenants = new s.TenantRepository(ds);
        for (const id of o.tenant)
          if (!(await tenants.findTenant(id)))
            throw new Error(`unknown tenant ${id}: no tenant has this id in ${redactedUrl(config.databaseUrl)}; nothing was reserved`);
        const reservations = new s.QueueReservationRepository(ds);
        const lines: string[] = [];
        const reserved: string[] = [];
        for (const id of o.tenant) {
          const made = await reservations.reserve(id, name);
          if (made) reserved.push(id);
          lines.push(made ? `reserved queue "${name}" for tenant ${id}` : `queue "${name}" was already reserved for tenant ${id}`);
        }
        const reservedFor = await holders(ds, s, name);
        lines.push(`queue "${name}" is reserved for: ${reservedFor.join(', ')}`);
        printAs(o.output, { queue: name, reserved, reservedFor }, () => `${lines.join('\n')}\n`);
      });
    });

  withOutput(queue.command('release <queue>'))
    .description('withdraw the reservation of a queue for the given tenants, or for all of them (then every tenant may use it again)')
    .option('--tenant <id>', 'a tenant to release the queue for (repeat for several; default: every tenant it is reserved for)', tenantId)
    .action(async (q: string, o: { tenant?: string[]; output: OutputFormat }) => {
      const name = queueName(q);
      await withAdminDatabase(async (ds, s) => {
        const reservations = new s.QueueReservationRepository(ds);
        const from = o.tenant ?? (await holders(ds, s, name));
        const lines: string[] = from.length === 0 ? [`queue "${name}" is not reserved`] : [];
        const released: string[] = [];
        for (const id of from) {
          const done = await reservations.release(id, name);
          if (done) released.push(id);
          lines.push(done ? `released queue "${name}" for tenant ${id}` : `queue "${name}" was not reserved for tenant ${id}`);
        }
        const left = await holders(ds, s, name);
        lines.push(left.length === 0 ? `queue "${name}" is shared: every tenant may use it` : `queue "${name}" is still reserved for: ${left.join(', ')}`);
        printAs(o.output, { queue: name, released, reservedFor: left }, () => `${lines.join('\n')}\n`);
      });
    });

  withOutput(queue.command('list'))
    .description('list every reservation: queue, tenant and its name, when it was made')
    .action(async (o: { output: OutputFormat }) => {
      await withAdminDatabase(async (ds, s) => {
        const tenants = new s.TenantRepository(ds);
        const names = new Map<string, string | null>();
        const rows: { queue: string; tenantId: string; tenantName: string | null; reservedAt: string }[] = [];
        for (const r of await s.allQueueReservations(ds)) {
          if (!names.has(r.tenantId)) names.set(r.tenantId, (await tenants.findTenant(r.tenantId))?.name ?? null);
          rows.push({ queue: r.queue, tenantId: r.tenantId, tenantName: names.get(r.tenantId) ?? null, reservedAt: r.createdAt.toISOString() });
        }
        printAs(o.output, rows, () =>
          table(
            ['QUEUE', 'TENANT', 'NAME', 'RESERVED'],
            rows.map((r) => [cell(r.queue), r.tenantId, cell(r.tenantName), r.reservedAt]),
          ),
        );
      });
    });

  withOutput(admin.command('workers'))
    .description('list every live worker with its host and pid (which the API shows to no tenant) and all its queues')
    .action(async (o: { output: OutputFormat }) => {
      await withAdminDatabase(async (ds, s) => {
        const rows = (await new s.WorkerRegistryRepository(ds).live()).map((w) => ({
          id: w.id,
          host: w.host,
          pid: w.pid,
          version: w.version,
          queues: w.queues,
          concurrency: w.concurrency,
          startedAt: w.startedAt.toISOString(),
          lastHeartbeatAt: w.lastHeartbeatAt.toISOString(),
          drainingSince: w.drainingSince?.toISOString() ?? null,
        }));
        printAs(o.output, rows, () => workersTable(rows, Date.now(), true));
      });
    });
}

/** The tenants `queue` is reserved for, oldest reservation first. */
async function holders(ds: DataSource, s: ServerSide, queue: string): Promise<string[]> {
  return (await s.allQueueReservations(ds)).filter((r) => r.queue === queue).map((r) => r.tenantId);
}

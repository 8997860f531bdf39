import { InvalidArgumentError, type Command } from 'commander';
import { redactedUrl, withAdminDatabase } from './admin-database.js';

/** Bounds of a tenant's dispatch weight (as `tenants.dispatch_weight` checks them). */
const WEIGHT = { min: 1, max: 100 };

/** A tenant id as `create-tenant` printed it (a UUID, any case), in lower case. */
function tenantArgument(v: string): string {
  const id = v.trim().toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
    throw new InvalidArgumentError(`"${v}" is not a tenant id: a tenant id is a UUID, as printed by \`weft admin create-tenant\``);
  }
  return id;
}

/** A dispatch weight: an integer from 1 to 100. */
function weightArgument(v: string): number {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || n < WEIGHT.min || n > WEIGHT.max) {
    throw new InvalidArgumentError(`weight must be an integer from ${WEIGHT.min} to ${WEIGHT.max} (1 by default; a tenant of weight 2 gets twice the dispatches of one of weight 1), got "${v}"`);
  }
  return n;
}

/**
 * `weft admin tenant-weight TENANT [WEIGHT]`, on the database directly: prints the tenant's
 * weight in fair dispatch between tenants, or sets it (1–100). Registered under `admin`.
 */
export function tenantAdminCommands(admin: Command): void {
  admin
    .command('tenant-weight <tenant> [weight]')
    .description("print a tenant's weight in fair dispatch between tenants, or set it (1 to 100, default 1): on a queue several tenants wait on, each is admitted attempts in proportion to its weight")
    .action(async (tenant: string, weight: string | undefined) => {
      const id = tenantArgument(tenant);
      const next = weight === undefined ? undefined : weightArgument(weight);
      await withAdminDatabase(async (ds, s, config) => {
        const tenants = new s.TenantRepository(ds);
        const unknown = () => new Error(`unknown tenant ${id}: no tenant has this id in ${redactedUrl(config.databaseUrl)}`);
        if (next === undefined) {
          const current = await tenants.dispatchWeight(id);
          if (current === null) throw unknown();
          process.stdout.write(`tenant ${id} has dispatch weight ${current}\n`);
          return;
        }
        const previous = await tenants.setDispatchWeight(id, next);
        if (previous === null) throw unknown();
        process.stdout.write(`tenant ${id} dispatch weight ${previous} -> ${next}\n`);
      });
    });
}

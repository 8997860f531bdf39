import { InvalidArgumentError, type Command } from 'commander';
import type { TenantRepository } from '@weft/persistence';
import type { WeftConfig } from '@weft/platform';
import { redactedUrl, withAdminDatabase } from './admin-database.js';
import { cell, formatData, printAs, table, when, withOutput, type OutputFormat } from './client/output.js';
import { CliError, EXIT } from './exit-codes.js';

/** Bounds of a tenant's dispatch weight (as `tenants.dispatch_weight` checks them). */
const WEIGHT = { min: 1, max: 100 };

const KEY_ROLES = ['admin', 'operator', 'viewer'] as const;

function keyRole(v: string): (typeof KEY_ROLES)[number] {
  const r = v.trim().toLowerCase();
  if (!(KEY_ROLES as readonly string[]).includes(r)) throw new InvalidArgumentError(`must be one of ${KEY_ROLES.join(', ')}`);
  return r as (typeof KEY_ROLES)[number];
}

/** A zero-width joiner not between an emoji (with its modifier or variation selector) and another emoji. */
const LONE_JOINER = /(?<![\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f])\u200d|\u200d(?!\p{Extended_Pictographic})/u;

/**
 * `value` Unicode-normalized (NFKC, as tenant names are stored) and trimmed; refuses an empty
 * value, one longer than `max` characters once normalized, control or invisible formatting
 * characters (a zero-width joiner outside an emoji sequence: `acme` and `acme` + U+200D read the same).
 */
function cleanName(label: string, value: string, max: number): string {
  const clean = value.normalize('NFKC').trim();
  if (!clean) throw new InvalidArgumentError(`${label} must not be empty`);
  const length = [...clean].length;
  if (length > max) throw new InvalidArgumentError(`${label} is ${length} characters; at most ${max}`);
  // A zero-width joiner is kept only between two emoji (👩‍💻), where it makes one character of them.
  if (new RegExp('[[\\p{Cc}\\p{Cf}\\u2028\\u2029\\ufffd]--[\\u200d]]', 'v').test(clean) || LONE_JOINER.test(clean)) {
    throw new InvalidArgumentError(`${label} must not contain control or invisible formatting characters, or invalid UTF-8`);
  }
  if (!/[\p{L}\p{N}\p{P}\p{S}]/u.test(clean)) throw new InvalidArgumentError(`${label} must contain a visible character`);
  return clean;
}

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
    throw new InvalidArgumentError(
      `weight must be an integer from ${WEIGHT.min} to ${WEIGHT.max} (1 by default; a tenant of weight 2 gets twice the dispatches of one of weight 1), got "${v}"`,
    );
  }
  return n;
}

/** The `admin` commands' tenants: a TenantRepository on the admin database ({@link withAdminDatabase}). */
async function withTenants(fn: (tenants: TenantRepository, config: WeftConfig) => Promise<void>): Promise<void> {
  await withAdminDatabase((ds, s, config) => fn(new s.TenantRepository(ds), config));
}

/**
 * The `weft admin` commands on tenants, on the database directly: `tenants` (list them),
 * `create-tenant NAME`, `create-key --tenant ID --role ROLE` and `tenant-weight TENANT [WEIGHT]`.
 * Each takes `-o table|json|yaml`; a key is printed once, as JSON on the last line by default.
 */
export function tenantAdminCommands(admin: Command): void {
  withOutput(admin.command('tenants'))
    .description('list the tenants, oldest first: id, name, created, dispatch weight and live API keys')
    .action(async (o: { output: OutputFormat }) => {
      await withTenants(async (tenants) => {
        const rows = (await tenants.listTenants()).map((t) => ({ ...t, createdAt: t.createdAt.toISOString() }));
        printAs(o.output, rows, () =>
          table(
            ['ID', 'NAME', 'CREATED', 'WEIGHT', 'KEYS'],
            rows.map((t) => [t.id, cell(t.name), when(t.createdAt), String(t.dispatchWeight), String(t.liveKeys)]),
          ),
        );
      });
    });

  withOutput(admin.command('create-tenant <name>'))
    .description(
      'create a tenant and its first admin API key (printed once, as JSON on the last line); tenant names are unique, ignoring case (exit code 4 when taken)',
    )
    .option('--key-name <name>', 'a label for that key, at most 100 characters (default: admin)')
    .action(async (name: string, o: { keyName?: string; output: OutputFormat }) => {
      const clean = cleanName('tenant name', name, 200);
      const keyName = o.keyName === undefined ? undefined : cleanName('key name', o.keyName, 100);
      await withTenants(async (tenants) => {
        const created = await tenants.createTenant(clean, keyName === undefined ? {} : { keyName }).catch((err: unknown) => {
          if ((err as { code?: unknown }).code !== 'TENANT_NAME_TAKEN') throw err;
          const id = (err as { existing: { id: string } }).existing.id;
          throw new CliError(
            `${(err as Error).message}: choose another name, or give that tenant a new key (weft admin create-key --tenant ${id} --role admin)`,
            EXIT.conflict,
          );
        });
        // The default stays one line of JSON, the last: what an operator or a script copies.
        if (o.output === 'table') process.stdout.write(`${JSON.stringify({ tenantId: created.tenantId, apiKey: created.apiKey })}\n`);
        else
          process.stdout.write(
            formatData(o.output, { tenantId: created.tenantId, name: created.name, keyId: created.keyId, role: created.role, apiKey: created.apiKey }),
          );
      });
    });

  withOutput(admin.command('create-key'))
    .description('create an API key for a tenant (printed once, as JSON on the last line); at most $WEFT_MAX_KEYS_PER_TENANT live keys')
    .requiredOption('--tenant <id>', 'the tenant id, as create-tenant printed it')
    .requiredOption('--role <role>', KEY_ROLES.join(', '), keyRole)
    .option('--name <name>', 'a label for the key, at most 100 characters (default: the role)')
    .action(async (o: { tenant: string; role: (typeof KEY_ROLES)[number]; name?: string; output: OutputFormat }) => {
      const name = cleanName('key name', o.name ?? o.role, 100);
      const tenantId = o.tenant.trim().toLowerCase();
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(tenantId)) {
        throw new Error(`unknown tenant ${JSON.stringify(o.tenant)}: a tenant id is a UUID, as printed by \`weft admin create-tenant\``);
      }
      await withTenants(async (tenants, config) => {
        if (!(await tenants.findTenant(tenantId))) throw new Error(`unknown tenant ${tenantId}: no tenant has this id in ${redactedUrl(config.databaseUrl)}`);
        // The tenant's cap on live keys holds here too; an operator may raise it for one command.
        const max = config.maxKeysPerTenant;
        const created = await tenants.createApiKey(tenantId, { name, role: o.role }, { maxLive: max }).catch((err: unknown) => {
          if ((err as { code?: unknown }).code !== 'TOO_MANY_API_KEYS') throw err;
          throw new CliError(
            `tenant ${tenantId} holds ${max} live API keys, its most (WEFT_MAX_KEYS_PER_TENANT): ` +
              'revoke one (`weft keys revoke <id>`), or run this command with a higher WEFT_MAX_KEYS_PER_TENANT',
            EXIT.conflict,
          );
        });
        const key = { tenantId, keyId: created.keyId, name, role: created.role, apiKey: created.apiKey };
        process.stdout.write(o.output === 'table' ? `${JSON.stringify(key)}\n` : formatData(o.output, key));
      });
    });

  withOutput(admin.command('tenant-weight <tenant> [weight]'))
    .description(
      "print a tenant's weight in fair dispatch between tenants, or set it (1 to 100, default 1): on a queue several tenants wait on, each is admitted attempts in proportion to its weight",
    )
    .action(async (tenant: string, weight: string | undefined, o: { output: OutputFormat }) => {
      const id = tenantArgument(tenant);
      const next = weight === undefined ? undefined : weightArgument(weight);
      await withTenants(async (tenants, config) => {
        const unknown = () => new Error(`unknown tenant ${id}: no tenant has this id in ${redactedUrl(config.databaseUrl)}`);
        if (next === undefined) {
          const current = await tenants.dispatchWeight(id);
          if (current === null) throw unknown();
          printAs(o.output, { tenantId: id, dispatchWeight: current }, () => `tenant ${id} has dispatch weight ${current}\n`);
          return;
        }
        const previous = await tenants.setDispatchWeight(id, next);
        if (previous === null) throw unknown();
        printAs(
          o.output,
          { tenantId: id, dispatchWeight: next, previousDispatchWeight: previous },
          () => `tenant ${id} dispatch weight ${previous} -> ${next}\n`,
        );
      });
    });
}

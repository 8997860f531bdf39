import { Option, type Command } from 'commander';
import { role, ROLES } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import { cell, printAs, table, when, withOutput, type OutputFormat } from './output.js';

/** One API key as `keys list` reads it (never its secret). */
interface ApiKeyRow {
  id: string;
  name: string;
  role: string;
  keyPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** Registers `keys create`, `keys list` and `keys revoke`. */
export function keyCommands(program: Command): void {
  const keys = program.command('keys').description("manage the tenant's API keys (admin)");

  withConnection(keys.command('create <name>'))
    .description('create an API key; its secret is printed once')
    .addOption(new Option('--role <role>', 'what the key may do').choices(ROLES).argParser(role).makeOptionMandatory())
    .action(async (name: string, o: ConnectionFlags & { role: string }) => {
      const r = await withClient(o, (c) =>
        c.request(`mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id name role keyPrefix createdAt secret } }`, { i: { name, role: o.role } }),
      );
      process.stderr.write('Store the secret now: it cannot be shown again.\n');
      process.stdout.write(`${JSON.stringify(r.createApiKey, null, 2)}\n`);
    });

  withOutput(withConnection(keys.command('list')))
    .description("list the tenant's API keys (never their secrets)")
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(`query { apiKeys { id name role keyPrefix createdAt revokedAt } }`));
      const rows = r.apiKeys.map((k: ApiKeyRow) => [k.id, cell(k.name), k.role, `${k.keyPrefix}…`, when(k.createdAt), k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active']);
      printAs(o.output, r.apiKeys, () => table(['ID', 'NAME', 'ROLE', 'PREFIX', 'CREATED', 'STATUS'], rows));
    });

  withConnection(keys.command('revoke <id>'))
    .description('revoke an API key: it stops authenticating at once')
    .action(async (id: string, o: ConnectionFlags) => {
      const r = await withClient(o, (c) => c.request(`mutation($id: ID!) { revokeApiKey(id: $id) { id name revokedAt } }`, { id }));
      process.stdout.write(`key ${r.revokeApiKey.id} (${r.revokeApiKey.name}) revoked at ${r.revokeApiKey.revokedAt}\n`);
    });
}

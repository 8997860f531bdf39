import { Option, type Command } from 'commander';
import { operation } from '@weft/client';
import { role, ROLES } from './arguments.js';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  ApiKeyRole,
  ApiKeysQuery,
  ApiKeysQueryVariables,
  CreateApiKeyMutation,
  CreateApiKeyMutationVariables,
  RevokeApiKeyMutation,
  RevokeApiKeyMutationVariables,
} from './generated/graphql.js';
import { cell, formatData, printAs, table, when, withOutput, type OutputFormat } from './output.js';

/** Creates a key; the answer holds its secret, the only time the API gives it. */
const CREATE_API_KEY = operation<CreateApiKeyMutation, CreateApiKeyMutationVariables>(/* GraphQL */ `
  mutation CreateApiKey($i: CreateApiKeyInput!) { createApiKey(input: $i) { id name role keyPrefix createdAt secret } }
`);

/** The tenant's keys (never their secrets). */
const API_KEYS = operation<ApiKeysQuery, ApiKeysQueryVariables>(/* GraphQL */ `
  query ApiKeys { apiKeys { id name role keyPrefix createdAt revokedAt } }
`);

const REVOKE_API_KEY = operation<RevokeApiKeyMutation, RevokeApiKeyMutationVariables>(/* GraphQL */ `
  mutation RevokeApiKey($id: ID!) { revokeApiKey(id: $id) { id name role keyPrefix createdAt revokedAt } }
`);

/** Registers `keys create`, `keys list` and `keys revoke`. */
export function keyCommands(program: Command): void {
  const keys = program.command('keys').description("manage the tenant's API keys (admin)");

  withOutput(withConnection(keys.command('create <name>')))
    .description('create an API key; its secret is printed once (as indented JSON, also without -o json)')
    .addOption(new Option('--role <role>', 'what the key may do').choices(ROLES).argParser(role).makeOptionMandatory())
    .action(async (name: string, o: ConnectionFlags & { role: ApiKeyRole; output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(CREATE_API_KEY, { i: { name, role: o.role } }));
      process.stderr.write('Store the secret now: it cannot be shown again.\n');
      // The secret is what a person copies: the same JSON for people as for programs.
      process.stdout.write(formatData(o.output === 'yaml' ? 'yaml' : 'json', r.createApiKey));
    });

  withOutput(withConnection(keys.command('list')))
    .description("list the tenant's API keys (never their secrets)")
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(API_KEYS));
      const rows = r.apiKeys.map((k) => [
        k.id,
        cell(k.name),
        k.role,
        `${k.keyPrefix}…`,
        when(k.createdAt),
        k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active',
      ]);
      printAs(o.output, r.apiKeys, () => table(['ID', 'NAME', 'ROLE', 'PREFIX', 'CREATED', 'STATUS'], rows));
    });

  withOutput(withConnection(keys.command('revoke <id>')))
    .description('revoke an API key: it stops authenticating at once')
    .action(async (id: string, o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(REVOKE_API_KEY, { id }));
      printAs(o.output, r.revokeApiKey, () => `key ${r.revokeApiKey.id} (${r.revokeApiKey.name}) revoked at ${r.revokeApiKey.revokedAt}\n`);
    });
}

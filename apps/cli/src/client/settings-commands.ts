import { InvalidArgumentError, type Command } from 'commander';
import { operation } from '@weft/client';
import { withClient, withConnection, type ConnectionFlags } from './connection.js';
import type {
  TenantSettingsQuery,
  TenantSettingsQueryVariables,
  UpdateTenantSettingsMutation,
  UpdateTenantSettingsMutationVariables,
} from './generated/graphql.js';
import { fields, printAs, withOutput, type OutputFormat } from './output.js';

const TENANT_SETTINGS = operation<TenantSettingsQuery, TenantSettingsQueryVariables>(/* GraphQL */ `
  query TenantSettings { tenantSettings { retentionDays } }
`);

const UPDATE_TENANT_SETTINGS = operation<UpdateTenantSettingsMutation, UpdateTenantSettingsMutationVariables>(/* GraphQL */ `
  mutation UpdateTenantSettings($i: UpdateTenantSettingsInput!) { updateTenantSettings(input: $i) { retentionDays } }
`);

type Settings = TenantSettingsQuery['tenantSettings'];

/** The settings for people: one `label value` line each. */
function settingsText(s: Settings): string {
  return fields([['retention', s.retentionDays === null || s.retentionDays === undefined ? 'keep runs forever' : `${s.retentionDays} days`]]);
}

/** `DAYS` of `settings retention`: a whole number of days (the API checks the range), or `none` to keep runs forever. */
export function retentionDays(v: string): number | null {
  const t = v.trim();
  if (t.toLowerCase() === 'none') return null;
  const n = Number(t);
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number of days (1 to 3650), or none to keep runs forever');
  return n;
}

/** Registers `settings` (same as `settings get`) and `settings retention`. */
export function settingsCommands(program: Command): void {
  const settings = program.command('settings').description("show or change the tenant's settings (admin)");

  withOutput(withConnection(settings.command('get', { isDefault: true })))
    .description("show the tenant's settings (the default of `weft settings`)")
    .action(async (o: ConnectionFlags & { output: OutputFormat }) => {
      const r = await withClient(o, (c) => c.request(TENANT_SETTINGS));
      printAs(o.output, r.tenantSettings, () => settingsText(r.tenantSettings));
    });

  withOutput(withConnection(settings.command('retention [days]')))
    .description('delete runs this many days after their top-level run ended (1 to 3650); `none` or --keep keeps them forever')
    .option('--keep', 'keep runs forever (clears the retention)')
    .action(async (days: string | undefined, o: ConnectionFlags & { output: OutputFormat; keep?: boolean }) => {
      if (o.keep && days !== undefined) throw new InvalidArgumentError('give either DAYS or --keep, not both');
      if (!o.keep && days === undefined) throw new InvalidArgumentError('give DAYS (1 to 3650), or --keep (or none) to keep runs forever');
      const retention = o.keep ? null : retentionDays(days!);
      const r = await withClient(o, (c) => c.request(UPDATE_TENANT_SETTINGS, { i: { retentionDays: retention } }));
      printAs(o.output, r.updateTenantSettings, () => settingsText(r.updateTenantSettings));
    });
}

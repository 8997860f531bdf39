import type { TenantSettingsQuery } from '../../api/generated/graphql.js';

/** The tenant's settings (admin keys only; FORBIDDEN for others). */
export const TENANT_SETTINGS = /* GraphQL */ `
  query TenantSettings {
    tenantSettings { retentionDays }
  }
`;

export const UPDATE_TENANT_SETTINGS = /* GraphQL */ `
  mutation UpdateTenantSettings($input: UpdateTenantSettingsInput!) {
    updateTenantSettings(input: $input) { retentionDays }
  }
`;

export type TenantSettings = TenantSettingsQuery['tenantSettings'];

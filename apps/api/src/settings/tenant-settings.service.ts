import { Injectable } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { TenantSettingsRepository } from '@weft/persistence';
import type { Principal } from '../auth/principal.js';
import type { TenantSettingsObject } from './tenant-settings.object.js';
import type { UpdateTenantSettingsInput } from './update-tenant-settings.input.js';

/** The caller's tenant's settings, for its admins. */
@Injectable()
export class TenantSettingsService {
  constructor(private readonly settings: TenantSettingsRepository) {}

  /**
   * The tenant's settings.
   * @throws WeftError UNAUTHENTICATED when the tenant is gone since the request authenticated.
   */
  async get(p: Principal): Promise<TenantSettingsObject> {
    return (await this.settings.get(p.tenantId)) ?? gone();
  }

  /**
   * Applies the fields given (an absent field keeps its value) and returns the settings as stored.
   * @throws WeftError UNAUTHENTICATED when the tenant is gone since the request authenticated.
   */
  async update(p: Principal, input: UpdateTenantSettingsInput): Promise<TenantSettingsObject> {
    if (input.retentionDays === undefined) return this.get(p);
    return (await this.settings.setRetentionDays(p.tenantId, input.retentionDays)) ?? gone();
  }
}

function gone(): never {
  throw new WeftError('UNAUTHENTICATED', 'The tenant of this API key no longer exists');
}

import { Injectable } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { TenantRepository } from '@weft/persistence';
import { bearerKey } from './gql-context.js';
import type { Principal } from './principal.js';

const MAX_KEY_LENGTH = 512;

/** Resolves `Authorization: Bearer <key>` to the key's tenant and role. */
@Injectable()
export class AuthService {
  constructor(private readonly tenants: TenantRepository) {}

  /** Throws WeftError UNAUTHENTICATED when the header is missing or the key is unknown or revoked. */
  async authenticate(authorization: unknown): Promise<Principal> {
    const key = bearerKey(authorization);
    if (!key) throw new WeftError('UNAUTHENTICATED', 'Missing API key: send "Authorization: Bearer <key>"');
    if (key.length > MAX_KEY_LENGTH) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    const found = await this.tenants.findApiKey(key);
    if (!found) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    return { tenantId: found.tenantId, keyId: found.keyId, role: found.role };
  }
}

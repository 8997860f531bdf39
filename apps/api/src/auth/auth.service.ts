import { Injectable } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { TenantRepository } from '@weft/persistence';
import { bearerKey } from './gql-context.js';
import type { Principal } from './principal.js';

const MAX_KEY_LENGTH = 512;

/**
 * Resolves `Bearer <key>` (the scheme in any case) to the key's tenant and role: the
 * `Authorization` header over HTTP, `connectionParams.authorization` over graphql-ws.
 */
@Injectable()
export class AuthService {
  constructor(private readonly tenants: TenantRepository) {}

  /** Throws WeftError UNAUTHENTICATED when the credentials are missing or not `Bearer <key>`, or the key is unknown or revoked. */
  async authenticate(authorization: unknown): Promise<Principal> {
    if (authorization === undefined || authorization === null || authorization === '') {
      throw new WeftError('UNAUTHENTICATED', 'Missing API key: send "Authorization: Bearer <key>"');
    }
    const key = bearerKey(authorization);
    if (!key) throw new WeftError('UNAUTHENTICATED', 'Malformed credentials: send "Authorization: Bearer <key>"');
    if (key.length > MAX_KEY_LENGTH) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    const found = await this.tenants.findApiKey(key);
    if (!found) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    return { tenantId: found.tenantId, keyId: found.keyId, role: found.role };
  }

  /**
   * Checks credentials again during a long operation or an open socket: the same key
   * (`principal`'s tenant and key id) must still be active. Returns the fresh principal.
   * Throws WeftError UNAUTHENTICATED when the key was revoked (or the credentials now name
   * another key); other errors (database unavailable) pass through.
   */
  async reauthenticate(authorization: unknown, principal: Principal | undefined): Promise<Principal> {
    const again = await this.authenticate(authorization);
    if (again.tenantId !== principal?.tenantId || again.keyId !== principal?.keyId) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    return again;
  }
}

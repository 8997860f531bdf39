import { Inject, Injectable } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { isUuid, LastAdminKeyError, TenantRepository, TooManyApiKeysError, type ApiKeyInfo } from '@weft/persistence';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { AuthService } from '../auth/auth.service.js';
import type { Principal } from '../auth/principal.js';
import type { ApiKeyObject, CreatedApiKeyObject } from './api-key.object.js';
import type { CallerObject } from './caller.object.js';
import type { CreateApiKeyInput } from './create-api-key.input.js';

/** The tenant's API keys, for its admins: create (the secret shown once), list, revoke. */
@Injectable()
export class KeysService {
  constructor(
    private readonly tenants: TenantRepository,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    private readonly auth: AuthService,
  ) {}

  /**
   * Creates a key with the trimmed name and the role; the only answer that carries its secret.
   * @throws WeftError CONFLICT when the tenant holds `WEFT_MAX_KEYS_PER_TENANT` live keys.
   */
  async create(p: Principal, input: CreateApiKeyInput): Promise<CreatedApiKeyObject> {
    const name = input.name.trim();
    let created;
    try {
      created = await this.tenants.createApiKey(p.tenantId, { name, role: input.role }, { maxLive: this.config.maxKeysPerTenant });
    } catch (err) {
      if (!(err instanceof TooManyApiKeysError)) throw err;
      throw new WeftError('CONFLICT', tooManyKeysMessage(err.max));
    }
    const stored = await this.find(p.tenantId, created.keyId);
    return {
      id: created.keyId,
      name,
      role: created.role,
      keyPrefix: created.keyPrefix,
      createdAt: stored?.createdAt ?? new Date(),
      secret: created.apiKey,
    };
  }

  /** The tenant's keys, oldest first, revoked ones included; never a secret or hash. */
  async list(p: Principal): Promise<ApiKeyObject[]> {
    return (await this.tenants.listApiKeys(p.tenantId)).map(toApiKeyObject);
  }

  /**
   * Revokes a key of the tenant; revoking a revoked key returns it unchanged. A key that is the
   * caller's own may be revoked (its next request is UNAUTHENTICATED). Once revoked (again, for a
   * revoked key: an earlier broadcast may have been lost), the key is dropped from every API
   * process's key cache ({@link AuthService.revoked}); a process that misses the broadcast refuses
   * the key at most `API_KEY_CACHE_TTL_MS` (10 s) later.
   * @throws WeftError NOT_FOUND (not a UUID, unknown, another tenant's key), CONFLICT (the
   * tenant's last active admin key: the tenant could never manage its keys again).
   */
  async revoke(p: Principal, id: string): Promise<ApiKeyObject> {
    const keyId = id.toLowerCase(); // UUIDs in any case name the same key
    const key = await this.find(p.tenantId, keyId);
    if (!key) throw new WeftError('NOT_FOUND', isUuid(keyId) ? `API key ${keyId} not found` : 'API key not found');
    if (key.revokedAt) {
      await this.auth.revoked({ tenantId: p.tenantId, keyId });
      return toApiKeyObject(key);
    }
    try {
      await this.tenants.revokeApiKey(p.tenantId, keyId);
    } catch (err) {
      if (!(err instanceof LastAdminKeyError)) throw err;
      const message = `API key ${keyId} ("${key.name}") is the tenant's last active admin key: create another admin key (createApiKey with role admin) before revoking it, or nobody could manage the tenant's keys again`;
      throw new WeftError('CONFLICT', message, [{ path: 'id', message }]);
    }
    await this.auth.revoked({ tenantId: p.tenantId, keyId });
    return toApiKeyObject((await this.find(p.tenantId, keyId)) ?? key);
  }

  /**
   * The caller's own key, as {@link CallerObject}.
   * @throws WeftError UNAUTHENTICATED when the key is gone or revoked since the request authenticated.
   */
  async whoami(p: Principal): Promise<CallerObject> {
    const key = await this.find(p.tenantId, p.keyId);
    if (!key || key.revokedAt) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    return { tenantId: p.tenantId, keyId: key.id, keyName: key.name, keyPrefix: key.keyPrefix, role: p.role };
  }

  private async find(tenantId: string, keyId: string): Promise<ApiKeyInfo | undefined> {
    if (!isUuid(keyId)) return undefined;
    return (await this.tenants.listApiKeys(tenantId)).find((k) => k.id === keyId);
  }
}

/** Why a key over the tenant's cap was refused, naming the cap and its setting. */
export function tooManyKeysMessage(max: number): string {
  return `the tenant holds ${max} live API keys, its most (WEFT_MAX_KEYS_PER_TENANT): revoke one (revokeApiKey) before creating another`;
}

function toApiKeyObject(k: ApiKeyInfo): ApiKeyObject {
  return { id: k.id, name: k.name, role: k.role, keyPrefix: k.keyPrefix, createdAt: k.createdAt, revokedAt: k.revokedAt };
}

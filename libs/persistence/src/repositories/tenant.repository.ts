import { createHash, randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import type { ApiKeyRole } from '../entities/api-key.entity.js';
import { ApiKeyEntity } from '../entities/api-key.entity.js';
import { TenantEntity } from '../entities/tenant.entity.js';
import { sql } from '../sql.js';
import { isUuid, withoutTenant } from '../tenant-transaction.js';
import { isDataSource, TenantScopedRepository } from './tenant-scoped.repository.js';

/** Prefix of every raw API key. */
export const API_KEY_PREFIX = 'weft_';
/** Characters of the raw key kept (in clear) for display: `weft_` plus 8. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** A freshly created API key: `apiKey` is the raw secret, shown once and never stored. */
export interface CreatedApiKey {
  tenantId: string;
  keyId: string;
  role: ApiKeyRole;
  apiKey: string;
  keyPrefix: string;
}

/** Who an API key authenticates. */
export interface ApiKeyPrincipal {
  tenantId: string;
  keyId: string;
  role: ApiKeyRole;
}

/** An API key as listed for admins: never the hash or the secret. */
export type ApiKeyInfo = Omit<ApiKeyEntity, 'keyHash'>;

/** SHA-256 hex digest of a raw API key, as stored in `api_keys.key_hash`. */
export function hashApiKey(rawKey: string): string {
  return createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

/** A new high-entropy raw key: `weft_` + base64url of 32 random bytes (256 bits). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Tenants and their API keys. Keys are stored as a SHA-256 hash (a raw key has 256 bits of
 * entropy, so a fast hash is enough) plus a display prefix; the raw key is returned once.
 */
export class TenantRepository extends TenantScopedRepository {
  constructor(db: DataSource | EntityManager) {
    super(db);
  }

  /**
   * Creates a tenant named `name` (UUIDv7 id) with one `admin` key named `keyName`
   * (default `"admin"`), in one transaction. Returns the tenant id and the raw key.
   */
  async createTenant(name: string, opts: { keyName?: string } = {}): Promise<CreatedApiKey & { name: string }> {
    const tenantId = uuidv7();
    return this.inTenant(tenantId, async (m) => {
      await sql(m, `INSERT INTO tenants (id, name) VALUES ($1, $2)`, [tenantId, name]);
      const key = await insertKey(m, tenantId, opts.keyName ?? 'admin', 'admin');
      return { ...key, name };
    });
  }

  /** The tenant, or null when it does not exist. */
  async findTenant(tenantId: string): Promise<TenantEntity | null> {
    return this.inTenant(tenantId, (m) => m.getRepository(TenantEntity).findOneBy({ id: tenantId }));
  }

  /** Creates another API key for the tenant, with `role`; returns the raw key (shown once). */
  async createApiKey(tenantId: string, input: { name: string; role: ApiKeyRole }): Promise<CreatedApiKey> {
    return this.inTenant(tenantId, (m) => insertKey(m, tenantId, input.name, input.role));
  }

  /** The tenant's keys, oldest first, revoked ones included (with `revokedAt`). */
  async listApiKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    return this.inTenant(tenantId, async (m) => {
      const keys = await m.getRepository(ApiKeyEntity).find({ where: { tenantId }, order: { createdAt: 'ASC', id: 'ASC' } });
      return keys.map(({ keyHash: _hash, ...info }) => info);
    });
  }

  /** Revokes a key; returns false when the tenant has no such active key. */
  async revokeApiKey(tenantId: string, keyId: string): Promise<boolean> {
    if (!isUuid(keyId)) return false;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql(m, `UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL`, [
        tenantId,
        keyId,
      ]);
      return r.rowCount === 1;
    });
  }

  /**
   * Resolves a raw key to its tenant, key id and role, or null when it is unknown or revoked.
   * This is the one lookup that cannot know the tenant beforehand: it reads `api_keys` by the
   * (globally unique) hash outside any tenant transaction.
   */
  async findApiKey(rawKey: string): Promise<ApiKeyPrincipal | null> {
    if (typeof rawKey !== 'string' || !rawKey.startsWith(API_KEY_PREFIX) || rawKey.length > 256) return null;
    const lookup = async (m: EntityManager) => {
      const r = await sql<{ tenant_id: string; id: string; role: ApiKeyRole }>(
        m,
        `SELECT tenant_id, id, role FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
        [hashApiKey(rawKey)],
      );
      const row = r.rows[0];
      return row ? { tenantId: row.tenant_id, keyId: row.id, role: row.role } : null;
    };
    if (isDataSource(this.db)) return withoutTenant(this.db, lookup);
    return lookup(this.db);
  }
}

async function insertKey(m: EntityManager, tenantId: string, name: string, role: ApiKeyRole): Promise<CreatedApiKey> {
  const apiKey = generateApiKey();
  const keyId = uuidv7();
  const keyPrefix = apiKey.slice(0, DISPLAY_PREFIX_LENGTH);
  await sql(m, `INSERT INTO api_keys (tenant_id, id, name, role, key_hash, key_prefix) VALUES ($1, $2, $3, $4, $5, $6)`, [
    tenantId,
    keyId,
    name,
    role,
    hashApiKey(apiKey),
    keyPrefix,
  ]);
  return { tenantId, keyId, role, apiKey, keyPrefix };
}

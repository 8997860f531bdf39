import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import type { ApiKeyRole } from '../entities/api-key.entity.js';
import { ApiKeyEntity } from '../entities/api-key.entity.js';
import { TenantEntity } from '../entities/tenant.entity.js';
import { sql } from '../sql.js';
import { apiKeyCandidates, callDefiner } from '../claims.js';
import { LastAdminKeyError, TenantNameTakenError, TooManyApiKeysError, UniqueViolation } from '../errors.js';
import { isUuid } from '../tenant-transaction.js';
import { TenantScopedRepository } from './tenant-scoped.repository.js';

/** Prefix of every raw API key. */
export const API_KEY_PREFIX = 'weft_';
/** Bounds of a tenant's dispatch weight (`tenants.dispatch_weight`); new tenants have `default`. */
export const DISPATCH_WEIGHT = { min: 1, max: 100, default: 1 } as const;
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

/** A tenant as the operator lists it (`weft_tenants()`): never a key nor any of its data. */
export interface TenantSummary {
  id: string;
  name: string;
  createdAt: Date;
  /** Its weight in fair dispatch between tenants, 1–100. */
  dispatchWeight: number;
  /** Its API keys not revoked. */
  liveKeys: number;
}

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
   * (default `"admin"`), in one transaction. Returns the tenant id, the raw key and the name as
   * stored: Unicode-normalized (NFKC), so that names that read the same (`é` precomposed or with
   * a combining accent, fullwidth `ＡＣＭＥ` and `ACME`) are one name.
   * @throws TenantNameTakenError when another tenant has the name, ignoring case (the unique
   *   index `tenants_name_unique` decides, so two concurrent creates cannot both take it).
   */
  async createTenant(given: string, opts: { keyName?: string } = {}): Promise<CreatedApiKey & { name: string }> {
    const name = given.normalize('NFKC');
    const tenantId = uuidv7();
    try {
      return await this.inTenant(tenantId, async (m) => {
        await sql(m, `INSERT INTO tenants (id, name) VALUES ($1, $2)`, [tenantId, name]);
        const key = await insertKey(m, tenantId, opts.keyName ?? 'admin', 'admin');
        return { ...key, name };
      });
    } catch (err) {
      if (!(err instanceof UniqueViolation) || err.constraint !== 'tenants_name_unique') throw err;
      const existing = await this.findTenantByName(name);
      // Deleted again since: the name is free, but this create was refused all the same.
      throw new TenantNameTakenError(given, existing ?? { id: 'unknown', name });
    }
  }

  /**
   * Every tenant, oldest first, with its dispatch weight and number of live keys, through the
   * SECURITY DEFINER function `weft_tenants()`: for operators (`weft admin tenants`), never for
   * a tenant's request.
   */
  async listTenants(): Promise<TenantSummary[]> {
    const rows = await callDefiner<{ id: string; name: string; created_at: Date; dispatch_weight: number; live_keys: number }>(
      this.db,
      `SELECT id, name, created_at, dispatch_weight, live_keys FROM weft_tenants()`,
      [],
    );
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, dispatchWeight: r.dispatch_weight, liveKeys: r.live_keys }));
  }

  /** The tenant named `name` (NFKC-normalized, as names are stored), ignoring case, as `weft_tenants()` lists it; null when there is none. */
  async findTenantByName(name: string): Promise<{ id: string; name: string } | null> {
    const rows = await callDefiner<{ id: string; name: string }>(this.db, `SELECT id, name FROM weft_tenants() WHERE lower(name) = lower($1)`, [
      name.normalize('NFKC'),
    ]);
    return rows[0] ?? null;
  }

  /**
   * The tenant's weight in fair dispatch between tenants (`tenants.dispatch_weight`, 1–100, 1
   * by default): a tenant of weight 2 is admitted twice as many attempts as one of weight 1 on
   * a queue both wait on. Null when the tenant does not exist.
   */
  async dispatchWeight(tenantId: string): Promise<number | null> {
    if (!isUuid(tenantId)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ dispatch_weight: number }>(m, `SELECT dispatch_weight FROM tenants WHERE id = $1`, [tenantId]);
      return r.rows[0]?.dispatch_weight ?? null;
    });
  }

  /**
   * Sets the tenant's dispatch weight to `weight` (an integer 1–100, else a RangeError naming the
   * bounds); returns the weight it had, or null when the tenant does not exist (nothing written).
   */
  async setDispatchWeight(tenantId: string, weight: number): Promise<number | null> {
    if (!Number.isInteger(weight) || weight < DISPATCH_WEIGHT.min || weight > DISPATCH_WEIGHT.max) {
      throw new RangeError(`dispatch weight must be an integer from ${DISPATCH_WEIGHT.min} to ${DISPATCH_WEIGHT.max}, got ${weight}`);
    }
    if (!isUuid(tenantId)) return null;
    return this.inTenant(tenantId, async (m) => {
      const r = await sql<{ previous: number }>(
        m,
        `UPDATE tenants t SET dispatch_weight = $2 FROM (SELECT id, dispatch_weight AS previous FROM tenants WHERE id = $1 FOR UPDATE) p
          WHERE t.id = p.id RETURNING p.previous`,
        [tenantId, weight],
      );
      return r.rows[0]?.previous ?? null;
    });
  }

  /** The tenant, or null when it does not exist. */
  async findTenant(tenantId: string): Promise<TenantEntity | null> {
    return this.inTenant(tenantId, (m) => m.getRepository(TenantEntity).findOneBy({ id: tenantId }));
  }

  /**
   * Creates another API key for the tenant, with `role`; returns the raw key (shown once). With
   * `maxLive`, throws {@link TooManyApiKeysError} when the tenant already holds that many live
   * (not revoked) keys. The tenant's row is locked first (`FOR NO KEY UPDATE`: inserts that only
   * reference the tenant are not blocked), and the count is a statement of its own, so its
   * snapshot is taken once the lock is granted: two concurrent creates cannot both take the last
   * place.
   */
  async createApiKey(tenantId: string, input: { name: string; role: ApiKeyRole }, opts: { maxLive?: number } = {}): Promise<CreatedApiKey> {
    return this.inTenant(tenantId, async (m) => {
      if (opts.maxLive !== undefined) {
        await sql(m, `SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE`, [tenantId]);
        const live = await sql<{ n: string }>(m, `SELECT count(*) AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL`, [tenantId]);
        if (Number(live.rows[0]?.n ?? 0) >= opts.maxLive) throw new TooManyApiKeysError(opts.maxLive);
      }
      return insertKey(m, tenantId, input.name, input.role);
    });
  }

  /** The tenant's keys, oldest first, revoked ones included (with `revokedAt`). */
  async listApiKeys(tenantId: string): Promise<ApiKeyInfo[]> {
    return this.inTenant(tenantId, async (m) => {
      const keys = await m.getRepository(ApiKeyEntity).find({ where: { tenantId }, order: { createdAt: 'ASC', id: 'ASC' } });
      return keys.map(({ keyHash: _hash, ...info }) => info);
    });
  }

  /**
   * Revokes a key; returns false when the tenant has no such active key (unknown, malformed,
   * another tenant's, or already revoked). Throws {@link LastAdminKeyError} when it is the
   * tenant's last active admin key (the tenant's active admin keys are locked first, so two
   * concurrent revocations cannot both pass the check).
   */
  async revokeApiKey(tenantId: string, keyId: string): Promise<boolean> {
    if (!isUuid(keyId)) return false;
    return this.inTenant(tenantId, async (m) => {
      const active = await sql<{ id: string; role: ApiKeyRole }>(
        m,
        `SELECT id, role FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL AND (role = 'admin' OR id = $2) ORDER BY id FOR UPDATE`,
        [tenantId, keyId],
      );
      const target = active.rows.find((k) => k.id === keyId);
      if (!target) return false;
      if (target.role === 'admin' && active.rows.filter((k) => k.role === 'admin').length === 1) throw new LastAdminKeyError();
      const r = await sql(m, `UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL`, [tenantId, keyId]);
      return r.rowCount === 1;
    });
  }

  /**
   * Resolves a raw key to its tenant, key id and role, or null when it is unknown, revoked or
   * malformed. This is the one lookup that cannot know the tenant beforehand: the active keys
   * sharing the raw key's display prefix are fetched through the `weft_api_key_candidates`
   * SECURITY DEFINER function, and the raw key's SHA-256 is compared with each candidate's in
   * constant time (`timingSafeEqual`), never by an index probe on the secret's hash.
   */
  async findApiKey(rawKey: string): Promise<ApiKeyPrincipal | null> {
    if (typeof rawKey !== 'string' || !rawKey.startsWith(API_KEY_PREFIX) || rawKey.length > 256) return null;
    if (rawKey.length <= DISPLAY_PREFIX_LENGTH) return null;
    const presented = Buffer.from(hashApiKey(rawKey), 'hex');
    let found: ApiKeyPrincipal | null = null;
    for (const c of await apiKeyCandidates(this.db, rawKey.slice(0, DISPLAY_PREFIX_LENGTH))) {
      const stored = Buffer.from(c.keyHash, 'hex');
      if (stored.length === presented.length && timingSafeEqual(stored, presented)) {
        found = { tenantId: c.tenantId, keyId: c.keyId, role: c.role as ApiKeyRole };
      }
    }
    return found;
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

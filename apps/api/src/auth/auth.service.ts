import { Inject, Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { WeftError } from '@weft/engine';
import { hashApiKey, TenantRepository } from '@weft/persistence';
import { ApiKeyCache, type ApiKeyCacheOptions } from './api-key-cache.js';
import { bearerKey } from './gql-context.js';
import { KEY_REVOCATIONS, type KeyRevocations, type RevokedKey } from './key-revocations.js';
import type { Principal } from './principal.js';

const MAX_KEY_LENGTH = 512;

/** Injection token of the {@link ApiKeyCacheOptions} (tests: a hand-moved clock, a small bound). */
export const API_KEY_CACHE_OPTIONS = Symbol('API_KEY_CACHE_OPTIONS');

/**
 * Resolves `Bearer <key>` (the scheme in any case) to the key's tenant and role: the
 * `Authorization` header over HTTP, `connectionParams.authorization` over graphql-ws.
 *
 * A resolved key is kept in memory for `API_KEY_CACHE_TTL_MS` (10 s; {@link ApiKeyCache}), so a
 * request of a key seen lately costs no database statement. Revoking a key ({@link revoked})
 * drops it here at once and broadcasts the revocation ({@link KeyRevocations}) to every API
 * process, which drops it too; when the broadcast is lost (Redis down) a revoked key is refused
 * by every process at most 10 s after the revocation. {@link reauthenticate} (an open socket's
 * periodic check, an admin's mutation) always asks the database.
 */
@Injectable()
export class AuthService implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('AuthService');
  private readonly cache: ApiKeyCache;
  private listening?: Promise<void>;

  constructor(
    private readonly tenants: TenantRepository,
    @Optional() @Inject(KEY_REVOCATIONS) private readonly revocations?: KeyRevocations,
    @Optional() @Inject(API_KEY_CACHE_OPTIONS) cacheOptions?: ApiKeyCacheOptions,
  ) {
    this.cache = new ApiKeyCache(cacheOptions);
  }

  /** Subscribes to the revocations broadcast; the API starts without waiting for Redis. */
  onModuleInit(): void {
    void this.listen();
  }

  async onModuleDestroy(): Promise<void> {
    await this.revocations?.close();
  }

  /**
   * Starts listening to revocations (once); resolves when subscribed. A failure is logged and the
   * cache still expires entries after its TTL.
   */
  listen(): Promise<void> {
    this.listening ??= (
      this.revocations?.listen({ revoked: (k) => this.cache.dropKey(k.tenantId, k.keyId), gap: () => this.cache.clear() }) ?? Promise.resolve()
    ).catch((err: unknown) => this.log.warn(`not listening to key revocations: ${err instanceof Error ? err.message : String(err)}`));
    return this.listening;
  }

  /**
   * Throws WeftError UNAUTHENTICATED when the credentials are missing or not `Bearer <key>`, or
   * the key is unknown or revoked (a revocation this process has not heard of: at most
   * `API_KEY_CACHE_TTL_MS` after it). Other errors (database unavailable) pass through.
   */
  async authenticate(authorization: unknown): Promise<Principal> {
    const key = presentedKey(authorization);
    const hash = hashApiKey(key);
    return this.cache.get(hash) ?? this.lookUp(key, hash);
  }

  /**
   * Checks credentials again during a long operation or an open socket: the same key
   * (`principal`'s tenant and key id) must still be active, as the database says now (never the
   * cache: a socket sees its key's revocation within its recheck interval, Redis or not). Returns
   * the fresh principal.
   * Throws WeftError UNAUTHENTICATED when the key was revoked (or the credentials now name
   * another key); other errors (database unavailable) pass through.
   */
  async reauthenticate(authorization: unknown, principal: Principal | undefined): Promise<Principal> {
    const key = presentedKey(authorization);
    const again = await this.lookUp(key, hashApiKey(key));
    if (again.tenantId !== principal?.tenantId || again.keyId !== principal?.keyId) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    return again;
  }

  /**
   * Key `key` was revoked (its transaction committed): forgets it here and tells every other API
   * process. Never throws; a broadcast that fails is bounded by the cache's TTL.
   */
  async revoked(key: RevokedKey): Promise<void> {
    this.cache.dropKey(key.tenantId, key.keyId);
    await this.revocations?.announce(key);
  }

  /** The database's answer for `key` (whose SHA-256 is `hash`), kept when positive. */
  private async lookUp(key: string, hash: string): Promise<Principal> {
    const generation = this.cache.generation;
    const found = await this.tenants.findApiKey(key);
    if (!found) {
      this.cache.dropHash(hash);
      throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
    }
    const principal: Principal = { tenantId: found.tenantId, keyId: found.keyId, role: found.role };
    this.cache.remember(hash, principal, generation);
    return principal;
  }
}

/** The raw key of `Bearer <key>`. @throws WeftError UNAUTHENTICATED when missing, malformed or too long. */
function presentedKey(authorization: unknown): string {
  if (authorization === undefined || authorization === null || authorization === '') {
    throw new WeftError('UNAUTHENTICATED', 'Missing API key: send "Authorization: Bearer <key>"');
  }
  const key = bearerKey(authorization);
  if (!key) throw new WeftError('UNAUTHENTICATED', 'Malformed credentials: send "Authorization: Bearer <key>"');
  if (key.length > MAX_KEY_LENGTH) throw new WeftError('UNAUTHENTICATED', 'Invalid API key');
  return key;
}

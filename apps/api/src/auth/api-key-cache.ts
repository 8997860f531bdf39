import type { Principal } from './principal.js';

/**
 * How long a key's resolution is answered from memory, in milliseconds: a key revoked while the
 * revocation's broadcast is lost (Redis down) still authenticates on an API process that resolved
 * it at most this long before.
 */
export const API_KEY_CACHE_TTL_MS = 10_000;
/** Keys one API process keeps resolved; past it the least recently used is forgotten. */
export const API_KEY_CACHE_MAX_ENTRIES = 10_000;

/** What {@link ApiKeyCache} is built with; tests pass a hand-moved clock and a small bound. */
export interface ApiKeyCacheOptions {
  /** {@link API_KEY_CACHE_TTL_MS} by default. */
  ttlMs?: number;
  /** {@link API_KEY_CACHE_MAX_ENTRIES} by default. */
  maxEntries?: number;
  /** The clock, in epoch milliseconds; `Date.now` by default. */
  now?: () => number;
}

interface Entry {
  principal: Principal;
  /** Epoch milliseconds after which the entry is not used. */
  expiresAt: number;
}

/**
 * The API keys this process resolved lately: positive answers only (an unknown or revoked key
 * always asks the database), keyed by the SHA-256 of the raw key (the secret itself is never
 * kept), each for `ttlMs` after it was read, at most `maxEntries` of them, the least recently used
 * forgotten first (a `Map` keeps insertion order; a hit moves its entry to the end).
 *
 * A revocation drops the key's entry ({@link dropKey}). A lookup that was under way while a
 * revocation arrived may have read the key before it was revoked: {@link generation} tells the
 * caller so, and {@link remember} refuses such an answer.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private revocations = 0;

  constructor(opts: ApiKeyCacheOptions = {}) {
    this.ttlMs = opts.ttlMs ?? API_KEY_CACHE_TTL_MS;
    this.maxEntries = Math.max(1, opts.maxEntries ?? API_KEY_CACHE_MAX_ENTRIES);
    this.now = opts.now ?? Date.now;
  }

  /** Entries held (expired ones included until they are looked up or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** Counts the drops so far: read it before a lookup, hand it to {@link remember} after. */
  get generation(): number {
    return this.revocations;
  }

  /** The principal of the key whose hash is `keyHash`, while its entry is fresh; undefined otherwise. */
  get(keyHash: string): Principal | undefined {
    const e = this.entries.get(keyHash);
    if (!e) return undefined;
    this.entries.delete(keyHash);
    if (e.expiresAt <= this.now()) return undefined;
    this.entries.set(keyHash, e);
    return e.principal;
  }

  /**
   * Keeps `principal` for `keyHash` for the TTL, unless a drop happened since `generation` (read
   * before the lookup began): the answer may predate a revocation. Forgets the least recently
   * used entry when full.
   */
  remember(keyHash: string, principal: Principal, generation: number): void {
    if (generation !== this.revocations) return;
    this.entries.delete(keyHash);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.entries.set(keyHash, { principal, expiresAt: this.now() + this.ttlMs });
  }

  /** Forgets key `keyId` of tenant `tenantId` (revoked). */
  dropKey(tenantId: string, keyId: string): void {
    this.revocations++;
    for (const [hash, e] of this.entries) {
      if (e.principal.keyId === keyId && e.principal.tenantId === tenantId) this.entries.delete(hash);
    }
  }

  /**
   * Forgets one key by its hash (the database refused it). Not a drop {@link generation} counts:
   * refusals are as frequent as bad keys are, and a revocation is announced anyway.
   */
  dropHash(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  /** Forgets everything: revocations may have been missed (the broadcast's connection was lost). */
  clear(): void {
    this.revocations++;
    this.entries.clear();
  }
}

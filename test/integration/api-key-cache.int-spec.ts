import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { WeftError } from '@weft/engine';
import { TenantRepository } from '@weft/persistence';
import type { WeftConfig } from '@weft/platform';
import { AuthService } from '../../apps/api/src/auth/auth.service.js';
import { API_KEY_CACHE_TTL_MS } from '../../apps/api/src/auth/api-key-cache.js';
import { RedisKeyRevocations, type KeyRevocations } from '../../apps/api/src/auth/key-revocations.js';
import type { Principal } from '../../apps/api/src/auth/principal.js';
import { KeysService } from '../../apps/api/src/keys/keys.service.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * API keys are answered from each API process's cache for a short while: a revocation reaches
 * every process through Redis at once, a lost broadcast is bounded by the cache's TTL, and the
 * periodic re-check of an open socket still asks the database.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let db: TestDatabase;
let tenants: TenantRepository;
let tenantId: string;
let adminKeyId: string;
const closers: (() => Promise<void>)[] = [];

/** A TenantRepository counting the database lookups of keys. */
function counting(): TenantRepository & { lookups: number } {
  const repo = new TenantRepository(db.ds) as TenantRepository & { lookups: number };
  repo.lookups = 0;
  const find = repo.findApiKey.bind(repo);
  repo.findApiKey = (raw: string) => {
    repo.lookups++;
    return find(raw);
  };
  return repo;
}

/** An API process's AuthService: Redis revocations (or `revocations`), a clock the test moves. */
async function apiProcess(opts: { revocations?: KeyRevocations | null; maxEntries?: number } = {}) {
  const clock = { ms: Date.now() };
  const revocations = opts.revocations === undefined ? new RedisKeyRevocations(REDIS_URL) : (opts.revocations ?? undefined);
  const repo = counting();
  const auth = new AuthService(repo, revocations, { now: () => clock.ms, ...(opts.maxEntries ? { maxEntries: opts.maxEntries } : {}) });
  await auth.listen();
  closers.push(() => auth.onModuleDestroy());
  const keys = new KeysService(repo, { maxKeysPerTenant: 100 } as WeftConfig, auth);
  return { auth, keys, repo, clock };
}

async function newKey(role: 'operator' | 'admin' = 'operator') {
  return tenants.createApiKey(tenantId, { name: `k-${Math.random().toString(36).slice(2)}`, role });
}

async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return err instanceof WeftError ? err.code : String(err);
  }
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}`);
}

beforeAll(async () => {
  db = await createTestDatabase();
  tenants = new TenantRepository(db.ds);
  const t = await tenants.createTenant('cache');
  tenantId = t.tenantId;
  adminKeyId = t.keyId;
});
afterAll(async () => {
  for (const close of closers) await close();
  await db?.drop();
});

const admin = (): Principal => ({ tenantId, keyId: adminKeyId, role: 'admin' });

describe('the API key cache', () => {
  it('answers a key seen lately without asking the database again', async () => {
    const { auth, repo } = await apiProcess({ revocations: null });
    const key = await newKey();
    const first = await auth.authenticate(`Bearer ${key.apiKey}`);
    expect(await auth.authenticate(`bearer ${key.apiKey}`)).toEqual(first);
    expect(first).toEqual({ tenantId, keyId: key.keyId, role: 'operator' });
    expect(repo.lookups).toBe(1);
    // Refusals are never kept: every one asks the database.
    for (let i = 0; i < 2; i++) expect(await refusal(auth.authenticate(`Bearer ${key.apiKey}x`))).toBe('UNAUTHENTICATED');
    expect(repo.lookups).toBe(3);
  });

  it('refuses a key revoked through another API process once the broadcast arrives, long before its TTL', async () => {
    const a = await apiProcess();
    const b = await apiProcess();
    const key = await newKey();
    await b.auth.authenticate(`Bearer ${key.apiKey}`);
    await b.auth.authenticate(`Bearer ${key.apiKey}`);
    expect(b.repo.lookups).toBe(1); // B answers from its cache now

    await a.keys.revoke(admin(), key.keyId);
    // B's clock never moves: only the broadcast can make it forget the key.
    await eventually(async () => (await refusal(b.auth.authenticate(`Bearer ${key.apiKey}`))) === 'UNAUTHENTICATED', 'B refuses the revoked key');
    expect(b.repo.lookups).toBeGreaterThan(1);
    // The revoking process refuses at once.
    expect(await refusal(a.auth.authenticate(`Bearer ${key.apiKey}`))).toBe('UNAUTHENTICATED');
  });

  it('refuses a revoked key after the TTL when the broadcast is lost', async () => {
    const a = await apiProcess({ revocations: null });
    const b = await apiProcess({ revocations: null });
    const key = await newKey();
    await b.auth.authenticate(`Bearer ${key.apiKey}`);
    await a.keys.revoke(admin(), key.keyId);

    b.clock.ms += API_KEY_CACHE_TTL_MS - 1;
    expect(await b.auth.authenticate(`Bearer ${key.apiKey}`)).toMatchObject({ keyId: key.keyId }); // still cached, as documented
    b.clock.ms += 1;
    expect(await refusal(b.auth.authenticate(`Bearer ${key.apiKey}`))).toBe('UNAUTHENTICATED');
  });

  it("re-checks an open socket's key against the database, whatever the cache holds", async () => {
    const a = await apiProcess({ revocations: null });
    const b = await apiProcess({ revocations: null });
    const key = await newKey();
    const principal = await b.auth.authenticate(`Bearer ${key.apiKey}`);
    await a.keys.revoke(admin(), key.keyId);
    expect(await refusal(b.auth.reauthenticate(`Bearer ${key.apiKey}`, principal))).toBe('UNAUTHENTICATED');
    // And the refusal dropped the key from the cache.
    expect(await refusal(b.auth.authenticate(`Bearer ${key.apiKey}`))).toBe('UNAUTHENTICATED');
  });

  it('does not keep an answer read while a revocation arrived', async () => {
    const b = await apiProcess({ revocations: null });
    const key = await newKey();
    const find = b.repo.findApiKey;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    b.repo.findApiKey = async (raw: string) => {
      const found = await find(raw); // read before the revocation commits
      await gate;
      return found;
    };
    const pending = b.auth.authenticate(`Bearer ${key.apiKey}`);
    await new Promise((r) => setTimeout(r, 50));
    await tenants.revokeApiKey(tenantId, key.keyId);
    await b.auth.revoked({ tenantId, keyId: key.keyId }); // the broadcast, as B hears it
    release();
    expect(await pending).toMatchObject({ keyId: key.keyId }); // that request began before the revocation
    b.repo.findApiKey = find;
    expect(await refusal(b.auth.authenticate(`Bearer ${key.apiKey}`))).toBe('UNAUTHENTICATED');
  });

  it('holds at most its bound of keys, forgetting the least recently used', async () => {
    const { auth, repo } = await apiProcess({ revocations: null, maxEntries: 2 });
    const [k1, k2, k3] = [await newKey(), await newKey(), await newKey()];
    await auth.authenticate(`Bearer ${k1.apiKey}`);
    await auth.authenticate(`Bearer ${k2.apiKey}`);
    await auth.authenticate(`Bearer ${k1.apiKey}`); // k1 used last: k2 is the least recently used
    await auth.authenticate(`Bearer ${k3.apiKey}`);
    expect(repo.lookups).toBe(3);
    await auth.authenticate(`Bearer ${k1.apiKey}`);
    await auth.authenticate(`Bearer ${k3.apiKey}`);
    expect(repo.lookups).toBe(3);
    await auth.authenticate(`Bearer ${k2.apiKey}`);
    expect(repo.lookups).toBe(4);
  });
});

describe('the key lookup', () => {
  it('is sent as a named prepared statement', async () => {
    const key = await newKey();
    const sent: { name?: string; text: string }[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text: string; name?: string };
      sent.push(typeof q === 'string' ? { text: q } : q);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      expect(await tenants.findApiKey(key.apiKey)).toEqual({ tenantId, keyId: key.keyId, role: 'operator' });
    } finally {
      pg.Client.prototype.query = query;
    }
    const lookups = sent.filter((q) => q.text.includes('weft_api_key_candidates'));
    expect(lookups).toHaveLength(1);
    expect(lookups[0]!.name).toMatch(/^weft_[0-9a-f]{24}$/);
  });
});

import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';

/** The Redis channel a key's revocation travels on to every API process; message: JSON {@link RevokedKey}. */
export const API_KEY_REVOKED_CHANNEL = 'weft.api-key-revoked';

/** Injection token of the {@link KeyRevocations} AuthService listens to (Redis in production). */
export const KEY_REVOCATIONS = Symbol('KEY_REVOCATIONS');

/** A key that no longer authenticates. */
export interface RevokedKey {
  tenantId: string;
  keyId: string;
}

/** What a listener of {@link KeyRevocations} is told. */
export interface RevocationListener {
  /** Key `key` was revoked (by any API process, this one included). */
  revoked(key: RevokedKey): void;
  /** Revocations may have been missed (the subscription's connection was lost and came back). */
  gap(): void;
}

/**
 * The broadcast of key revocations between API processes, so each drops a revoked key from its
 * key cache at once instead of when the entry expires. Best effort: a lost message is bounded by
 * the cache's TTL.
 */
export interface KeyRevocations {
  /** Tells every API process that `key` was revoked; never throws (a failure is logged). */
  announce(key: RevokedKey): Promise<void>;
  /** Starts telling `listener`; resolves once subscribed (which waits while Redis is unreachable). */
  listen(listener: RevocationListener): Promise<void>;
  /** Closes the connections without waiting for Redis. */
  close(): Promise<void>;
}

/** Waiting for Redis to take an announcement, at most (ms): a revocation is not held up by a stalled Redis. */
const ANNOUNCE_TIMEOUT_MS = 1_000;

/**
 * {@link KeyRevocations} over Redis pub/sub: one connection subscribed to
 * {@link API_KEY_REVOKED_CHANNEL} (it resubscribes after a reconnect, and then reports a gap) and
 * one that publishes, without an offline queue (an announcement while Redis is down fails at once
 * instead of piling up).
 */
export class RedisKeyRevocations implements KeyRevocations {
  private readonly log = new Logger('KeyRevocations');
  private readonly subscriber: Redis;
  private readonly publisher: Redis;

  constructor(redisUrl: string) {
    this.subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.publisher = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    let reported = false;
    this.subscriber.on('error', (err: Error) => {
      if (!reported) this.log.warn(`Redis subscriber: ${err.message} (revoked keys expire from the key cache instead)`);
      reported = true;
    });
    this.subscriber.on('ready', () => (reported = false));
    this.publisher.on('error', () => undefined);
  }

  async announce(key: RevokedKey): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ANNOUNCE_TIMEOUT_MS} ms`)), ANNOUNCE_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.publisher.publish(API_KEY_REVOKED_CHANNEL, JSON.stringify({ tenantId: key.tenantId, keyId: key.keyId })), timeout]);
    } catch (err) {
      this.log.warn(`revocation of key ${key.keyId} not broadcast: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async listen(listener: RevocationListener): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== API_KEY_REVOKED_CHANNEL) return;
      const key = parseRevokedKey(message);
      if (key) listener.revoked(key);
    });
    // ioredis subscribes again on every reconnect; what was announced while the connection was
    // down is lost, and what the cache learnt meanwhile may be stale (the first connection too:
    // keys may have been resolved before it).
    this.subscriber.on('ready', () => listener.gap());
    // Connects on this first command, which waits while Redis is unreachable.
    await this.subscriber.subscribe(API_KEY_REVOKED_CHANNEL);
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

/**
 * {@link KeyRevocations} of one API process (`weft dev` without Redis): an announcement reaches
 * the listeners of this process, at once; there is nobody else to tell and no gap to report.
 */
export class LocalKeyRevocations implements KeyRevocations {
  private readonly listeners: RevocationListener[] = [];

  async announce(key: RevokedKey): Promise<void> {
    for (const l of this.listeners) l.revoked(key);
  }

  async listen(listener: RevocationListener): Promise<void> {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
  }
}

/** A message of {@link API_KEY_REVOKED_CHANNEL}, or undefined when it is not one. */
export function parseRevokedKey(message: string): RevokedKey | undefined {
  try {
    const m = JSON.parse(message) as { tenantId?: unknown; keyId?: unknown };
    return typeof m?.tenantId === 'string' && typeof m.keyId === 'string' ? { tenantId: m.tenantId, keyId: m.keyId } : undefined;
  } catch {
    return undefined;
  }
}

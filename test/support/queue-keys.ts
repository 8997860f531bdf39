import { Redis } from 'ioredis';
import { queuePrefix } from '@weft/platform';

/**
 * Deletes every Redis key of the queues of the database at `dbUrl` (its own prefix,
 * {@link queuePrefix}), so a suite whose processes used Redis leaves nothing of its own behind.
 */
export async function dropQueueKeys(redisUrl: string, dbUrl: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${queuePrefix(dbUrl)}:*`, count: 1000 })) keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

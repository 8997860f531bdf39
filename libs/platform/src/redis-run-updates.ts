import { Redis } from 'ioredis';
import type { RunUpdate, RunUpdatePublisher } from '@weft/engine';

/** The Redis channel run updates travel on; the API's RedisPubSub subscribes to it. */
export const RUN_UPDATED_CHANNEL = 'weft.run-updated';

/**
 * Publishes run updates on Redis pub/sub so API subscribers in any process see changes made by
 * workers and schedulers (an in-memory PubSub reaches one process only). Message: the JSON of
 * a {@link RunUpdate}. A publish failure is swallowed and reported through `onError`: a lost live
 * update never loses data, the run is in PostgreSQL.
 */
export class RedisRunUpdatePublisher implements RunUpdatePublisher {
  private readonly redis: Redis;

  constructor(
    redisUrl: string,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false });
    this.redis.on('error', () => {});
  }

  async publish(update: RunUpdate): Promise<void> {
    try {
      await this.redis.publish(RUN_UPDATED_CHANNEL, JSON.stringify(update));
    } catch (err) {
      this.onError(err);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

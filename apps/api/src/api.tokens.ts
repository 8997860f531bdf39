/**
 * The cross-process PubSub the API subscribes to run updates with: a graphql-subscriptions
 * `PubSubEngine` (a graphql-redis-subscriptions RedisPubSub in production, built from
 * WEFT_CONFIG.redisUrl; the in-process transport's in-memory PubSub under `weft dev` without
 * Redis; tests may bind an in-memory PubSub).
 */
export const REDIS_PUBSUB = Symbol('REDIS_PUBSUB');

/**
 * The announcer of this process's watches (a WatchAnnouncer from @weft/platform: a
 * RunWatchAnnouncer built from WEFT_CONFIG.redisUrl, or the in-process transport's registry): publishers send updates that do not end a run only for watched runs.
 * Optional: without it nothing is announced (tests that publish updates themselves).
 */
export const RUN_WATCHES = Symbol('RUN_WATCHES');

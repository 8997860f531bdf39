/**
 * The cross-process PubSub the API subscribes to run updates with: a graphql-subscriptions
 * `PubSubEngine` (a graphql-redis-subscriptions RedisPubSub in production, built from
 * WEFT_CONFIG.redisUrl; tests may bind an in-memory PubSub).
 */
export const REDIS_PUBSUB = Symbol('REDIS_PUBSUB');

export { ApiAppModule } from './api-app.module.js';
export { ApiModule, apiAnnouncement, createRedisPubSub, listenApi } from './api.module.js';
export { REDIS_PUBSUB } from './api.tokens.js';
export { startApi, type RunningApi, type StartApiOptions } from './start-api.js';
export { MAX_MESSAGE_BYTES } from './common/query-limits.js';
export { SocketServer } from './sockets/socket-server.service.js';
export { RunUpdatesService } from './runs/run-updates.service.js';

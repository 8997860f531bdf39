export * from './weft-config.js';
export * from './weft-logger.js';
export * from './bull-queue.adapter.js';
export * from './redis-run-updates.js';
export * from './services.js';
export * from './server-process.js';
export * from './urls.js';
export * from './core.module.js';

export * from './run-coordinator.js';
export * from './action-writer.js';
export * from './dag-cache.js';
export * from './storable.js';
export * from './signal-buffer.js';

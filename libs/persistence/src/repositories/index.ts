export * from './tenant-scoped.repository.js';
export * from './tenant.repository.js';
export * from './workflow.repository.js';
export * from './run.repository.js';
export * from './signal.repository.js';

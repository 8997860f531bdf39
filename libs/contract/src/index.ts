export * from './limits.js';
export * from './switch-decision.js';

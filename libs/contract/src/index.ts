export * from './limits.js';
export * from './switch-decision.js';
export * from './loop-iteration.js';

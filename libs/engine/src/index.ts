/** @weft/engine: the workflow model, CEL templates, the pure state machine and the coordinator ports. */
export * from './errors.js';
export * from './model/workflow-types.js';
export * from './model/workflow-definition.js';
export * from './model/dag.js';
export * from './model/rfc3339.js';
export * from './model/validate.js';
export * from './template/template-syntax.js';
export * from './template/resolver.js';
export * from './statemachine/events.js';
export * from './statemachine/state.js';
export * from './statemachine/actions.js';
export * from './statemachine/errors.js';
export * from './statemachine/deps.js';
export * from './statemachine/machine.js';
export * from './coordinator/ports.js';
export * from './coordinator/index.js';

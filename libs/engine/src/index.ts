/**
 * @weft/engine: the workflow model, CEL templates, the pure state machine and the coordinator.
 * Every name a pure engine file exports is exported here, so code outside the pure engine
 * (the coordinator included) never needs a deep import. The state machine's test harness
 * (`statemachine/testing/`) is the one exception: it is for specs only.
 */
export * from './errors.js';

// model/: the definition, its DAG and the pure value checks.
export * from './model/workflow-types.js';
export * from './model/workflow-definition.js';
export * from './model/run-context.js';
export * from './model/template-syntax.js';
export * from './model/dag.js';
export * from './model/rfc3339.js';
export * from './model/reducers.js';
export * from './model/storable-json.js';
export * from './model/payload-hygiene.js';
export * from './model/validate.js';
export * from './model/validation/vocabulary.js';

// template/: CEL evaluation.
export * from './template/template-resolver.js';
export * from './template/resolver.js';
export { EVALUATION_LIMITS } from './template/evaluation-budget.js';
export * from './template/re2.js';

// statemachine/: the contract (events, state, actions, collaborators, errors) and the machine.
export * from './statemachine/events.js';
export * from './statemachine/state.js';
export * from './statemachine/actions.js';
export * from './statemachine/errors.js';
export * from './statemachine/deps.js';
export * from './statemachine/machine.js';
// statemachine/: the machine's working parts, exported for tooling and the coordinator.
export * from './statemachine/apply-action.js';
export * from './statemachine/journal.js';
export * from './statemachine/run-index.js';
export * from './statemachine/step.js';
export * from './statemachine/branches.js';
export * from './statemachine/readiness.js';
export * from './statemachine/routing.js';
export * from './statemachine/node-kinds/outcome.js';
export * from './statemachine/node-kinds/wait-spec.js';
export * from './statemachine/node-kinds/wait.js';
export * from './statemachine/node-kinds/wait-for-event.js';
export * from './statemachine/node-kinds/for-each.js';
export * from './statemachine/node-kinds/subworkflow.js';

// The ports the coordinator drives (task queue, run updates): pure types and helpers.
export * from './ports.js';

/**
 * @weft/engine: the pure engine (the workflow model, CEL templates and the state machine) and the
 * ports the coordinator drives. Code outside the pure engine, the coordinator included, imports
 * it only from here. Exported: the model, its validation and vocabulary, the template resolver,
 * the machine with its contract (events, state, actions, Deps, errors) and the working parts the
 * coordinator and tools use. Not exported: the individual validation rules, the evaluation
 * machinery behind the resolver, the node kinds' activate and settle functions, and the spec
 * harness (`statemachine/testing/`). The coordinator has its own entry point,
 * `@weft/engine/coordinator`.
 */
export * from './errors.js';

// model/: the definition, its DAG and the pure value checks.
export * from './model/workflow-types.js';
export * from './model/workflow-definition.js';
export * from './model/retry-policy.js';
export * from './model/flow-control.js';
export * from './model/run-context.js';
export * from './model/template-syntax.js';
export * from './model/dag.js';
export * from './model/rfc3339.js';
export * from './model/reducers.js';
export * from './model/tolerated-failures.js';
export * from './model/storable-json.js';
export * from './model/payload-hygiene.js';
export * from './model/schedule.js';
export * from './model/schedule-times.js';
export * from './model/schedule-plan.js';
export * from './model/schedule-counts.js';
export * from './model/run-labels.js';
export * from './model/switch-decision.js';
export * from './model/do-while.js';
export * from './model/validate.js';
export * from './model/validation/vocabulary.js';
export * from './model/validation/child-workflows.js';

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
// statemachine/: the machine's working parts, for the coordinator and tools.
export * from './statemachine/apply-action.js';
export * from './statemachine/journal.js';
export * from './statemachine/run-index.js';
export * from './statemachine/step.js';
export { decide, hasErrorEdge, isHandledFailure } from './statemachine/branches.js';
export { activate, begin, propagate, routeOutcome } from './statemachine/routing.js';
export type { ActivationOutcome, NodeOutcome } from './statemachine/node-kinds/outcome.js';
export { parseSecondsMs, wakeTime } from './statemachine/node-kinds/wait-spec.js';
export { wokeAt } from './statemachine/node-kinds/wait.js';
export { eventNameProblem, signalOutput } from './statemachine/node-kinds/wait-for-event.js';
export { iterationLocals } from './statemachine/node-kinds/for-each.js';
export { runConcurrencyKey } from './statemachine/flow-keys.js';
export { childSpec, type ChildSpec } from './statemachine/node-kinds/subworkflow.js';

// The ports the coordinator drives (task queue, run updates): pure types and helpers.
export * from './ports.js';

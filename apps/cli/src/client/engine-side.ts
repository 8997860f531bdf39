// The engine (CEL, YAML, the validators) loads only for the commands that need it, so the other
// client commands start fast. Through a local module, as for the server side: the build rewrites
// the path aliases of static imports only.
export {
  allNodes,
  placedNodes,
  effectivePolicy,
  loopSpec,
  maxAttempts,
  parseDefinition,
  validateDefinition,
  WeftError,
  type EffectivePolicy,
  type Problem,
  type WorkflowDefinition,
} from '@weft/engine';
export { MAX_CATCH_UP_SECONDS, MAX_JITTER_SECONDS, MAX_SCHEDULE_NOTE_CHARS, scheduleTimingProblems } from '@weft/engine';

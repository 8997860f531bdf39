import type { RunContext } from '../model/run-context.js';
import type { JsonValue } from '../model/workflow-types.js';

/**
 * Evaluates the `{{ }}` templates of node specs, edge conditions and the run output. The state
 * machine depends on this interface only; `CelTemplateResolver` (resolver.ts) implements it.
 */
export interface TemplateResolver {
  /**
   * Resolves every string in `spec`, recursively through arrays and object values, against
   * `ctx`; `now` is what `system.now` reads. Returns plain JSON.
   * @throws TemplateError naming the first expression that cannot be compiled or evaluated.
   */
  resolve(spec: JsonValue, ctx: RunContext, now: Date): JsonValue;
}

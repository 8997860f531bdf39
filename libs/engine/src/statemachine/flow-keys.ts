/**
 * Resolving flow keys: the run's concurrency key when it starts, and the keys of a node's
 * `concurrency` and `rate_limit` when it (or each `for_each` iteration) is activated. Keys are
 * resolved with the machine's template resolver, in the scope the node's spec is resolved in;
 * the rule on the result is `flowKeyOf` (model/flow-control.ts).
 */
import { flowKeyOf } from '../model/flow-control.js';
import type { WorkflowDefinition, WorkflowNode } from '../model/workflow-definition.js';
import type { JsonValue } from '../model/workflow-types.js';
import type { TemplateResolver } from '../template/template-resolver.js';
import type { TaskFlow } from './actions.js';
import { errorMessage, type Step } from './step.js';

/**
 * What `system.now` reads while a run key resolves. Publishing refuses a run key that reads
 * anything but `input` and `config`, so no key ever sees it; a fixed instant keeps the result a
 * function of the definition, the input and the config alone.
 */
const RUN_KEY_CLOCK = new Date(0);

/**
 * The concurrency group of a run of `definition` started with `input` and `config`: its
 * `concurrency.key` template resolved by `resolver` over `input` and `config` alone. The empty
 * string `""` when the definition has no `concurrency` or no key (one group for the workflow).
 * Returns `{ error }` instead when the template cannot be evaluated
 * (`concurrency.key: cannot evaluate {{ input.region }}: No such key: region`) or gives no valid
 * key (see `flowKeyOf`: `concurrency.key resolved to a list; it must be a string or a number`,
 * `concurrency.key is 300 characters; at most 256`). Pure; never throws.
 */
export function runConcurrencyKey(
  definition: Pick<WorkflowDefinition, 'concurrency'>,
  input: JsonValue,
  config: JsonValue,
  resolver: TemplateResolver,
): { key: string } | { error: string } {
  const template = definition.concurrency?.key;
  if (template === undefined) return { key: '' };
  let value: JsonValue;
  try {
    value = resolver.resolve(template, { input, config, tasks: new Map() }, RUN_KEY_CLOCK);
  } catch (err) {
    return { error: `concurrency.key: ${errorMessage(err)}` };
  }
  return flowKeyOf(value, 'concurrency.key');
}

/**
 * One of a node's keys, `field` naming it: the resolved template, or null without one.
 * @throws Error `<field>.key of node <id>: cannot evaluate …` or one from `flowKeyOf`.
 */
function nodeKey(s: Step, n: WorkflowNode, template: string | undefined, field: string, locals?: Readonly<Record<string, JsonValue>>): string | null {
  if (template === undefined) return null;
  const what = `${field}.key of node ${n.node_id}`;
  let value: JsonValue;
  try {
    const ctx = s.templateContext();
    value = s.deps.templates.resolve(template, locals ? { ...ctx, locals } : ctx, s.now);
  } catch (err) {
    throw new Error(`${what}: ${errorMessage(err)}`);
  }
  const key = flowKeyOf(value, what);
  if ('error' in key) throw new Error(key.error);
  return key.key;
}

/**
 * The {@link TaskFlow} of one task of `n` (with `locals`, one `for_each` iteration's), or
 * undefined for a node with neither `concurrency` nor `rate_limit`. Call it right after the
 * node's input resolved (`Step.resolveInput` loads the outputs the keys may read).
 * @throws Error naming the key (`concurrency.key of node a: …`, `rate_limit.key of node a …`)
 * when a key cannot be resolved or gives no valid key; the caller fails the node as for a spec
 * that cannot be resolved.
 */
export function resolveTaskFlow(s: Step, n: WorkflowNode, locals?: Readonly<Record<string, JsonValue>>): TaskFlow | undefined {
  const { concurrency, rate_limit: rate } = n;
  if (concurrency === undefined && rate === undefined) return undefined;
  const flow: TaskFlow = {};
  if (concurrency !== undefined) {
    flow.concurrency = { key: nodeKey(s, n, concurrency.key, 'concurrency', locals), limit: concurrency.limit };
  }
  if (rate !== undefined) {
    flow.rate = { key: nodeKey(s, n, rate.key, 'rate_limit', locals), limit: rate.limit, perSeconds: rate.per_seconds };
  }
  return flow;
}

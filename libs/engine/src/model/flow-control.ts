/**
 * Flow control as the definition states it, with its defaults filled, and the rule every
 * resolved concurrency or rate key obeys. Pure: no template evaluation here (the state machine
 * resolves keys with its resolver; see statemachine/flow-keys.ts).
 */
import { badCharacter } from './storable-json.js';
import type { ConcurrencyScope, ConcurrencyStrategy, WorkflowDefinition } from './workflow-definition.js';
import type { JsonValue } from './workflow-types.js';

/** What a new run does when its concurrency group is full; the first is the default. */
export const CONCURRENCY_STRATEGIES: readonly ConcurrencyStrategy[] = ['queue', 'cancel_newest', 'cancel_oldest'];
/** Whom a run's concurrency group spans; the first is the default. */
export const CONCURRENCY_SCOPES: readonly ConcurrencyScope[] = ['workflow', 'tenant'];

/**
 * Bounds of flow control: a `concurrency.limit` (workflow or node) 1..1,000; a `rate_limit.limit`
 * 1..100,000 per `per_seconds` 1..86,400 (one day); a `priority` 1 (runs first) ..5, 3 when
 * unset; a resolved key at most 256 characters.
 */
export const FLOW_LIMITS = {
  maxConcurrency: 1000,
  maxRate: 100_000,
  maxPerSeconds: 86_400,
  minPriority: 1,
  maxPriority: 5,
  defaultPriority: 3,
  maxKeyChars: 256,
} as const;

/** The definition's run concurrency with its defaults filled. */
export interface EffectiveRunConcurrency {
  /** The `{{ }}` template of the group key, as written; undefined: one group (key `""`). */
  key: string | undefined;
  /** At most this many runs of a group are active at once (1 to 1,000). */
  limit: number;
  /** `queue` unless the definition says otherwise. */
  strategy: ConcurrencyStrategy;
  /** `workflow` unless the definition says otherwise. */
  scope: ConcurrencyScope;
}

/** How a workflow's runs are admitted: its run concurrency, if any, and the default priority of its runs. */
export interface RunFlow {
  /** Undefined when the definition has no `concurrency`: its runs start without limit. */
  concurrency?: EffectiveRunConcurrency;
  /** 1 (runs first) to 5; {@link FLOW_LIMITS}`.defaultPriority` (3) when the definition has none. */
  priority: number;
}

/**
 * The flow control of a published (valid) definition with the defaults filled: `strategy`
 * `queue`, `scope` `workflow`, `priority` 3. Reads only `def.concurrency` and `def.priority`;
 * never throws.
 */
export function runFlowOf(def: Pick<WorkflowDefinition, 'concurrency' | 'priority'>): RunFlow {
  const c = def.concurrency;
  const priority = def.priority ?? FLOW_LIMITS.defaultPriority;
  if (c === undefined) return { priority };
  return {
    concurrency: {
      key: c.key,
      limit: c.limit,
      strategy: c.strategy ?? CONCURRENCY_STRATEGIES[0]!,
      scope: c.scope ?? CONCURRENCY_SCOPES[0]!,
    },
    priority,
  };
}

/** What a value is called in a key's error: `a list`, `an object`, `a boolean`, `null`. */
function kindOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/**
 * The group key a resolved key template gave, or why it is none. A string is taken as it is; a
 * number becomes its JavaScript text (`42` → `"42"`, `1.5` → `"1.5"`). Anything else (a
 * boolean, null, a list, an object), a string longer than {@link FLOW_LIMITS}`.maxKeyChars`
 * (256) characters (Unicode code points), or one PostgreSQL cannot store (a NUL character, a lone
 * surrogate) is an error whose text starts with `what` (e.g. `concurrency.key`):
 * `concurrency.key resolved to a list; it must be a string or a number`,
 * `concurrency.key is 300 characters; at most 256`.
 */
export function flowKeyOf(value: JsonValue, what: string): { key: string } | { error: string } {
  let key: string;
  if (typeof value === 'string') key = value;
  else if (typeof value === 'number') key = String(value);
  else return { error: `${what} resolved to ${kindOf(value)}; it must be a string or a number` };
  const bad = badCharacter(key);
  if (bad) return { error: `${what} is not storable: ${bad}` };
  // Code points never outnumber UTF-16 units: count them only for a long key.
  const chars = key.length <= FLOW_LIMITS.maxKeyChars ? key.length : Array.from(key).length;
  if (chars > FLOW_LIMITS.maxKeyChars) return { error: `${what} is ${chars} characters; at most ${FLOW_LIMITS.maxKeyChars}` };
  return { key };
}

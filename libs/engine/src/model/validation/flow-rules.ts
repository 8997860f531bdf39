/**
 * The rules of flow control: the definition's `concurrency` and `priority`, and a node's
 * `concurrency` and `rate_limit`. Bounds are in {@link FLOW_LIMITS}; each object's keys are a
 * closed set, like every other object of a definition.
 */
import type { Problem } from '../../errors.js';
import { checkTemplateRoots, checkTemplateSyntax } from '../../template/resolver.js';
import { CONCURRENCY_SCOPES, CONCURRENCY_STRATEGIES, FLOW_LIMITS, flowKeyOf } from '../flow-control.js';
import { unclosedTemplate } from '../template-syntax.js';
import { isWorkerType } from '../workflow-types.js';
import { isObject, unknownKeys, type DefinitionRule, type NodeRule, type Obj } from './context.js';
import { didYouMean } from './suggest.js';
import { templateProblems } from './templates.js';
import { NODE_CONCURRENCY_KEYS, RATE_LIMIT_KEYS, RUN_CONCURRENCY_KEYS, RUN_KEY_ROOTS } from './vocabulary.js';

/**
 * The problem of `obj[field]` at `at.field` when it is not an integer from 1 to `max`; a
 * missing one is `required`. `name` is how the message names it (`concurrency.limit`).
 */
function boundedInteger(obj: Obj, field: string, max: number, at: string, name: string, nodeId?: string): Problem[] {
  const v = obj[field];
  const range = `an integer from 1 to ${max}`;
  if (v === undefined) return [{ nodeId, path: `${at}.${field}`, message: `${name} is required (${range})` }];
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max) return [];
  return [{ nodeId, path: `${at}.${field}`, message: `${name} must be ${range}; got ${JSON.stringify(v) ?? String(v)}` }];
}

/** The problem of `obj[field]` when given and not one of `allowed`, with a suggestion when one is close. */
function oneOf(obj: Obj, field: string, allowed: readonly string[], at: string, name: string): Problem[] {
  const v = obj[field];
  if (v === undefined || (typeof v === 'string' && allowed.includes(v))) return [];
  const hint = typeof v === 'string' ? didYouMean(v, allowed) : '';
  return [{ path: `${at}.${field}`, message: `unknown ${name} ${JSON.stringify(v)}${hint}; expected one of ${allowed.join(', ')}` }];
}

/**
 * The `{{ … }}` text YAML read as a map when a template was written unquoted: `key: {{ input.x }}`
 * is the flow map `{ {input.x: null}: null }`, which becomes `{"{ input.x }": null}` (one key,
 * braced, valued null). Undefined for any other value.
 */
function unquotedTemplate(v: unknown): string | undefined {
  if (!isObject(v)) return undefined;
  const keys = Object.keys(v);
  if (keys.length !== 1 || v[keys[0]!] !== null || !/^\{.*\}$/s.test(keys[0]!)) return undefined;
  return `{${keys[0]!}}`;
}

/**
 * `key`, when given, is a non-empty string; its templates are checked by the caller. A map that
 * is an unquoted YAML template gets the quoted form to write instead. A literal key (no `{{`)
 * is checked now as a resolved key would be ({@link flowKeyOf}: at most 256 characters, storable).
 */
function keyShape(obj: Obj, at: string, name: string, nodeId?: string): Problem[] {
  const k = obj.key;
  const path = `${at}.key`;
  if (typeof k === 'string' && k.trim() !== '') {
    if (k.includes('{{')) return [];
    const literal = flowKeyOf(k, `${name}.key`);
    return 'error' in literal ? [{ nodeId, path, message: literal.error }] : [];
  }
  if (k === undefined) return [];
  const template = unquotedTemplate(k);
  if (template !== undefined) {
    return [
      {
        nodeId,
        path,
        message: `${name}.key must be a string; YAML read the unquoted template ${template} as a map: quote it, key: ${JSON.stringify(template)}`,
      },
    ];
  }
  if (typeof k === 'number') return [{ nodeId, path, message: `${name}.key must be a string; write the number as text: key: "${k}"` }];
  return [{ nodeId, path, message: `${name}.key must be a non-empty string (a literal or a {{ }} template)` }];
}

/**
 * The definition's `concurrency`, when given: an object of {@link RUN_CONCURRENCY_KEYS}, `limit`
 * an integer from 1 to 1,000, `strategy` and `scope` among {@link CONCURRENCY_STRATEGIES} and
 * {@link CONCURRENCY_SCOPES}, and `key` a string whose templates compile and read only
 * {@link RUN_KEY_ROOTS}: the key is resolved when the run starts, before any node ran.
 */
export const runConcurrency: DefinitionRule = ({ def }) => {
  const c = def.concurrency;
  if (c === undefined) return [];
  const at = 'concurrency';
  if (!isObject(c)) return [{ path: at, message: 'concurrency must be an object {key?, limit, strategy?, scope?}' }];
  const out = unknownKeys(c, RUN_CONCURRENCY_KEYS, [], at, undefined, " in the workflow's concurrency");
  out.push(...boundedInteger(c, 'limit', FLOW_LIMITS.maxConcurrency, at, 'concurrency.limit'));
  out.push(...oneOf(c, 'strategy', CONCURRENCY_STRATEGIES, at, 'concurrency.strategy'));
  out.push(...oneOf(c, 'scope', CONCURRENCY_SCOPES, at, 'concurrency.scope'));
  out.push(...keyShape(c, at, 'concurrency'));
  if (typeof c.key === 'string') {
    const path = `${at}.key`;
    const open = unclosedTemplate(c.key);
    if (open !== undefined) out.push({ path, message: `unclosed template: the {{ at column ${open + 1} has no closing }}` });
    for (const message of checkTemplateSyntax(c.key)) out.push({ path, message });
    for (const message of checkTemplateRoots(c.key, RUN_KEY_ROOTS)) {
      out.push({ path, message: `concurrency.key is resolved when a run starts: ${message}` });
    }
  }
  return out;
};

/** The definition's `priority`, when given, is an integer from 1 (runs first) to 5. */
export const runPriority: DefinitionRule = ({ def }) => {
  const p = def.priority;
  if (p === undefined || (typeof p === 'number' && Number.isInteger(p) && p >= FLOW_LIMITS.minPriority && p <= FLOW_LIMITS.maxPriority)) return [];
  return [
    {
      path: 'priority',
      message: `priority must be an integer from ${FLOW_LIMITS.minPriority} (runs first) to ${FLOW_LIMITS.maxPriority}; got ${JSON.stringify(p) ?? String(p)}`,
    },
  ];
};

/**
 * A node's `concurrency` and `rate_limit`: on HTTP and CODE nodes only (only their tasks are
 * dispatched to workers); objects of {@link NODE_CONCURRENCY_KEYS} and {@link RATE_LIMIT_KEYS};
 * `concurrency.limit` 1..1,000, `rate_limit.limit` 1..100,000 and `rate_limit.per_seconds`
 * 1..86,400, all integers and required; a `key` whose templates pass {@link templateProblems}
 * (it is resolved in the scope of the node's spec).
 */
export const nodeFlow: NodeRule = ({ ctx, raw, at, nodeId, type, known }) => {
  const out: Problem[] = [];
  const shapes = [
    { field: 'concurrency', keys: NODE_CONCURRENCY_KEYS, shape: '{key?, limit}' },
    { field: 'rate_limit', keys: RATE_LIMIT_KEYS, shape: '{key?, limit, per_seconds}' },
  ] as const;
  for (const { field, keys, shape } of shapes) {
    const v = raw[field];
    if (v === undefined) continue;
    const path = `${at}.${field}`;
    if (known && !isWorkerType(type as string)) {
      out.push({ nodeId, path, message: `${field} applies to HTTP and CODE nodes only, not to a ${type as string} node` });
      continue;
    }
    if (!isObject(v)) {
      out.push({ nodeId, path, message: `${field} must be an object ${shape}` });
      continue;
    }
    out.push(...unknownKeys(v, keys, [], path, nodeId, ` in a node's ${field}`));
    if (field === 'concurrency') {
      out.push(...boundedInteger(v, 'limit', FLOW_LIMITS.maxConcurrency, path, 'concurrency.limit', nodeId));
    } else {
      out.push(...boundedInteger(v, 'limit', FLOW_LIMITS.maxRate, path, 'rate_limit.limit', nodeId));
      out.push(...boundedInteger(v, 'per_seconds', FLOW_LIMITS.maxPerSeconds, path, 'rate_limit.per_seconds', nodeId));
    }
    out.push(...keyShape(v, path, field, nodeId));
    if (typeof v.key === 'string') out.push(...templateProblems(ctx, v.key, `${path}.key`, nodeId));
  }
  return out;
};

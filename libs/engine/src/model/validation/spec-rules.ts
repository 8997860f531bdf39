/**
 * The rules that depend on a node's type: what each type's `spec` must hold, and the fields of a
 * `for_each` fan-out. Literal values are checked here; a templated one is checked by the machine
 * once it is resolved.
 */
import type { Problem } from '../../errors.js';
import { isReducerName, REDUCER_NAMES } from '../reducers.js';
import { isRfc3339, MAX_TIMESTAMP_MS, parseRfc3339 } from '../rfc3339.js';
import { findTemplates, hasTemplate } from '../template-syntax.js';
import { toleratedFailuresProblem } from '../tolerated-failures.js';
import { MAX_ITERATIONS } from '../workflow-definition.js';
import { NodeType, isWorkerType } from '../workflow-types.js';
import { isTemplated, secondsProblem, unknownKeys, type NodeContext, type NodeRule } from './context.js';
import { switchSpec } from './switch-rules.js';
import { templateProblems } from './templates.js';
import { didYouMean, suggestKey } from './suggest.js';
import {
  ALIAS_PATTERN,
  CEL_RESERVED,
  CODE_MEMORY_MB,
  CODE_RUNTIMES,
  CODE_SPEC_KEYS,
  HTTP_METHODS,
  HTTP_RESPONSES,
  HTTP_SPEC_KEYS,
  JOIN_SPEC_KEYS,
  RESERVED_ALIASES,
  SUBWORKFLOW_SPEC_KEYS,
  WAIT_FOR_EVENT_SPEC_KEYS,
  WAIT_SPEC_KEYS,
} from './vocabulary.js';

/** The spec of a node whose type needs one: an object, when given. */
function specObject(node: NodeContext, type: string): Problem[] {
  const { spec, specObj, at, nodeId } = node;
  return spec !== undefined && !specObj ? [{ nodeId, path: `${at}.spec`, message: `a ${type} node's spec must be an object` }] : [];
}

/** Every key of the spec, when it is an object, is one of `allowed` (`unknown field "X" in a <type> spec`, with a suggestion). */
function specKeys(node: NodeContext, type: string, allowed: readonly string[]): Problem[] {
  const { specObj, at, nodeId } = node;
  return specObj ? unknownKeys(specObj, allowed, [], `${at}.spec`, nodeId, ` in ${article(type)} ${type} spec`) : [];
}

/** `a` or `an` before a node type, as it is read aloud (`an HTTP`, `a CODE`). */
function article(type: string): string {
  return type === NodeType.Http ? 'an' : 'a';
}

/** `spec.<key>` is a non-empty string. */
function requiredString(node: NodeContext, key: string, type: string): Problem[] {
  const v = node.specObj?.[key];
  if (typeof v === 'string' && v.trim() !== '') return [];
  return [{ nodeId: node.nodeId, path: `${node.at}.spec.${key}`, message: `a ${type} node requires spec.${key} (a non-empty string)` }];
}

/** An HTTP or CODE `spec.timeout_seconds`, when given, is above 0: the executors refuse a zero timeout when they run. */
function taskTimeout(node: NodeContext, type: string): Problem[] {
  const v = node.specObj?.timeout_seconds;
  if (v === undefined || v === null) return [];
  const p = secondsProblem(v, true);
  return p ? [{ nodeId: node.nodeId, path: `${node.at}.spec.timeout_seconds`, message: `a ${type} node's timeout_seconds ${p}` }] : [];
}

/**
 * The keys of a CODE spec other than {@link CODE_SPEC_KEYS} are the handler's input, so only a near
 * miss of `timeout_seconds` or `memory_mb` is refused (it would leave the default limit in place);
 * a near miss of `code` is named in the problem of the missing `code`.
 */
function codeSpecKeys(node: NodeContext): Problem[] {
  const { specObj, at, nodeId } = node;
  if (!specObj) return [];
  const limits = CODE_SPEC_KEYS.filter((k) => k !== 'code');
  return Object.keys(specObj)
    .filter((key) => !CODE_SPEC_KEYS.includes(key) && suggestKey(key, limits) !== undefined)
    .map((key) => ({
      nodeId,
      path: `${at}.spec.${key}`,
      message:
        `unknown field ${JSON.stringify(key)} in a CODE spec${didYouMean(key, limits)}: the spec's other fields than ` +
        `${CODE_SPEC_KEYS.join(', ')} are the handler's input, so a near miss of a limit is refused; ` +
        `to hand ${JSON.stringify(key)} to the handler, nest it under another field`,
    }));
}

/** The problem of a CODE node's missing `spec.code`, naming a key that looks like a misspelling of it. */
function codeRequired(node: NodeContext, type: string): Problem[] {
  const out = requiredString(node, 'code', type);
  const near = Object.keys(node.specObj ?? {}).find((key) => key !== 'code' && suggestKey(key, ['code']) !== undefined);
  if (out.length === 1 && near !== undefined && node.specObj?.code === undefined) {
    out[0] = { ...out[0]!, message: `${out[0]!.message}; spec.${near} is not it (did you mean "code"?)` };
  }
  return out;
}

/**
 * CODE: `spec.code`, a `runtime` among {@link CODE_RUNTIMES} (required: the executor refuses a
 * task without one), no near miss of a limit's key, a task timeout and a literal `memory_mb`
 * within {@link CODE_MEMORY_MB}.
 */
function codeSpec(node: NodeContext, type: string): Problem[] {
  const { raw, specObj, at, nodeId } = node;
  const out = [...specObject(node, type), ...codeSpecKeys(node), ...codeRequired(node, type)];
  if (raw.runtime === undefined) {
    out.push({ nodeId, path: `${at}.runtime`, message: `a CODE node requires runtime (one of ${CODE_RUNTIMES.join(', ')})` });
  } else if (typeof raw.runtime !== 'string' || !CODE_RUNTIMES.includes(raw.runtime)) {
    const hint = typeof raw.runtime === 'string' ? didYouMean(raw.runtime, CODE_RUNTIMES) : '';
    out.push({
      nodeId,
      path: `${at}.runtime`,
      message: `unknown CODE runtime ${JSON.stringify(raw.runtime)}${hint}; expected one of ${CODE_RUNTIMES.join(', ')}`,
    });
  }
  out.push(...taskTimeout(node, type));
  const mem = specObj?.memory_mb;
  if (mem !== undefined && !isTemplated(mem) && !(typeof mem === 'number' && mem >= CODE_MEMORY_MB.min && mem <= CODE_MEMORY_MB.max)) {
    out.push({ nodeId, path: `${at}.spec.memory_mb`, message: `memory_mb must be a number from ${CODE_MEMORY_MB.min} to ${CODE_MEMORY_MB.max} (megabytes)` });
  }
  return out;
}

/**
 * HTTP: only the keys of {@link HTTP_SPEC_KEYS}, `spec.url`, a task timeout, a literal `method`
 * among {@link HTTP_METHODS} and a literal `response` among {@link HTTP_RESPONSES}.
 */
function httpSpec(node: NodeContext, type: string): Problem[] {
  const { specObj, at, nodeId } = node;
  const out = [...specObject(node, type), ...specKeys(node, type, HTTP_SPEC_KEYS), ...requiredString(node, 'url', type), ...taskTimeout(node, type)];
  const method = specObj?.method;
  if (method !== undefined && !isTemplated(method) && !(typeof method === 'string' && HTTP_METHODS.includes(method.toUpperCase()))) {
    const hint = typeof method === 'string' ? didYouMean(method.toUpperCase(), HTTP_METHODS) : '';
    out.push({
      nodeId,
      path: `${at}.spec.method`,
      message: `unknown HTTP method ${JSON.stringify(method)}${hint}; expected one of ${HTTP_METHODS.join(', ')}`,
    });
  }
  const response = specObj?.response;
  if (response !== undefined && response !== null && !isTemplated(response) && !(typeof response === 'string' && HTTP_RESPONSES.includes(response))) {
    const hint = typeof response === 'string' ? didYouMean(response, HTTP_RESPONSES) : '';
    out.push({
      nodeId,
      path: `${at}.spec.response`,
      message: `unknown HTTP response ${JSON.stringify(response)}${hint}; expected one of ${HTTP_RESPONSES.join(', ')}`,
    });
  }
  return out;
}

/** JOIN: `spec.reducers`, when given, maps fields to known reducers. */
function joinSpec(node: NodeContext, type: string): Problem[] {
  const { specObj, at, nodeId } = node;
  const out = [...specObject(node, type), ...specKeys(node, type, JOIN_SPEC_KEYS)];
  if (specObj?.reducers !== undefined) out.push(...reducerProblems(specObj.reducers, `${at}.spec.reducers`, `JOIN ${nodeId}`, nodeId));
  return out;
}

/**
 * WAIT: `spec.duration_seconds` (0 to 365 days) or `spec.until`, a literal RFC 3339 time no later
 * than the year 9999 (a later one could not be stored).
 */
function waitSpec(node: NodeContext, type: string): Problem[] {
  const { specObj, at, nodeId } = node;
  const out = [...specObject(node, type), ...specKeys(node, type, WAIT_SPEC_KEYS)];
  const d = specObj?.duration_seconds;
  const u = specObj?.until;
  if (d === undefined && u === undefined) {
    out.push({ nodeId, path: `${at}.spec`, message: 'a WAIT node requires spec.duration_seconds or spec.until' });
  }
  if (d !== undefined) {
    const p = secondsProblem(d);
    if (p) out.push({ nodeId, path: `${at}.spec.duration_seconds`, message: `duration_seconds ${p}` });
  }
  if (u !== undefined && (typeof u !== 'string' || (!hasTemplate(u) && !isRfc3339(u)))) {
    out.push({ nodeId, path: `${at}.spec.until`, message: 'until must be an RFC 3339 time, e.g. 2030-01-01T00:00:00Z' });
  } else if (typeof u === 'string' && !hasTemplate(u) && (parseRfc3339(u)?.getTime() ?? 0) > MAX_TIMESTAMP_MS) {
    out.push({ nodeId, path: `${at}.spec.until`, message: 'until must not be later than 9999-12-31T23:59:59Z' });
  }
  return out;
}

/** WAIT_FOR_EVENT: `spec.event`, and `spec.timeout_seconds` from 0 to 365 days when given. */
function waitForEventSpec(node: NodeContext, type: string): Problem[] {
  const { specObj, at, nodeId } = node;
  const out = [...specObject(node, type), ...specKeys(node, type, WAIT_FOR_EVENT_SPEC_KEYS), ...requiredString(node, 'event', type)];
  const t = specObj?.timeout_seconds;
  if (t !== undefined && t !== null) {
    const p = secondsProblem(t);
    if (p) out.push({ nodeId, path: `${at}.spec.timeout_seconds`, message: `timeout_seconds ${p}` });
  }
  return out;
}

/**
 * SUBWORKFLOW: `spec.workflow`, only the keys of {@link SUBWORKFLOW_SPEC_KEYS}, a literal
 * `version` that is a positive 32-bit integer, and literal `input` and `config` objects.
 */
function subworkflowSpec(node: NodeContext, type: string): Problem[] {
  const { specObj, at, nodeId } = node;
  const out = [...specObject(node, type), ...specKeys(node, type, SUBWORKFLOW_SPEC_KEYS), ...requiredString(node, 'workflow', type)];
  const v = specObj?.version;
  if (v !== undefined && v !== null && !isTemplated(v) && !(typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 2 ** 31 - 1)) {
    out.push({ nodeId, path: `${at}.spec.version`, message: "a SUBWORKFLOW node's spec.version must be a positive integer (omit it for the default version)" });
  }
  for (const key of ['input', 'config']) {
    const value = specObj?.[key];
    if (value !== undefined && value !== null && !isTemplated(value) && (typeof value !== 'object' || Array.isArray(value))) {
      out.push({ nodeId, path: `${at}.spec.${key}`, message: `a SUBWORKFLOW node's spec.${key} must be an object (the child run's ${key})` });
    }
  }
  return out;
}

/** FORK takes no spec: one that holds anything (an empty object or null is allowed) is refused rather than ignored. */
function noSpec(node: NodeContext, type: string): Problem[] {
  const { spec, specObj, at, nodeId } = node;
  if (spec === undefined || spec === null || (specObj && Object.keys(specObj).length === 0)) return [];
  return [{ nodeId, path: `${at}.spec`, message: `a ${type} node takes no spec` }];
}

/** What the spec of a node of a known type must hold: a SWITCH's at most its default ({@link switchSpec}), a FORK's nothing. */
export const typeSpec: NodeRule = (node) => {
  const type = node.type;
  switch (type) {
    case NodeType.Code:
      return codeSpec(node, type);
    case NodeType.Http:
      return httpSpec(node, type);
    case NodeType.Join:
      return joinSpec(node, type);
    case NodeType.Wait:
      return waitSpec(node, type);
    case NodeType.WaitForEvent:
      return waitForEventSpec(node, type);
    case NodeType.Subworkflow:
      return subworkflowSpec(node, type);
    case NodeType.Switch:
      return switchSpec(node);
    case NodeType.Fork:
      return noSpec(node, type);
    default:
      return [];
  }
};

/**
 * The problems of a reducers map (a JOIN's `spec.reducers` or a `for_each` node's `reducers`) at
 * `path`: it must be an object of field name → one of {@link REDUCER_NAMES}. `owner` names the
 * node in messages.
 */
function reducerProblems(reducers: unknown, path: string, owner: string, nodeId: string | undefined): Problem[] {
  if (reducers === null || typeof reducers !== 'object' || Array.isArray(reducers)) {
    return [
      {
        nodeId,
        path,
        message: `${path.endsWith('spec.reducers') ? 'JOIN spec.reducers' : 'reducers'} must be an object of field: reducer (${REDUCER_NAMES.join(', ')})`,
      },
    ];
  }
  const out: Problem[] = [];
  for (const [field, name] of Object.entries(reducers)) {
    if (!isReducerName(name)) {
      out.push({
        nodeId,
        path: `${path}.${field}`,
        message: `unknown reducer ${JSON.stringify(name)} for field "${field}" of ${owner}; expected one of ${REDUCER_NAMES.join(', ')}`,
      });
    }
  }
  return out;
}

/**
 * A node's dynamic fan-out fields: `for_each` must be one `{{ }}` template on an HTTP or CODE
 * node, and its template must pass {@link templateProblems}; `as` a CEL identifier other than
 * input, config, tasks, system, run and CEL's reserved words; `max_concurrency` an integer from 1 to
 * {@link MAX_ITERATIONS}; node-level `reducers` a reducers map; `tolerated_failures` a count or a
 * percentage ({@link toleratedFailuresProblem}). `as`, `max_concurrency`, `reducers` and
 * `tolerated_failures` without `for_each` are refused, not ignored.
 */
export const forEach: NodeRule = ({ ctx, raw, at, nodeId, type, known }) => {
  const fe = raw.for_each;
  if (fe === undefined) {
    // max_concurrency caps one node's iterations; a cap across runs is the node's concurrency.
    const hint = (key: string): string =>
      key === 'max_concurrency' ? ' (to cap how many of its tasks run at once across runs, use concurrency: {limit})' : '';
    return ['as', 'max_concurrency', 'reducers', 'tolerated_failures'].flatMap((key) =>
      raw[key] !== undefined
        ? [{ nodeId, path: `${at}.${key}`, message: `${key} applies to a for_each node only; this node has no for_each${hint(key)}` }]
        : [],
    );
  }
  const out: Problem[] = [];
  if (known && !isWorkerType(type as string)) {
    out.push({ nodeId, path: `${at}.for_each`, message: `for_each applies to HTTP and CODE nodes only, not to a ${type as string} node` });
  }
  if (typeof fe !== 'string' || findTemplates(fe).length !== 1 || fe.trim() !== findTemplates(fe)[0]!.text.trim()) {
    out.push({ nodeId, path: `${at}.for_each`, message: 'for_each must be one {{ }} template giving an array, e.g. "{{ input.employers }}"' });
  }
  const as = raw.as;
  if (as !== undefined && (typeof as !== 'string' || !ALIAS_PATTERN.test(as) || RESERVED_ALIASES.includes(as) || CEL_RESERVED.includes(as))) {
    out.push({
      nodeId,
      path: `${at}.as`,
      message: `as must be a name made of letters, digits and "_" (not starting with a digit), other than ${RESERVED_ALIASES.join(', ')} and CEL's reserved words (true, false, null, in, …); got ${JSON.stringify(as)}`,
    });
  }
  const mc = raw.max_concurrency;
  if (mc !== undefined && !(typeof mc === 'number' && Number.isInteger(mc) && mc >= 1 && mc <= MAX_ITERATIONS)) {
    out.push({ nodeId, path: `${at}.max_concurrency`, message: `max_concurrency must be an integer from 1 to ${MAX_ITERATIONS}` });
  }
  const tolerated = raw.tolerated_failures === undefined ? undefined : toleratedFailuresProblem(raw.tolerated_failures);
  if (tolerated !== undefined) out.push({ nodeId, path: `${at}.tolerated_failures`, message: tolerated });
  if (raw.reducers !== undefined) out.push(...reducerProblems(raw.reducers, `${at}.reducers`, `for_each node ${nodeId ?? '?'}`, nodeId));
  if (typeof fe === 'string') out.push(...templateProblems(ctx, fe, `${at}.for_each`, nodeId));
  return out;
};

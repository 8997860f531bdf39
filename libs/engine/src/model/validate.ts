/**
 * Parsing and validation of published definitions (DESIGN §2): YAML or JSON in, every problem
 * out, each with the node id and path it concerns. CEL is checked with the template module's
 * compiler, so publish-time and run-time agree on what an expression is.
 */
import YAML, { type YAMLError } from 'yaml';
import { WeftError, type Problem } from '../errors.js';
import { checkTemplateSyntax } from '../template/resolver.js';
import { findTemplates, hasTemplate, unclosedTemplate } from './template-syntax.js';
import { templateTaskRefs } from './dag.js';
import { isReducerName, REDUCER_NAMES } from './reducers.js';
import { isRfc3339, MAX_TIMESTAMP_MS, parseRfc3339 } from './rfc3339.js';
import { MAX_DURATION_SECONDS, MAX_ITERATIONS, type WorkflowDefinition } from './workflow-definition.js';
import { NODE_TYPES, NodeType, isWorkerType, type JsonValue } from './workflow-types.js';

/** CODE runtimes a definition may name (DESIGN §2). */
export const CODE_RUNTIMES: readonly string[] = ['python', 'js', 'node'];

/** HTTP methods a literal `spec.method` may name (case-insensitive). */
export const HTTP_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The keys a node may have; anything else is an unknown field. */
export const NODE_KEYS: readonly string[] = [
  'node_id',
  'name',
  'type',
  'runtime',
  'spec',
  'retry',
  'queue',
  'description',
  'output_keep',
  'output_drop',
  'sensitive',
  'for_each',
  'as',
  'max_concurrency',
  'reducers',
];
/** The keys an edge may have. */
export const EDGE_KEYS: readonly string[] = ['from', 'to', 'condition', 'on_error'];
/** The keys a definition may have at the top level. */
export const DEFINITION_KEYS: readonly string[] = ['nodes', 'edges', 'output', 'name', 'description', 'workflow_id'];

/** DESIGN §6 node fields that are specified but not implemented yet (none left). */
export const UNSUPPORTED_NODE_KEYS: readonly string[] = [];
/** Names a `for_each` alias may not take: the template variables every node sees. */
const RESERVED_ALIASES: readonly string[] = ['input', 'config', 'tasks', 'system'];
/** CEL's reserved words: an alias named so could not be read (`{{true}}` is the literal). */
const CEL_RESERVED: readonly string[] = [
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
  'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
];
/** The keys of a SUBWORKFLOW node's spec. */
const SUBWORKFLOW_SPEC_KEYS: readonly string[] = ['workflow', 'version', 'input', 'config'];
/** A `for_each` alias: a CEL identifier. */
const ALIAS_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** DESIGN §6 edge fields that are specified but not implemented yet (none left). */
export const UNSUPPORTED_EDGE_KEYS: readonly string[] = [];

/** A node id: a letter or `_`, then up to 127 letters, digits, `_` or `-`. */
export const NODE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;

/** Bounds of a retry policy: `max_attempts` 1..100, `backoff_seconds` 0..86,400 (one day). */
export const RETRY_LIMITS = { maxAttempts: 100, maxBackoffSeconds: 86_400 } as const;


/** Bounds of a literal CODE `spec.memory_mb`. */
export const CODE_MEMORY_MB = { min: 16, max: 4096 } as const;

/**
 * Most alias expansions `toJS` performs (the `yaml` package's `maxAliasCount`): a "billion
 * laughs" document of nested anchors would otherwise expand exponentially.
 */
const MAX_ALIASES = 100;

/** The node types a definition may use. */
const SUPPORTED_TYPES: readonly string[] = NODE_TYPES;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function yamlProblem(err: YAMLError): Problem {
  const first = err.message.split('\n')[0].replace(/:\s*$/, '');
  const pos = err.linePos?.[0];
  const where = pos && !/ at line \d+/.test(first) ? ` at line ${pos.line}, column ${pos.col}` : '';
  return { path: pos ? `line ${pos.line}, column ${pos.col}` : undefined, message: `YAML syntax error: ${first}${where}` };
}

/** A problem for an error `toJS` throws (alias bombs, unresolved aliases, …); never rethrown. */
function conversionProblem(err: unknown): Problem {
  const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
  if (/excessive alias count/i.test(msg)) {
    return { message: `YAML error: too many alias expansions (more than ${MAX_ALIASES}); do not nest anchors and aliases` };
  }
  return { message: `YAML error: ${msg}` };
}

/** An alias inside the node it refers to (`a: &a [*a]`) would make the result circular. */
function recursiveAlias(doc: YAML.Document, lines: YAML.LineCounter): Problem | undefined {
  let found: Problem | undefined;
  YAML.visit(doc, {
    Alias(_key, node, path) {
      const target = node.resolve(doc);
      if (target && path.includes(target)) {
        const pos = node.range ? lines.linePos(node.range[0]) : undefined;
        found = {
          path: pos ? `line ${pos.line}, column ${pos.col}` : undefined,
          message: `YAML error: alias *${node.source} refers to a node that contains it`,
        };
        return YAML.visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** The error thrown for an invalid definition: `BAD_USER_INPUT` with every problem. */
function invalid(problems: Problem[]): WeftError {
  return new WeftError('BAD_USER_INPUT', `invalid workflow definition: ${problems.length} problem(s)`, problems);
}

/**
 * Parses a definition written in YAML or JSON (YAML 1.2 is a JSON superset). Does NOT validate:
 * the result has the definition's shape only if {@link validateDefinition} finds no problem.
 * @throws WeftError `BAD_USER_INPUT` with one problem (its line and column) on a syntax error.
 */
export function parseDefinition(source: string): WorkflowDefinition {
  const lines = new YAML.LineCounter();
  const doc = YAML.parseDocument(source, { uniqueKeys: true, prettyErrors: true, lineCounter: lines });
  if (doc.errors.length > 0) throw invalid([yamlProblem(doc.errors[0])]);
  const circular = recursiveAlias(doc, lines);
  if (circular) throw invalid([circular]);
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIASES }) as WorkflowDefinition;
  } catch (err) {
    throw invalid([conversionProblem(err)]);
  }
}

/**
 * Parses, validates and normalizes (`edges` defaults to `[]`) a definition.
 * @throws WeftError `BAD_USER_INPUT`, message `invalid workflow definition: N problem(s)`, with
 * every problem in `problems`.
 */
export function loadDefinition(source: string): WorkflowDefinition {
  const def = parseDefinition(source);
  const problems = validateDefinition(def);
  if (problems.length > 0) throw invalid(problems);
  return { ...def, edges: def.edges ?? [] };
}

/** Where a non-JSON value (NaN, Infinity, binary, …) hides in `v`, or undefined. */
function nonJson(v: unknown, path: string): string | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : path;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = nonJson(v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (isObject(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    for (const [k, x] of Object.entries(v)) {
      const p = nonJson(x, `${path}.${k}`);
      if (p) return p;
    }
    return undefined;
  }
  return path;
}

/** Calls `fn` on every string value (not key) in `v` with its path. */
function eachString(v: unknown, path: string, fn: (s: string, path: string) => void): void {
  if (typeof v === 'string') fn(v, path);
  else if (Array.isArray(v)) v.forEach((x, i) => eachString(x, `${path}[${i}]`, fn));
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) eachString(x, `${path}.${k}`, fn);
}


/**
 * A seconds value as a wait or timeout accepts it (number or numeric string, 0 to
 * {@link MAX_DURATION_SECONDS}), unless templated: a template is checked when it is resolved.
 */
function secondsProblem(v: unknown, positive = false): string | undefined {
  const bad = `must be a ${positive ? 'positive' : 'non-negative'} number of seconds, at most ${MAX_DURATION_SECONDS} (365 days)`;
  let f: number;
  if (typeof v === 'number') f = v;
  else if (typeof v === 'string') {
    if (hasTemplate(v)) return undefined;
    f = v.trim() === '' ? Number.NaN : Number(v.trim());
  } else return bad;
  return Number.isFinite(f) && (positive ? f > 0 : f >= 0) && f <= MAX_DURATION_SECONDS ? undefined : bad;
}

/** True for a string holding a `{{ }}` template: its value is only known when resolved. */
function isTemplated(v: unknown): boolean {
  return typeof v === 'string' && hasTemplate(v);
}

/**
 * Validates a parsed definition and lists EVERY problem found (an empty list means valid), each
 * with `nodeId` (when it concerns a node), `path` (e.g. `nodes[2].spec.url`, `edges[0].to`) and
 * `message`. Checks: the shape (an object with a `nodes` list; `edges` a list if present) and
 * its keys ({@link DEFINITION_KEYS}, {@link NODE_KEYS}, {@link EDGE_KEYS}: anything else is an
 * `unknown field`), node ids (present, strings matching {@link NODE_ID_PATTERN}, unique), node
 * types, per-type specs (CODE `spec.code`, runtime python/js/node, `memory_mb` 16..4096; HTTP
 * `spec.url` and `method`; WAIT `duration_seconds` or `until`; WAIT_FOR_EVENT `event`; literal
 * durations and timeouts 0..{@link MAX_DURATION_SECONDS}, an HTTP or CODE `timeout_seconds` above
 * 0), retry values (`max_attempts` integer 1..100, `backoff_seconds` 0..86,400), JSON-only
 * values, edge ends, conditions (`{{ }}`
 * templates, on edges leaving any node), `on_error` (a boolean; not on edges leaving a SWITCH or
 * FORK, which never fail), every template of every spec, condition and the
 * definition `output` (closed, CEL that compiles, static `tasks.<id>` references to declared
 * nodes), cycles, the entry node and reachability from it.
 *
 * DESIGN §6 features that are not implemented yet are refused, never ignored: SUBWORKFLOW nodes,
 * {@link UNSUPPORTED_NODE_KEYS} and {@link UNSUPPORTED_EDGE_KEYS}. JOIN `spec.reducers` must be an
 * object of field → one of {@link REDUCER_NAMES}.
 * Never throws.
 */
export function validateDefinition(def: unknown): Problem[] {
  const problems: Problem[] = [];
  const add = (p: Problem): void => {
    problems.push(p);
  };
  if (!isObject(def)) {
    add({ message: 'a workflow definition must be an object with a "nodes" list and an "edges" list' });
    return problems;
  }
  unknownKeys(def, DEFINITION_KEYS, [], '', undefined, add);
  for (const key of ['name', 'description', 'workflow_id']) {
    if (def[key] !== undefined && typeof def[key] !== 'string') add({ path: key, message: `${key} must be a string` });
  }
  if (!Array.isArray(def.nodes)) {
    add({ path: 'nodes', message: '"nodes" must be a list of nodes' });
  }
  if (def.edges !== undefined && !Array.isArray(def.edges)) {
    add({ path: 'edges', message: '"edges" must be a list of edges' });
  }
  const nodes: unknown[] = Array.isArray(def.nodes) ? def.nodes : [];
  const edges: unknown[] = Array.isArray(def.edges) ? def.edges : [];
  if (Array.isArray(def.nodes) && nodes.length === 0) {
    add({ path: 'nodes', message: 'a workflow needs at least one node' });
  }

  // Every declared node id and its type (first declaration), for template refs and conditions.
  const declared = new Map<string, unknown>();
  for (const n of nodes) {
    if (isObject(n) && typeof n.node_id === 'string' && !declared.has(n.node_id)) declared.set(n.node_id, n.type);
  }

  const templates = (text: string, path: string, nodeId?: string): void => {
    const open = unclosedTemplate(text);
    if (open !== undefined) {
      add({ nodeId, path, message: `unclosed template: the {{ at column ${open + 1} has no closing }}` });
    }
    for (const message of checkTemplateSyntax(text)) add({ nodeId, path, message });
    for (const t of findTemplates(text)) {
      const seen = new Set<string>();
      for (const ref of templateTaskRefs([t.text]) ?? []) {
        if (declared.has(ref) || seen.has(ref)) continue;
        seen.add(ref);
        add({ nodeId, path, message: `template {{ ${t.expression} }} references unknown node "${ref}"` });
      }
    }
  };

  // Nodes.
  const ids = new Map<string, number>(); // node id -> index of its first declaration
  const order: string[] = [];
  nodes.forEach((raw, i) => {
    const at = `nodes[${i}]`;
    if (!isObject(raw)) {
      add({ path: at, message: 'a node must be an object' });
      return;
    }
    let nodeId: string | undefined;
    if (raw.node_id === undefined || raw.node_id === '') {
      add({ path: `${at}.node_id`, message: 'node_id is required' });
    } else if (typeof raw.node_id !== 'string') {
      add({ path: `${at}.node_id`, message: 'node_id must be a string' });
    } else {
      nodeId = raw.node_id;
      if (!NODE_ID_PATTERN.test(nodeId)) {
        add({
          nodeId,
          path: `${at}.node_id`,
          message:
            `invalid node_id ${JSON.stringify(nodeId)}: it must start with a letter or "_" and ` +
            'continue with letters, digits, "_" or "-", at most 128 characters in all',
        });
      }
      const first = ids.get(nodeId);
      if (first !== undefined) {
        add({ nodeId, path: `${at}.node_id`, message: `duplicate node_id "${nodeId}" (first declared at nodes[${first}])` });
      } else {
        ids.set(nodeId, i);
        order.push(nodeId);
      }
    }
    unknownKeys(raw, NODE_KEYS, UNSUPPORTED_NODE_KEYS, at, nodeId, add);
    for (const key of ['name', 'description']) {
      if (raw[key] !== undefined && typeof raw[key] !== 'string') add({ nodeId, path: `${at}.${key}`, message: `${key} must be a string` });
    }
    const type = raw.type;
    const known = typeof type === 'string' && (NODE_TYPES as readonly string[]).includes(type);
    if (raw.queue !== undefined && (typeof raw.queue !== 'string' || raw.queue.trim() === '')) {
      add({ nodeId, path: `${at}.queue`, message: 'queue must be a non-empty string' });
    } else if (raw.queue !== undefined && known && !isWorkerType(type)) {
      // Only HTTP and CODE tasks reach a worker; on any other node a queue would be silently ignored.
      add({ nodeId, path: `${at}.queue`, message: `queue applies to HTTP and CODE nodes only, not to a ${type} node` });
    }
    // Payload hygiene (DESIGN §6): lists of top-level output fields, and a boolean.
    for (const key of ['output_keep', 'output_drop']) {
      const fields = raw[key];
      if (fields === undefined) continue;
      if (!Array.isArray(fields) || fields.length === 0 || fields.some((f) => typeof f !== 'string' || f === '')) {
        add({ nodeId, path: `${at}.${key}`, message: `${key} must be a non-empty list of output field names` });
      } else if (new Set(fields).size !== fields.length) {
        add({ nodeId, path: `${at}.${key}`, message: `${key} names a field twice` });
      }
    }
    if (raw.sensitive !== undefined && typeof raw.sensitive !== 'boolean') {
      add({ nodeId, path: `${at}.sensitive`, message: 'sensitive must be true or false' });
    }

    // Payload hygiene applies where an output is produced by tenant code or a remote service: a
    // worker node. FORK/JOIN/SWITCH/WAIT outputs are derived from others and would leak through.
    if (known && !isWorkerType(type)) {
      for (const key of ['output_keep', 'output_drop', 'sensitive']) {
        if (raw[key] !== undefined) add({ nodeId, path: `${at}.${key}`, message: `${key} applies to HTTP and CODE nodes only, not to a ${type} node` });
      }
    }
    if (type === undefined) {
      add({ nodeId, path: `${at}.type`, message: `type is required (one of ${SUPPORTED_TYPES.join(', ')})` });
    } else if (!known) {
      add({ nodeId, path: `${at}.type`, message: `unknown node type ${JSON.stringify(type)}; expected one of ${SUPPORTED_TYPES.join(', ')}` });
    }

    const spec = raw.spec;
    const specObj = isObject(spec) ? spec : undefined;
    const needsSpec = (t: string): void => {
      if (spec !== undefined && !specObj) add({ nodeId, path: `${at}.spec`, message: `a ${t} node's spec must be an object` });
    };
    const timeout = (t: string): void => {
      const v = specObj?.timeout_seconds;
      if (v === undefined || v === null) return;
      // The HTTP and CODE executors refuse a zero timeout at run time; refuse it when publishing.
      const p = secondsProblem(v, true);
      if (p) add({ nodeId, path: `${at}.spec.timeout_seconds`, message: `a ${t} node's timeout_seconds ${p}` });
    };
    const requireString = (key: string, t: string): void => {
      const v = specObj?.[key];
      if (typeof v !== 'string' || v.trim() === '') {
        add({ nodeId, path: `${at}.spec.${key}`, message: `a ${t} node requires spec.${key} (a non-empty string)` });
      }
    };
    switch (type) {
      case NodeType.Code: {
        needsSpec(type);
        requireString('code', type);
        if (raw.runtime !== undefined && (typeof raw.runtime !== 'string' || !CODE_RUNTIMES.includes(raw.runtime))) {
          add({ nodeId, path: `${at}.runtime`, message: `unknown CODE runtime ${JSON.stringify(raw.runtime)}; expected one of ${CODE_RUNTIMES.join(', ')}` });
        }
        timeout(type);
        const mem = specObj?.memory_mb;
        if (mem !== undefined && !isTemplated(mem) && !(typeof mem === 'number' && mem >= CODE_MEMORY_MB.min && mem <= CODE_MEMORY_MB.max)) {
          add({ nodeId, path: `${at}.spec.memory_mb`, message: `memory_mb must be a number from ${CODE_MEMORY_MB.min} to ${CODE_MEMORY_MB.max} (megabytes)` });
        }
        break;
      }
      case NodeType.Http: {
        needsSpec(type);
        requireString('url', type);
        timeout(type);
        const method = specObj?.method;
        if (method !== undefined && !isTemplated(method) && !(typeof method === 'string' && HTTP_METHODS.includes(method.toUpperCase()))) {
          add({ nodeId, path: `${at}.spec.method`, message: `unknown HTTP method ${JSON.stringify(method)}; expected one of ${HTTP_METHODS.join(', ')}` });
        }
        break;
      }
      case NodeType.Join:
        needsSpec(type);
        if (specObj?.reducers !== undefined) reducerProblems(specObj.reducers, `${at}.spec.reducers`, `JOIN ${nodeId}`, nodeId, add);
        break;
      case NodeType.Wait: {
        needsSpec(type);
        const d = specObj?.duration_seconds;
        const u = specObj?.until;
        if (d === undefined && u === undefined) {
          add({ nodeId, path: `${at}.spec`, message: 'a WAIT node requires spec.duration_seconds or spec.until' });
        }
        if (d !== undefined) {
          const p = secondsProblem(d);
          if (p) add({ nodeId, path: `${at}.spec.duration_seconds`, message: `duration_seconds ${p}` });
        }
        if (u !== undefined && (typeof u !== 'string' || (!hasTemplate(u) && !isRfc3339(u)))) {
          add({ nodeId, path: `${at}.spec.until`, message: 'until must be an RFC 3339 time, e.g. 2030-01-01T00:00:00Z' });
        } else if (typeof u === 'string' && !hasTemplate(u) && (parseRfc3339(u)?.getTime() ?? 0) > MAX_TIMESTAMP_MS) {
          add({ nodeId, path: `${at}.spec.until`, message: 'until must not be later than 9999-12-31T23:59:59Z' });
        }
        break;
      }
      case NodeType.WaitForEvent: {
        needsSpec(type);
        requireString('event', type);
        const t = specObj?.timeout_seconds;
        if (t !== undefined && t !== null) {
          const p = secondsProblem(t);
          if (p) add({ nodeId, path: `${at}.spec.timeout_seconds`, message: `timeout_seconds ${p}` });
        }
        break;
      }
      case NodeType.Subworkflow: {
        needsSpec(type);
        requireString('workflow', type);
        // A typo (`inputs:`) would otherwise start the child silently with `{}`.
        if (specObj) unknownKeys(specObj, SUBWORKFLOW_SPEC_KEYS, [], `${at}.spec`, nodeId, add);
        const v = specObj?.version;
        if (v !== undefined && v !== null && !isTemplated(v) && !(typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 2 ** 31 - 1)) {
          add({ nodeId, path: `${at}.spec.version`, message: 'a SUBWORKFLOW node\'s spec.version must be a positive integer (omit it for the default version)' });
        }
        for (const key of ['input', 'config']) {
          const value = specObj?.[key];
          if (value !== undefined && value !== null && !isTemplated(value) && (typeof value !== 'object' || Array.isArray(value))) {
            add({ nodeId, path: `${at}.spec.${key}`, message: `a SUBWORKFLOW node's spec.${key} must be an object (the child run's ${key})` });
          }
        }
        break;
      }
      default:
        break;
    }

    forEachProblems(raw, at, nodeId, known ? (type as string) : undefined, add);
    if (typeof raw.for_each === 'string') templates(raw.for_each, `${at}.for_each`, nodeId);

    if (raw.retry !== undefined) {
      const r = raw.retry;
      if (!isObject(r)) {
        add({ nodeId, path: `${at}.retry`, message: 'retry must be an object {max_attempts, backoff_seconds}' });
      } else {
        unknownKeys(r, ['max_attempts', 'backoff_seconds'], [], `${at}.retry`, nodeId, add);
        const m = r.max_attempts;
        if (typeof m !== 'number' || !Number.isInteger(m) || m < 1 || m > RETRY_LIMITS.maxAttempts) {
          add({ nodeId, path: `${at}.retry.max_attempts`, message: `retry.max_attempts must be an integer >= 1 and <= ${RETRY_LIMITS.maxAttempts}` });
        }
        const b = r.backoff_seconds;
        if (b !== undefined && (typeof b !== 'number' || !Number.isFinite(b) || b < 0 || b > RETRY_LIMITS.maxBackoffSeconds)) {
          add({
            nodeId,
            path: `${at}.retry.backoff_seconds`,
            message: `retry.backoff_seconds must be a number >= 0 and <= ${RETRY_LIMITS.maxBackoffSeconds} (one day; a retry waits at most 10 minutes anyway)`,
          });
        }
      }
    }

    if (spec !== undefined) {
      const bad = nonJson(spec, `${at}.spec`);
      if (bad) add({ nodeId, path: bad, message: 'spec values must be JSON (no NaN, Infinity or binary)' });
      eachString(spec, `${at}.spec`, (s, path) => templates(s, path, nodeId));
    }
  });

  // Edges.
  const adj = new Map<string, string[]>(order.map((id) => [id, []]));
  const indegree = new Map<string, number>(order.map((id) => [id, 0]));
  const seenEdges = new Map<string, number>(); // "from→to" (and kind) -> index of its first declaration
  edges.forEach((raw, i) => {
    const at = `edges[${i}]`;
    if (!isObject(raw)) {
      add({ path: at, message: 'an edge must be an object {from, to, condition?, on_error?}' });
      return;
    }
    const from = typeof raw.from === 'string' ? raw.from : undefined;
    const to = typeof raw.to === 'string' ? raw.to : undefined;
    const nodeId = from;
    unknownKeys(raw, EDGE_KEYS, UNSUPPORTED_EDGE_KEYS, at, nodeId, add);
    if (from === undefined) add({ path: `${at}.from`, message: 'edge "from" must be a node id' });
    else if (!ids.has(from)) add({ nodeId, path: `${at}.from`, message: `edge from unknown node "${from}"` });
    if (to === undefined) add({ nodeId, path: `${at}.to`, message: 'edge "to" must be a node id' });
    else if (!ids.has(to)) add({ nodeId, path: `${at}.to`, message: `edge to unknown node "${to}"` });
    if (raw.condition !== undefined) {
      if (typeof raw.condition !== 'string') {
        add({ nodeId, path: `${at}.condition`, message: 'condition must be a string holding a {{ }} CEL template' });
      } else if (raw.condition.trim() !== '' && !hasTemplate(raw.condition)) {
        add({ nodeId, path: `${at}.condition`, message: 'condition must be a {{ }} CEL template, e.g. "{{tasks.a.output.n > 1}}"' });
      } else {
        templates(raw.condition, `${at}.condition`, nodeId);
      }
    }
    if (raw.on_error !== undefined && typeof raw.on_error !== 'boolean') {
      add({ nodeId, path: `${at}.on_error`, message: 'on_error must be true or false' });
    } else if (raw.on_error === true && from !== undefined) {
      const fromType = declared.get(from);
      if (fromType === NodeType.Switch || fromType === NodeType.Fork) {
        add({ nodeId, path: `${at}.on_error`, message: `on_error edge leaving a ${fromType} node ("${from}"), which never fails; it would never be taken` });
      }
    }
    if (from !== undefined && to !== undefined) {
      // A second edge between the same nodes (of the same kind) would make routing ambiguous:
      // which condition decides, and the successor would count the edge twice.
      const key = `${from}\u0000${to}\u0000${raw.on_error === true}`;
      const first = seenEdges.get(key);
      if (first !== undefined) {
        add({ nodeId, path: at, message: `duplicate ${raw.on_error === true ? 'on_error ' : ''}edge ${from} → ${to} (first declared at edges[${first}]); merge their conditions into one` });
      } else {
        seenEdges.set(key, i);
      }
    }
    if (from !== undefined && to !== undefined && ids.has(from) && ids.has(to)) {
      adj.get(from)?.push(to);
      indegree.set(to, (indegree.get(to) ?? 0) + 1);
    }
  });

  // Definition output.
  if (def.output !== undefined) {
    const bad = nonJson(def.output, 'output');
    if (bad) add({ path: bad, message: 'output values must be JSON (no NaN, Infinity or binary)' });
    eachString(def.output as JsonValue, 'output', (s, path) => templates(s, path));
  }

  // Cycles (strongly connected components with more than one node, or a self-loop).
  for (const scc of stronglyConnected(order, adj)) {
    const selfLoop = scc.length === 1 && (adj.get(scc[0]) ?? []).includes(scc[0]);
    if (scc.length > 1 || selfLoop) {
      const sorted = [...scc].sort((a, b) => (ids.get(a) ?? 0) - (ids.get(b) ?? 0));
      add({ nodeId: sorted[0], path: 'edges', message: `cycle through nodes ${sorted.join(', ')}: a workflow must be acyclic` });
    }
  }

  // Entry node and reachability.
  if (order.length > 0) {
    const roots = order.filter((id) => indegree.get(id) === 0);
    if (roots.length === 0) {
      add({ path: 'edges', message: 'no entry node: every node has an incoming edge' });
    } else {
      const entry = roots[0];
      const seen = reach([entry], adj);
      const fromAnyRoot = reach(roots, adj);
      for (const extra of roots.slice(1)) {
        add({
          nodeId: extra,
          path: `nodes[${ids.get(extra)}]`,
          message:
            `node "${extra}" has no incoming edge, so it is a second entry point that never runs ` +
            `(the run starts at "${entry}"); put a FORK in front of the roots (${roots.join(', ')}) ` +
            'with an edge to each of them',
        });
      }
      for (const id of order) {
        if (!seen.has(id) && !fromAnyRoot.has(id)) {
          add({ nodeId: id, path: `nodes[${ids.get(id)}]`, message: `node "${id}" cannot be reached from the entry node "${entry}"` });
        }
      }
    }
  }
  return problems;
}

/**
 * Reports each key of `obj` outside `allowed`: a key of `unsupported` as `X is not supported
 * yet`, anything else as `unknown field "X"` with the allowed keys.
 */
function unknownKeys(
  obj: Obj,
  allowed: readonly string[],
  unsupported: readonly string[],
  at: string,
  nodeId: string | undefined,
  add: (p: Problem) => void,
): void {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const path = at === '' ? key : `${at}.${key}`;
    const message = unsupported.includes(key)
      ? `${key} is not supported yet`
      : `unknown field ${JSON.stringify(key)}; expected one of ${allowed.join(', ')}`;
    add({ nodeId, path, message });
  }
}

function reach(starts: string[], adj: Map<string, string[]>): Set<string> {
  const seen = new Set(starts);
  const queue = [...starts];
  while (queue.length > 0) {
    const cur = queue.shift() as string;
    for (const next of adj.get(cur) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/** Tarjan's algorithm, iterative (deep graphs must not overflow the stack). */
function stronglyConnected(order: string[], adj: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  for (const root of order) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const next = adj.get(frame.v) ?? [];
      if (frame.i < next.length) {
        const w = next[frame.i++];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.v, Math.min(low.get(frame.v) as number, index.get(w) as number));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].v;
        low.set(parent, Math.min(low.get(parent) as number, low.get(frame.v) as number));
      }
      if (low.get(frame.v) === index.get(frame.v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          scc.push(w);
        } while (w !== frame.v);
        out.push(scc);
      }
    }
  }
  return out;
}

/**
 * Problems of a reducers map (a JOIN's `spec.reducers` or a `for_each` node's `reducers`): an
 * object of field name → one of {@link REDUCER_NAMES}.
 */
function reducerProblems(reducers: unknown, path: string, owner: string, nodeId: string | undefined, add: (p: Problem) => void): void {
  if (reducers === null || typeof reducers !== 'object' || Array.isArray(reducers)) {
    add({ nodeId, path, message: `${path.endsWith('spec.reducers') ? 'JOIN spec.reducers' : 'reducers'} must be an object of field: reducer (${REDUCER_NAMES.join(', ')})` });
    return;
  }
  for (const [field, name] of Object.entries(reducers)) {
    if (!isReducerName(name)) {
      add({
        nodeId,
        path: `${path}.${field}`,
        message: `unknown reducer ${JSON.stringify(name)} for field "${field}" of ${owner}; expected one of ${REDUCER_NAMES.join(', ')}`,
      });
    }
  }
}

/**
 * Problems of a node's dynamic fan-out fields (DESIGN §6 `forEach`): `for_each` must be a `{{ }}`
 * template on an HTTP or CODE node; `as` a CEL identifier other than input/config/tasks/system and CEL reserved words;
 * `max_concurrency` an integer 1..{@link MAX_ITERATIONS}; node-level `reducers` only with
 * `for_each`. `as`, `max_concurrency` and `reducers` without `for_each` are refused, not ignored.
 */
function forEachProblems(raw: Record<string, unknown>, at: string, nodeId: string | undefined, type: string | undefined, add: (p: Problem) => void): void {
  const fe = raw.for_each;
  if (fe === undefined) {
    for (const key of ['as', 'max_concurrency', 'reducers']) {
      if (raw[key] !== undefined) add({ nodeId, path: `${at}.${key}`, message: `${key} applies to a for_each node only; this node has no for_each` });
    }
    return;
  }
  if (type !== undefined && !isWorkerType(type)) {
    add({ nodeId, path: `${at}.for_each`, message: `for_each applies to HTTP and CODE nodes only, not to a ${type} node` });
  }
  if (typeof fe !== 'string' || findTemplates(fe).length !== 1 || fe.trim() !== findTemplates(fe)[0]!.text.trim()) {
    add({ nodeId, path: `${at}.for_each`, message: 'for_each must be one {{ }} template giving an array, e.g. "{{ input.employers }}"' });
  }
  const as = raw.as;
  if (as !== undefined && (typeof as !== 'string' || !ALIAS_PATTERN.test(as) || RESERVED_ALIASES.includes(as) || CEL_RESERVED.includes(as))) {
    add({
      nodeId,
      path: `${at}.as`,
      message: `as must be a name made of letters, digits and "_" (not starting with a digit), other than ${RESERVED_ALIASES.join(', ')} and CEL's reserved words (true, false, null, in, …); got ${JSON.stringify(as)}`,
    });
  }
  const mc = raw.max_concurrency;
  if (mc !== undefined && !(typeof mc === 'number' && Number.isInteger(mc) && mc >= 1 && mc <= MAX_ITERATIONS)) {
    add({ nodeId, path: `${at}.max_concurrency`, message: `max_concurrency must be an integer from 1 to ${MAX_ITERATIONS}` });
  }
  if (raw.reducers !== undefined) reducerProblems(raw.reducers, `${at}.reducers`, `for_each node ${nodeId ?? '?'}`, nodeId, add);
}


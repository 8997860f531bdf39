/**
 * The rules over one node that do not depend on its type: its id, keys, texts, queue, payload
 * hygiene fields, type, `on_exhausted`, `schedule_to_start_seconds` and the values
 * of its spec. The per-type spec rules and the
 * `for_each` rules are in spec-rules.ts, the retry policy's in retry-rules.ts.
 */
import type { Problem } from '../../errors.js';
import { MAX_DURATION_SECONDS, ON_EXHAUSTED } from '../workflow-definition.js';
import { NODE_TYPES, NodeType, isWorkerType } from '../workflow-types.js';
import { eachString, nonJson, unknownKeys, type NodeRule } from './context.js';
import { templateProblems } from './templates.js';
import { NODE_ID_PATTERN, NODE_KEYS, UNSUPPORTED_NODE_KEYS } from './vocabulary.js';

/** The node types a definition may use, as listed in messages. */
const SUPPORTED_TYPES: readonly string[] = NODE_TYPES;

/**
 * `node_id` is present, a string, matches {@link NODE_ID_PATTERN} and was not declared by an
 * earlier node.
 */
export const uniqueNodeId: NodeRule = ({ raw, at, index, nodeId, ctx }) => {
  if (raw.node_id === undefined || raw.node_id === '') return [{ path: `${at}.node_id`, message: 'node_id is required' }];
  if (nodeId === undefined) return [{ path: `${at}.node_id`, message: 'node_id must be a string' }];
  const out: Problem[] = [];
  if (!NODE_ID_PATTERN.test(nodeId)) {
    out.push({
      nodeId,
      path: `${at}.node_id`,
      message:
        `invalid node_id ${JSON.stringify(nodeId)}: it must start with a letter or "_" and ` +
        'continue with letters, digits, "_" or "-", at most 128 characters in all',
    });
  }
  const first = ctx.ids.get(nodeId);
  if (first !== undefined && first !== index) {
    out.push({ nodeId, path: `${at}.node_id`, message: `duplicate node_id "${nodeId}" (first declared at nodes[${first}])` });
  }
  return out;
};

/** Every key of the node is one of {@link NODE_KEYS} (`unknown field "X"`, with a suggestion when one is close). */
export const nodeKeys: NodeRule = ({ raw, at, nodeId }) => unknownKeys(raw, NODE_KEYS, UNSUPPORTED_NODE_KEYS, at, nodeId);

/** `name` and `description`, when given, are strings. */
export const nodeTexts: NodeRule = ({ raw, at, nodeId }) =>
  ['name', 'description'].flatMap((key) =>
    raw[key] !== undefined && typeof raw[key] !== 'string' ? [{ nodeId, path: `${at}.${key}`, message: `${key} must be a string` }] : [],
  );

/** A queue name, as `WEFT_QUEUES` takes it (any case: both sides lower-case it). */
const QUEUE_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/i;

/**
 * `queue`, when given, is a queue name on an HTTP or CODE node: only their tasks reach a worker,
 * so on any other node a queue would be silently ignored. A name is what an operator can type in
 * `WEFT_QUEUES`: 1 to 64 of `a-z`, `0-9`, `_`, `.`, `-` (in any case: queues are lower-cased),
 * starting with a letter or digit. It is taken as written, never trimmed: `" gpu "` would route
 * to a queue no worker serves (`WEFT_QUEUES` trims its names), so white space is refused.
 */
export const queue: NodeRule = ({ raw, at, nodeId, type, known }) => {
  if (raw.queue !== undefined && (typeof raw.queue !== 'string' || raw.queue.trim() === '')) {
    return [{ nodeId, path: `${at}.queue`, message: 'queue must be a non-empty string' }];
  }
  if (typeof raw.queue === 'string' && !QUEUE_NAME.test(raw.queue)) {
    return [
      {
        nodeId,
        path: `${at}.queue`,
        message: `queue ${JSON.stringify(raw.queue.slice(0, 80))} is not a queue name: 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit`,
      },
    ];
  }
  if (raw.queue !== undefined && known && !isWorkerType(type as string)) {
    return [{ nodeId, path: `${at}.queue`, message: `queue applies to HTTP and CODE nodes only, not to a ${type as string} node` }];
  }
  return [];
};

/** `runtime` is given on CODE nodes only: no other node runs code, so it would be silently ignored. */
export const runtimeOnCode: NodeRule = ({ raw, at, nodeId, type, known }) =>
  raw.runtime !== undefined && known && type !== NodeType.Code
    ? [{ nodeId, path: `${at}.runtime`, message: `runtime applies to CODE nodes only, not to ${type === NodeType.Http ? 'an' : 'a'} ${type as string} node` }]
    : [];

/**
 * Payload hygiene: `output_keep` and `output_drop` are non-empty lists of distinct top-level
 * output field names and `sensitive` is a boolean, all on HTTP and CODE nodes only. Those are the
 * nodes whose output comes from tenant code or a remote service; a FORK, JOIN, SWITCH or WAIT
 * output is derived from others, which would leak through.
 */
export const payloadHygiene: NodeRule = ({ raw, at, nodeId, type, known }) => {
  const out: Problem[] = [];
  for (const key of ['output_keep', 'output_drop']) {
    const fields = raw[key];
    if (fields === undefined) continue;
    if (!Array.isArray(fields) || fields.length === 0 || fields.some((f) => typeof f !== 'string' || f === '')) {
      out.push({ nodeId, path: `${at}.${key}`, message: `${key} must be a non-empty list of output field names` });
    } else if (new Set(fields).size !== fields.length) {
      out.push({ nodeId, path: `${at}.${key}`, message: `${key} names a field twice` });
    }
  }
  if (raw.sensitive !== undefined && typeof raw.sensitive !== 'boolean') {
    out.push({ nodeId, path: `${at}.sensitive`, message: 'sensitive must be true or false' });
  }
  if (known && !isWorkerType(type as string)) {
    for (const key of ['output_keep', 'output_drop', 'sensitive']) {
      if (raw[key] !== undefined)
        out.push({ nodeId, path: `${at}.${key}`, message: `${key} applies to HTTP and CODE nodes only, not to a ${type as string} node` });
    }
  }
  return out;
};

/** `type` is given and is one of the node types. */
export const nodeType: NodeRule = ({ at, nodeId, type, known }) => {
  if (type === undefined) return [{ nodeId, path: `${at}.type`, message: `type is required (one of ${SUPPORTED_TYPES.join(', ')})` }];
  if (!known) return [{ nodeId, path: `${at}.type`, message: `unknown node type ${JSON.stringify(type)}; expected one of ${SUPPORTED_TYPES.join(', ')}` }];
  return [];
};

/** Every value of `spec` is JSON, and every template in its strings passes {@link templateProblems}. */
export const specValues: NodeRule = ({ ctx, spec, at, nodeId, type }) => {
  // A DO_WHILE's body and templates are checked in the body's own context (loop-rules.ts).
  if (spec === undefined || type === NodeType.DoWhile) return [];
  const out: Problem[] = [];
  const bad = nonJson(spec, `${at}.spec`);
  if (bad) out.push({ nodeId, path: bad, message: 'spec values must be JSON (no NaN, Infinity or binary)' });
  eachString(spec, `${at}.spec`, (s, path) => out.push(...templateProblems(ctx, s, path, nodeId)));
  return out;
};

/**
 * `on_exhausted` is `fail` or `pause`, on the nodes that make attempts (HTTP, CODE, SUBWORKFLOW)
 * and never with `for_each`, whose iterations settle their node on their own.
 */
export const onExhausted: NodeRule = ({ raw, at, nodeId, type, known }) => {
  const v = raw.on_exhausted;
  if (v === undefined) return [];
  const path = `${at}.on_exhausted`;
  if (typeof v !== 'string' || !(ON_EXHAUSTED as readonly string[]).includes(v)) {
    return [{ nodeId, path, message: `on_exhausted must be ${ON_EXHAUSTED.join(' or ')}, got ${JSON.stringify(v)}` }];
  }
  if (known && !isWorkerType(type as string) && type !== NodeType.Subworkflow) {
    return [{ nodeId, path, message: `on_exhausted applies to HTTP, CODE and SUBWORKFLOW nodes only, not to a ${type as string} node` }];
  }
  if (v === 'pause' && raw.for_each !== undefined) {
    return [{ nodeId, path, message: 'on_exhausted: pause cannot be used with for_each: a failed iteration settles its node on its own' }];
  }
  return [];
};

/** `schedule_to_start_seconds` is an integer from 1 to {@link MAX_DURATION_SECONDS}, on HTTP and CODE nodes only. */
export const scheduleToStart: NodeRule = ({ raw, at, nodeId, type, known }) => {
  const v = raw.schedule_to_start_seconds;
  if (v === undefined) return [];
  const path = `${at}.schedule_to_start_seconds`;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_DURATION_SECONDS) {
    return [
      {
        nodeId,
        path,
        message: `schedule_to_start_seconds must be an integer from 1 to ${MAX_DURATION_SECONDS} (365 days); got ${JSON.stringify(v) ?? String(v)}`,
      },
    ];
  }
  if (known && !isWorkerType(type as string)) {
    return [{ nodeId, path, message: `schedule_to_start_seconds applies to HTTP and CODE nodes only, not to a ${type as string} node` }];
  }
  return [];
};

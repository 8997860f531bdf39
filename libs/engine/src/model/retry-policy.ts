/**
 * A node's retry policy by outcome: which HTTP statuses fail an attempt for good
 * (`retry.non_retryable`), and the policy as people read it (`weft validate`). Pure: the worker
 * matches a status with {@link nonRetryableMatch}; publishing checks each entry with
 * {@link parseNonRetryable}.
 */
import { maxAttempts, retryDelayMs, type WorkflowNode } from './workflow-definition.js';
import { NodeType } from './workflow-types.js';

/** An entry of `retry.non_retryable` once checked: a status (100 to 599) or a class. */
export type NonRetryableStatus = number | StatusClass;

/** The classes `retry.non_retryable` may name: every client error, every server error. */
export type StatusClass = '4xx' | '5xx';

/** The classes `retry.non_retryable` accepts, as written (lower case; `4XX` is taken too). */
export const STATUS_CLASSES: readonly StatusClass[] = ['4xx', '5xx'];

/**
 * Statuses a class never matches: a timeout (408), too early (425) and too many requests (429) are
 * worth retrying even when every other client error is not; listing one explicitly still makes it
 * non-retryable.
 */
export const CLASS_EXCEPTIONS: readonly number[] = [408, 425, 429];

/** The node types whose failed attempts carry an HTTP status, so the only ones `non_retryable` applies to. */
export const STATUS_NODE_TYPES: readonly string[] = [NodeType.Http];

/**
 * One entry of `retry.non_retryable` as written, checked: an integer status 100 to 599 (also a
 * numeric string, `"404"`), or `"4xx"` / `"5xx"` (any case). Returns the entry normalized, or a
 * sentence saying what is wrong with it.
 */
export function parseNonRetryable(entry: unknown): { ok: NonRetryableStatus } | { problem: string } {
  const shown = JSON.stringify(entry) ?? String(entry);
  if (typeof entry === 'string' && /^\s*\d+\s*$/.test(entry)) return parseNonRetryable(Number(entry));
  if (typeof entry === 'number') {
    if (!Number.isInteger(entry) || entry < 100 || entry > 599) return { problem: `status ${shown} is not an integer from 100 to 599` };
    return { ok: entry };
  }
  if (typeof entry === 'string') {
    const cls = entry.trim().toLowerCase();
    if ((STATUS_CLASSES as readonly string[]).includes(cls)) return { ok: cls as StatusClass };
    return { problem: `${shown} is not a status (100 to 599) or a class (${STATUS_CLASSES.map((c) => `"${c}"`).join(', ')})` };
  }
  return { problem: `entries must be status codes (404) or classes ("4xx", "5xx"), got ${shown}` };
}

/** A node's `retry.non_retryable`, normalized; entries that do not parse are left out (publishing refuses them). */
export function nonRetryableOf(n: WorkflowNode): NonRetryableStatus[] {
  const list = n.retry?.non_retryable;
  if (!Array.isArray(list)) return [];
  const out: NonRetryableStatus[] = [];
  for (const entry of list) {
    const parsed = parseNonRetryable(entry);
    if ('ok' in parsed && !out.includes(parsed.ok)) out.push(parsed.ok);
  }
  return out;
}

/**
 * The entry of `list` that makes a failed attempt with `status` non-retryable, as written in
 * messages (`404`, `4xx`), or undefined when the attempt may be retried. An explicit status wins
 * over a class; a class never matches {@link CLASS_EXCEPTIONS}.
 */
export function nonRetryableMatch(list: readonly NonRetryableStatus[] | undefined, status: number): string | undefined {
  if (!list) return undefined;
  if (list.includes(status)) return String(status);
  if (CLASS_EXCEPTIONS.includes(status)) return undefined;
  const cls = list.find((e): e is StatusClass => typeof e === 'string' && Math.floor(status / 100) === Number(e[0]));
  return cls;
}

/** A node's retry policy in effect, as `weft validate` shows it. */
export interface EffectivePolicy {
  nodeId: string;
  type: string;
  /** Executions the node may make, the first included. */
  maxAttempts: number;
  /** The base backoff, seconds; absent without one. */
  backoffSeconds?: number;
  /** The wait before each retry, seconds (capped at 10 minutes). */
  delaysSeconds: number[];
  /** `retry.non_retryable`, normalized. */
  nonRetryable: NonRetryableStatus[];
  /** The policy in one phrase: `attempts 3, backoff 2s (2s, 4s), not retried on 404`, or `no retry`. */
  text: string;
}

/** The most retry delays a policy's phrase lists before `…`. */
const SHOWN_DELAYS = 5;

/** The effective retry policy of a node that makes attempts (HTTP, CODE, SUBWORKFLOW). */
export function effectivePolicy(n: WorkflowNode): EffectivePolicy {
  const attempts = maxAttempts(n);
  const delaysSeconds = Array.from({ length: attempts - 1 }, (_, i) => retryDelayMs(n, i + 1) / 1000);
  const nonRetryable = nonRetryableOf(n);
  const base = n.retry?.backoff_seconds;
  const policy: EffectivePolicy = {
    nodeId: n.node_id,
    type: n.type,
    maxAttempts: attempts,
    ...(base !== undefined && base > 0 ? { backoffSeconds: base } : {}),
    delaysSeconds,
    nonRetryable,
    text: '',
  };
  policy.text = policyText(policy, n.retry !== undefined);
  return policy;
}

/** The phrase of {@link EffectivePolicy.text}; `declared`: the node has a `retry` at all. */
function policyText(p: EffectivePolicy, declared: boolean): string {
  if (!declared) return 'no retry';
  const parts = [`attempts ${p.maxAttempts}`];
  if (p.maxAttempts === 1) parts[0] += ' (no retry)';
  else if (p.backoffSeconds === undefined) parts.push('no backoff');
  else {
    const shown = p.delaysSeconds.slice(0, SHOWN_DELAYS).map(duration);
    parts.push(`backoff ${duration(p.backoffSeconds)} (${shown.join(', ')}${p.delaysSeconds.length > SHOWN_DELAYS ? ', …' : ''})`);
  }
  if (p.nonRetryable.length) {
    const except = CLASS_EXCEPTIONS.filter((s) => p.nonRetryable.includes(`${Math.floor(s / 100)}xx` as StatusClass) && !p.nonRetryable.includes(s));
    parts.push(`not retried on ${p.nonRetryable.join(', ')}${except.length ? ` (except ${except.join(', ')})` : ''}`);
  }
  return parts.join(', ');
}

/** `2s`, `1.5s`, `10m`, `90s`. */
function duration(seconds: number): string {
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${Math.round(seconds * 1000) / 1000}s`;
}

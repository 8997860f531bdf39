/**
 * The rule over a node's `retry`: its bounds, and `non_retryable`, the outcomes that are not
 * retried (see model/retry-policy.ts).
 */
import type { Problem } from '../../errors.js';
import { parseNonRetryable, STATUS_NODE_TYPES, type NonRetryableStatus } from '../retry-policy.js';
import { NodeType } from '../workflow-types.js';
import { isObject, unknownKeys, type NodeRule } from './context.js';
import { RETRY_KEYS, RETRY_LIMITS } from './vocabulary.js';

/**
 * `retry`, when given, is an object of {@link RETRY_KEYS}: `max_attempts` an integer from 1 to
 * 100, `backoff_seconds`, when given, a number from 0 to 86,400, and `non_retryable`, when given,
 * a list checked by {@link nonRetryableProblems}.
 */
export const retry: NodeRule = (node) => {
  const { raw, at, nodeId } = node;
  const r = raw.retry;
  if (r === undefined) return [];
  if (!isObject(r)) return [{ nodeId, path: `${at}.retry`, message: 'retry must be an object {max_attempts, backoff_seconds, non_retryable}' }];
  const out = unknownKeys(r, RETRY_KEYS, [], `${at}.retry`, nodeId);
  const m = r.max_attempts;
  if (typeof m !== 'number' || !Number.isInteger(m) || m < 1 || m > RETRY_LIMITS.maxAttempts) {
    out.push({ nodeId, path: `${at}.retry.max_attempts`, message: `retry.max_attempts must be an integer >= 1 and <= ${RETRY_LIMITS.maxAttempts}` });
  }
  const b = r.backoff_seconds;
  if (b !== undefined && (typeof b !== 'number' || !Number.isFinite(b) || b < 0 || b > RETRY_LIMITS.maxBackoffSeconds)) {
    out.push({
      nodeId,
      path: `${at}.retry.backoff_seconds`,
      message: `retry.backoff_seconds must be a number >= 0 and <= ${RETRY_LIMITS.maxBackoffSeconds} (one day; a retry waits at most 10 minutes anyway)`,
    });
  }
  if (r.non_retryable !== undefined) out.push(...nonRetryableProblems(r.non_retryable, node.type, node.known, `${at}.retry.non_retryable`, nodeId));
  return out;
};

/**
 * `non_retryable` is a non-empty list of distinct statuses (integers 100 to 599, or numeric
 * strings) and classes (`"4xx"`, `"5xx"`), on a node whose failures carry a status (HTTP). On a
 * CODE node the handler says it itself, by raising a `NonRetryableError`; no other node makes
 * worker attempts.
 */
function nonRetryableProblems(list: unknown, type: unknown, known: boolean, path: string, nodeId: string | undefined): Problem[] {
  if (known && !STATUS_NODE_TYPES.includes(type as string)) {
    const hint =
      type === NodeType.Code
        ? ': a CODE node has no status; its handler fails for good by raising NonRetryableError (Python) or throwing new NonRetryableError(...) (JavaScript)'
        : ` (its failures carry no HTTP status), not to a ${type as string} node`;
    return [{ nodeId, path, message: `retry.non_retryable applies to HTTP nodes only${hint}` }];
  }
  if (!Array.isArray(list) || list.length === 0) {
    return [{ nodeId, path, message: 'retry.non_retryable must be a non-empty list of status codes (404) or classes ("4xx", "5xx")' }];
  }
  const out: Problem[] = [];
  const seen = new Map<NonRetryableStatus, number>();
  list.forEach((entry, i) => {
    const parsed = parseNonRetryable(entry);
    if ('problem' in parsed) {
      out.push({ nodeId, path: `${path}[${i}]`, message: `retry.non_retryable: ${parsed.problem}` });
      return;
    }
    const first = seen.get(parsed.ok);
    if (first !== undefined) out.push({ nodeId, path: `${path}[${i}]`, message: `retry.non_retryable lists ${parsed.ok} twice (first at [${first}])` });
    else seen.set(parsed.ok, i);
  });
  return out;
}

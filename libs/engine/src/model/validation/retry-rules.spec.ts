import { describe, expect, it } from '@jest/globals';
import { validateDefinition } from '../validate.js';

/** Each problem as `path: message`. */
const messages = (def: unknown): string[] => validateDefinition(def).map((p) => `${p.path}: ${p.message}`);

/** Two nodes, the third of `type` with `retry`, so paths show the index. */
function withRetry(type: string, retry: unknown): unknown {
  const spec = type === 'HTTP' ? { url: 'https://pay.example.com' } : type === 'CODE' ? { code: 'def handler(x): return x' } : { duration_seconds: 1 };
  return {
    nodes: [
      { node_id: 'a', type: 'WAIT', spec: { duration_seconds: 1 } },
      { node_id: 'b', type: 'WAIT', spec: { duration_seconds: 1 } },
      { node_id: 'charge', type, ...(type === 'CODE' ? { runtime: 'python' } : {}), spec, retry },
    ],
    edges: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'charge' },
    ],
  };
}

describe('retry.non_retryable at publish', () => {
  it('accepts statuses, numeric strings and classes on an HTTP node', () => {
    expect(messages(withRetry('HTTP', { max_attempts: 3, non_retryable: [404, '410', '4xx', '5XX'] }))).toEqual([]);
  });

  it('names each bad entry by its path: wrong type, out of range, bad class, duplicate', () => {
    expect(messages(withRetry('HTTP', { max_attempts: 3, non_retryable: [404, 'abc', 99, 600, 404.5, true, '3xx', '404', null] }))).toEqual([
      'nodes[2].retry.non_retryable[1]: retry.non_retryable: "abc" is not a status (100 to 599) or a class ("4xx", "5xx")',
      'nodes[2].retry.non_retryable[2]: retry.non_retryable: status 99 is not an integer from 100 to 599',
      'nodes[2].retry.non_retryable[3]: retry.non_retryable: status 600 is not an integer from 100 to 599',
      'nodes[2].retry.non_retryable[4]: retry.non_retryable: status 404.5 is not an integer from 100 to 599',
      'nodes[2].retry.non_retryable[5]: retry.non_retryable: entries must be status codes (404) or classes ("4xx", "5xx"), got true',
      'nodes[2].retry.non_retryable[6]: retry.non_retryable: "3xx" is not a status (100 to 599) or a class ("4xx", "5xx")',
      'nodes[2].retry.non_retryable[7]: retry.non_retryable lists 404 twice (first at [0])',
      'nodes[2].retry.non_retryable[8]: retry.non_retryable: entries must be status codes (404) or classes ("4xx", "5xx"), got null',
    ]);
  });

  it('refuses a list that is not one, or is empty', () => {
    const list = 'nodes[2].retry.non_retryable: retry.non_retryable must be a non-empty list of status codes (404) or classes ("4xx", "5xx")';
    expect(messages(withRetry('HTTP', { max_attempts: 2, non_retryable: '4xx' }))).toEqual([list]);
    expect(messages(withRetry('HTTP', { max_attempts: 2, non_retryable: [] }))).toEqual([list]);
  });

  it('refuses it on CODE with the hint to raise a non-retryable error, and on nodes without a status', () => {
    expect(messages(withRetry('CODE', { max_attempts: 2, non_retryable: [404] }))).toEqual([
      'nodes[2].retry.non_retryable: retry.non_retryable applies to HTTP nodes only: a CODE node has no status; its handler fails for good by raising NonRetryableError (Python) or throwing new NonRetryableError(...) (JavaScript)',
    ]);
    expect(messages(withRetry('SUBWORKFLOW', { max_attempts: 2, non_retryable: [404] }))).toContainEqual(
      'nodes[2].retry.non_retryable: retry.non_retryable applies to HTTP nodes only (its failures carry no HTTP status), not to a SUBWORKFLOW node',
    );
  });
});

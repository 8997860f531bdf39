import { describe, expect, it } from '@jest/globals';
import { effectivePolicy, nonRetryableMatch, nonRetryableOf, parseNonRetryable } from './retry-policy.js';
import { NodeType } from './workflow-types.js';
import type { WorkflowNode } from './workflow-definition.js';

describe('nonRetryableMatch', () => {
  const list = nonRetryableOf({ node_id: 'n', type: NodeType.Http, retry: { max_attempts: 3, non_retryable: ['404', '5xx', 'oops'] } });

  it('normalizes the list, leaving out what does not parse', () => {
    expect(list).toEqual([404, '5xx']);
    expect(parseNonRetryable(' 4XX ')).toEqual({ ok: '4xx' });
  });

  it('matches a listed status and a class, and names the entry', () => {
    expect(nonRetryableMatch([404], 404)).toBe('404');
    expect(nonRetryableMatch(['4xx'], 404)).toBe('4xx');
    expect(nonRetryableMatch(['4xx', 404], 404)).toBe('404');
    expect(nonRetryableMatch(list, 503)).toBe('5xx');
  });

  it('leaves other statuses retryable: 503 with 4xx, and 408, 425, 429 unless listed explicitly', () => {
    expect(nonRetryableMatch(['4xx'], 503)).toBeUndefined();
    for (const s of [408, 425, 429]) expect(nonRetryableMatch(['4xx'], s)).toBeUndefined();
    expect(nonRetryableMatch(['4xx', 429], 429)).toBe('429');
    expect(nonRetryableMatch(undefined, 404)).toBeUndefined();
  });
});

describe('effectivePolicy', () => {
  const node = (retry?: WorkflowNode['retry']): WorkflowNode => ({ node_id: 'charge', type: NodeType.Http, ...(retry ? { retry } : {}) });

  it('says the attempts, the backoff schedule and what is not retried', () => {
    expect(effectivePolicy(node({ max_attempts: 3, backoff_seconds: 2, non_retryable: [404, '4xx'] }))).toEqual({
      nodeId: 'charge',
      type: 'HTTP',
      maxAttempts: 3,
      backoffSeconds: 2,
      delaysSeconds: [2, 4],
      nonRetryable: [404, '4xx'],
      text: 'attempts 3, backoff 2s (2s, 4s), not retried on 404, 4xx (except 408, 425, 429)',
    });
    expect(effectivePolicy(node({ max_attempts: 3, non_retryable: ['4xx', 429] })).text).toBe(
      'attempts 3, no backoff, not retried on 4xx, 429 (except 408, 425)',
    );
    expect(effectivePolicy(node({ max_attempts: 9, backoff_seconds: 60 })).text).toBe('attempts 9, backoff 1m (1m, 2m, 4m, 8m, 10m, …)');
    expect(effectivePolicy(node({ max_attempts: 1 })).text).toBe('attempts 1 (no retry)');
    expect(effectivePolicy(node()).text).toBe('no retry');
  });
});

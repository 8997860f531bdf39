import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { webhookRequest, webhookSignature } from './webhook-request.js';
import { failedAttempt, MAX_ATTEMPTS } from './webhook-sender.js';

describe('a failed webhook attempt', () => {
  it('is tried again after 1, 2, 4… times the backoff, at most an hour apart, and FAILED after the 15th', () => {
    expect([1, 2, 3, 4].map((n) => failedAttempt(n, 500, 'HTTP 500', 1_000).retryInMs)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(failedAttempt(13, 500, 'HTTP 500', 1_000)).toEqual({ status: 'PENDING', statusCode: 500, error: 'HTTP 500', retryInMs: 3_600_000 });
    expect(failedAttempt(14, null, 'timed out', 20)).toEqual({ status: 'PENDING', statusCode: null, error: 'timed out', retryInMs: 20 * 2 ** 13 });
    expect(failedAttempt(MAX_ATTEMPTS, 302, 'redirect 302 not followed', 1_000)).toEqual({
      status: 'FAILED',
      statusCode: 302,
      error: 'redirect 302 not followed',
    });
  });

  it('keeps at most 500 characters of its error', () => {
    const error = failedAttempt(1, null, 'x'.repeat(2_000), 1_000).error!;
    expect(error).toHaveLength(500);
    expect(error.endsWith('…')).toBe(true);
  });
});

describe('a webhook request', () => {
  const delivery = {
    id: '01936f6e-0000-7000-8000-000000000001',
    event: 'run.failed' as const,
    createdAt: new Date('2026-12-05T10:00:00.000Z'),
    run: { id: 'r1', status: 'FAILED' },
    secret: 'whsec_test',
  };

  it('carries the delivery as JSON, its event and id as headers, and a signature of "<t>.<body>"', () => {
    const { body, headers } = webhookRequest(delivery, new Date('2026-12-05T10:00:07.900Z'));
    expect(JSON.parse(body)).toEqual({ id: delivery.id, event: 'run.failed', createdAt: '2026-12-05T10:00:00.000Z', run: { id: 'r1', status: 'FAILED' } });
    const t = 1_796_464_807;
    expect(headers).toEqual({
      'content-type': 'application/json',
      'weft-event': 'run.failed',
      'weft-delivery': delivery.id,
      'weft-signature': `t=${t},v1=${createHmac('sha256', 'whsec_test').update(`${t}.${body}`).digest('hex')}`,
    });
    expect(webhookSignature('whsec_test', t, body)).not.toBe(webhookSignature('whsec_other', t, body));
  });
});

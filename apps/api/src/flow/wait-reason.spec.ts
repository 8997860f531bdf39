import { describe, expect, it } from '@jest/globals';
import { rateDetail, runWaitOf, taskWaitOf, waitedText } from './wait-reason.js';

describe('why a run or task waits', () => {
  it('names a QUEUED run’s key, its limit and how full the group is', () => {
    expect(runWaitOf('QUEUED', { key: 'acme', limit: 2, active: 2, queued: 3 })).toEqual({
      reason: 'CONCURRENCY_LIMIT',
      detail: 'concurrency limit 2 reached for key "acme" (2 active, 3 queued)',
    });
    expect(runWaitOf('QUEUED', { key: '', limit: 1, active: 1, queued: 1 })).toEqual({
      reason: 'CONCURRENCY_LIMIT',
      detail: 'concurrency limit 1 reached (1 active, 1 queued)',
    });
    expect(runWaitOf('QUEUED', { key: 'a"b', limit: null, active: 0, queued: 1 })!.detail).toBe(
      'waiting for a concurrency slot for key "a\\"b" (0 active, 1 queued)',
    );
    expect(runWaitOf('QUEUED', undefined)).toEqual({ reason: 'CONCURRENCY_LIMIT', detail: 'waiting for a concurrency slot' });
    for (const status of ['PENDING', 'RUNNING', 'SUCCEEDED']) expect(runWaitOf(status, { key: 'acme', limit: 2, active: 2, queued: 3 })).toBeNull();
  });

  it('gives a rate-limit hold its window as it stands now', () => {
    const w = { key: 'partner', limit: 20, perSeconds: 1, admitted: 0, nextStartAt: new Date('2030-01-01T12:00:01.250Z') };
    expect(rateDetail(w)).toBe('rate limit "partner" 20 per 1 s, next start 12:00:01.250Z');
    expect(rateDetail({ ...w, admitted: 1, nextStartAt: null })).toBe('rate limit "partner" 20 per 1 s, 1 admitted attempt not started yet');
    expect(rateDetail({ ...w, admitted: 3, nextStartAt: null })).toBe('rate limit "partner" 20 per 1 s, 3 admitted attempts not started yet');
    const row = { queue: 'http', holdReason: 'RATE_LIMIT', holdDetail: 'stale sentence', heldUntil: null };
    expect(taskWaitOf('QUEUED', 'http', { ...row, rate: w })).toEqual({
      reason: 'RATE_LIMIT',
      detail: 'rate limit "partner" 20 per 1 s, next start 12:00:01.250Z',
    });
  });

  it('gives a QUEUED task its hold, its backoff without a reason, or its queue’s backlog', () => {
    const row = (holdReason: string | null, holdDetail: string | null, heldUntil: Date | null = null) => ({ queue: 'http', holdReason, holdDetail, heldUntil });
    expect(taskWaitOf('QUEUED', 'http', row('RATE_LIMIT', 'rate limit "partner" 20 per 1 s, next start 12:00:01.250Z'))).toEqual({
      reason: 'RATE_LIMIT',
      detail: 'rate limit "partner" 20 per 1 s, next start 12:00:01.250Z',
    });
    expect(taskWaitOf('QUEUED', 'http', row('CONCURRENCY_LIMIT', 'concurrency limit 2 reached for key "db" (2 active)'))).toEqual({
      reason: 'CONCURRENCY_LIMIT',
      detail: 'concurrency limit 2 reached for key "db" (2 active)',
    });
    expect(taskWaitOf('QUEUED', 'http', row('BACKOFF', null, new Date('2030-01-01T00:00:00Z')))).toEqual({
      reason: null,
      detail: 'retry backoff until 2030-01-01T00:00:00.000Z',
    });
    expect(taskWaitOf('QUEUED', 'http', row(null, null))).toEqual({ reason: 'QUEUE_BACKLOG', detail: 'waiting for a worker slot on queue "http"' });
    expect(taskWaitOf('QUEUED', 'gpu', undefined)).toEqual({ reason: 'QUEUE_BACKLOG', detail: 'waiting for a worker slot on queue "gpu"' });
    for (const status of ['PENDING', 'RUNNING', 'WAITING', 'COMPLETED']) expect(taskWaitOf(status, 'http', row('RATE_LIMIT', 'x'))).toBeNull();
  });

  it('says a task waited on a queue no live worker serves, QUEUED without a hold or PENDING, with how long', () => {
    const unserved = { waitedMs: 3 * 60_000 + 5_000 };
    const said = { reason: 'NO_LIVE_WORKER', detail: 'waiting 3m on queue "gpu": no live worker serves it' };
    expect(taskWaitOf('QUEUED', 'gpu', undefined, unserved)).toEqual(said);
    expect(taskWaitOf('QUEUED', 'gpu', { queue: 'gpu', holdReason: null, holdDetail: null, heldUntil: null }, unserved)).toEqual(said);
    expect(taskWaitOf('PENDING', 'gpu', undefined, unserved)).toEqual(said);
    // A hold is the nearer reason; a task that does not wait for a worker waits for nothing.
    expect(taskWaitOf('QUEUED', 'gpu', { queue: 'gpu', holdReason: 'CONCURRENCY_LIMIT', holdDetail: 'limit', heldUntil: null }, unserved)?.reason).toBe(
      'CONCURRENCY_LIMIT',
    );
    expect(taskWaitOf('RUNNING', 'gpu', undefined, unserved)).toBeNull();
    expect(taskWaitOf('PENDING', 'gpu', undefined)).toBeNull();
    expect(waitedText(45_000)).toBe('45s');
    expect(waitedText(125 * 60_000)).toBe('2h 5m');
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { MAX_DURATION_SECONDS } from '@weft/engine';
import { HttpExecutor } from '../../apps/worker/src/executors/http.executor.js';
import { MAX_TIMER_MS, setLongTimeout } from '../../apps/worker/src/executors/long-timer.js';
import { failure } from '../../apps/worker/src/executors/execution-failure.testing.js';
import { stubServer } from '../support/faults.js';

/**
 * Tenant-controlled durations that become Node timers: the validator accepts timeouts up to 365
 * days, while one Node timer holds at most 2^31-1 ms (24.8 days) and fires after 1 ms beyond.
 */
const LONG_S = 2_200_000;
const ctx = { taskId: 't001', nodeId: 'call', attempt: 1 };

describe('setLongTimeout', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('fires a 2,200,000 s timer at 2,200,000 s: not at 0.5 s, not at 24.8 days', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    setLongTimeout(fired, LONG_S * 1000);
    jest.advanceTimersByTime(500);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(MAX_TIMER_MS - 500 + 1); // just past one Node timer's maximum
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(LONG_S * 1000 - MAX_TIMER_MS - 2); // 1 ms before the deadline
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(LONG_S * 1000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('waits out the longest duration the validator accepts, and clear() stops it in any chunk', () => {
    jest.useFakeTimers();
    const fired = jest.fn();
    const cleared = jest.fn();
    setLongTimeout(fired, MAX_DURATION_SECONDS * 1000);
    const timer = setLongTimeout(cleared, MAX_DURATION_SECONDS * 1000);
    jest.advanceTimersByTime(3 * MAX_TIMER_MS);
    timer.clear();
    jest.advanceTimersByTime(MAX_DURATION_SECONDS * 1000 - 3 * MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(cleared).not.toHaveBeenCalled();
  });

  it('behaves like setTimeout for short delays; Infinity never fires', () => {
    jest.useFakeTimers();
    const short = jest.fn();
    const never = jest.fn();
    setLongTimeout(short, 10);
    setLongTimeout(never, Infinity);
    jest.advanceTimersByTime(9);
    expect(short).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(short).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(10 * MAX_TIMER_MS);
    expect(never).not.toHaveBeenCalled();
  });
});

describe('HTTP timeout_seconds beyond one Node timer', () => {
  let stub: Awaited<ReturnType<typeof stubServer>>;
  const http = new HttpExecutor({ allowPrivate: true });

  beforeAll(async () => {
    stub = await stubServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"late":true}'), 1000);
    });
  });
  afterAll(async () => {
    await http.close();
    await stub.close();
  });

  it('does not abort a request that answers after about 1 s', async () => {
    await expect(http.execute({ url: `${stub.base}/slow`, timeout_seconds: LONG_S }, ctx)).resolves.toEqual({ late: true });
  });

  it('takes the validator’s longest timeout, and refuses a computed one beyond it', async () => {
    await expect(http.execute({ url: `${stub.base}/slow`, timeout_seconds: MAX_DURATION_SECONDS }, ctx)).resolves.toEqual({ late: true });
    const err = await failure(http.execute({ url: `${stub.base}/slow`, timeout_seconds: MAX_DURATION_SECONDS + 1 }, ctx));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('timeout_seconds must be a positive number of seconds, at most 31536000');
  });
});

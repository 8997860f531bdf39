import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { coalesce } from './coalesce.js';

describe('coalesce', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('makes one call for the triggers within the delay, after the first one', () => {
    const fn = jest.fn();
    const c = coalesce(fn, 300);
    c.trigger();
    jest.advanceTimersByTime(200);
    c.trigger();
    c.trigger();
    expect(fn).not.toHaveBeenCalled();
    jest.advanceTimersByTime(100);
    expect(fn).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('keeps calling under a steady stream of triggers', () => {
    const fn = jest.fn();
    const c = coalesce(fn, 300);
    for (let t = 0; t < 1000; t += 50) {
      c.trigger();
      jest.advanceTimersByTime(50);
    }
    expect(fn.mock.calls.length).toBeGreaterThanOrEqual(3);
  });

  it('drops a pending call when cancelled', () => {
    const fn = jest.fn();
    const c = coalesce(fn, 300);
    c.trigger();
    c.cancel();
    jest.advanceTimersByTime(1000);
    expect(fn).not.toHaveBeenCalled();
    c.trigger();
    jest.advanceTimersByTime(300);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

import { describe, expect, it } from '@jest/globals';
import { newRunTrace, parseTraceparent } from './trace-context.js';

describe('a run’s trace context', () => {
  it('continues a valid caller traceparent: same trace and flags, the caller’s span as parent', () => {
    const t = newRunTrace('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00');
    expect(t.callerSpan).toBe('00f067aa0ba902b7');
    expect(t.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/);
    expect(t.traceparent).not.toContain('00f067aa0ba902b7');
  });

  it('starts a sampled trace of its own when the caller sent none or a malformed one', () => {
    for (const bad of [
      undefined,
      '',
      'nonsense',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    ]) {
      const t = newRunTrace(bad);
      expect(t.callerSpan).toBeNull();
      expect(t.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    }
    expect(parseTraceparent(' 00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01 ')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: '01',
    });
  });
});

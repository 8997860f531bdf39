import { describe, expect, it } from '@jest/globals';
import { eventDetail, type HistoryEvent } from './run-history.js';

/** A history event of run `r1` with `over`'s fields. */
function event(over: Partial<HistoryEvent>): HistoryEvent {
  return {
    seq: 1,
    type: 'NodeCompleted',
    at: '2030-01-01T00:00:00.000Z',
    nodeId: null,
    attempt: null,
    payload: {},
    actions: [],
    ignored: null,
    error: null,
    ...over,
  };
}

describe('weft history', () => {
  it('says when a retry re-runs the failed iterations only', () => {
    const retried = (payload: Record<string, unknown>) => eventDetail(event({ type: 'RunRetried', payload }));
    expect(retried({ fromNodeId: 'check', version: 1 })).toBe('from check on version 1');
    expect(retried({ fromNodeId: 'check', version: 1, failedIterationsOnly: true })).toBe('from check, failed iterations only, on version 1');
  });
});

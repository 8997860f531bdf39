import { describe, expect, it } from '@jest/globals';
import { boundedQueues, MAX_QUEUE_SERIES } from './store-gauges.js';

describe('the queue gauges’ bound', () => {
  it('names the busiest queues and adds up the rest as _other', () => {
    const stats = Array.from({ length: 250 }, (_, i) => ({ queue: `q${i}`, backlog: i, delayed: 1, running: 0, oldestWaitMs: i === 5 ? 9_000 : i }));
    const out = boundedQueues(stats);
    expect(out).toHaveLength(MAX_QUEUE_SERIES);
    expect(out[0]).toMatchObject({ queue: 'q249', backlog: 249 });
    const other = out[out.length - 1]!;
    // q0…q150 (151 queues) left out: backlog 0+…+150, one delayed each, the longest wait q5's.
    expect(other).toEqual({ queue: '_other', backlog: (150 * 151) / 2, delayed: 151, running: 0, oldestWaitMs: 9_000 });
    expect(boundedQueues(stats.slice(0, 3))).toEqual(stats.slice(0, 3));
  });
});

import { describe, expect, it } from '@jest/globals';
import { EngineTelemetry } from './engine-telemetry.js';
import { WeftMetrics } from './weft-metrics.js';

describe('flow control in the metrics', () => {
  it('counts holds by reason, admissions by queue, waits by reason and strategy cancels', async () => {
    const m = new WeftMetrics({ processMetrics: false });
    const telemetry = new EngineTelemetry(m);
    telemetry.flowHeld({ reason: 'RATE_LIMIT', count: 3 });
    telemetry.flowHeld({ reason: 'CONCURRENCY_LIMIT', count: 1 });
    telemetry.flowDispatched({
      queue: 'http',
      waits: [
        { reason: 'QUEUE_BACKLOG', seconds: 0.02 },
        { reason: 'RATE_LIMIT', seconds: 1.5 },
      ],
    });
    // A queued run that started: a wait, but no admission to a queue.
    telemetry.flowDispatched({ queue: null, waits: [{ reason: 'CONCURRENCY_LIMIT', seconds: 30 }] });
    telemetry.concurrencyCancelled({ tenantId: 't', runId: 'r', strategy: 'cancel_oldest' });
    const text = await m.text();
    expect(text).toContain('weft_flow_held_total{reason="RATE_LIMIT"} 3');
    expect(text).toContain('weft_flow_held_total{reason="CONCURRENCY_LIMIT"} 1');
    expect(text).toContain('weft_dispatch_total{queue="http"} 2');
    expect(text).not.toContain('weft_dispatch_total{queue="null"}');
    expect(text).toContain('weft_flow_wait_seconds_sum{reason="RATE_LIMIT"} 1.5');
    expect(text).toContain('weft_flow_wait_seconds_count{reason="CONCURRENCY_LIMIT"} 1');
    expect(text).toContain('weft_concurrency_cancelled_total{strategy="cancel_oldest"} 1');
  });
});

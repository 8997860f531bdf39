import { describe, expect, it } from '@jest/globals';
import { WeftMetrics } from './weft-metrics.js';

describe('WeftMetrics: schedules', () => {
  it('counts fires by source and skips by reason, and the lag from nominal time to start', async () => {
    const m = new WeftMetrics({ processMetrics: false });
    m.scheduleFired('t', 'clock', 250);
    m.scheduleFired('t', 'backfill', 3_600_000);
    m.scheduleSkipped('t', 'missed', 56);
    m.scheduleSkipped('t', 'overlap', 1);
    const text = await m.text();
    expect(text).toContain('weft_schedule_fires_total{source="clock"} 1');
    expect(text).toContain('weft_schedule_fires_total{source="backfill"} 1');
    expect(text).toContain('weft_schedule_skips_total{reason="missed"} 56');
    expect(text).toContain('weft_schedule_skips_total{reason="overlap"} 1');
    expect(text).toContain('weft_schedule_lag_seconds_bucket{le="0.25",source="clock"} 1');
    expect(text).toContain('weft_schedule_lag_seconds_sum{source="backfill"} 3600');
  });
});

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

describe('WeftMetrics: the workflow label budget', () => {
  const started = (text: string, workflow: string) => new RegExp(`^weft_runs_started_total\\{workflow="${workflow}"\\} (\\d+)$`, 'm').exec(text)?.[1];

  it('gives each tenant its own workflow slots: one tenant running many workflows cannot take another’s', async () => {
    const m = new WeftMetrics({ processMetrics: false, workflowsPerTenant: 3, maxLabelValues: 200 });
    for (let i = 0; i < 250; i++) m.runStarted('tenant-a', `a-${i}`);
    m.runStarted('tenant-b', 'b-orders');
    m.runStarted('tenant-b', 'b-invoices');
    m.runFinished('tenant-b', 'b-orders', 'SUCCEEDED', 10);
    const text = await m.text();
    expect(started(text, 'a-0')).toBe('1');
    expect(started(text, 'a-2')).toBe('1');
    expect(started(text, 'a-3')).toBeUndefined();
    expect(started(text, '_other')).toBe('247');
    expect(started(text, 'b-orders')).toBe('1');
    expect(started(text, 'b-invoices')).toBe('1');
    expect(text).toContain('weft_runs_finished_total{workflow="b-orders",status="SUCCEEDED"} 1');
  });

  it('folds a tenant’s overflow into its own `_other` series when the tenant label is on', async () => {
    const m = new WeftMetrics({ processMetrics: false, tenantLabel: true, workflowsPerTenant: 1 });
    m.runStarted('a', 'one');
    m.runStarted('a', 'two');
    m.runStarted('b', 'three');
    const text = await m.text();
    expect(text).toContain('weft_runs_started_total{workflow="one",tenant="a"} 1');
    expect(text).toContain('weft_runs_started_total{workflow="_other",tenant="a"} 1');
    expect(text).toContain('weft_runs_started_total{workflow="three",tenant="b"} 1');
  });

  it('keeps a bound over all tenants together', async () => {
    const m = new WeftMetrics({ processMetrics: false, workflowsPerTenant: 2, maxLabelValues: 3 });
    for (const t of ['a', 'b', 'c']) for (const w of ['x', 'y']) m.runStarted(t, `${t}-${w}`);
    const text = await m.text();
    expect(['a-x', 'a-y', 'b-x', 'b-y', 'c-x', 'c-y'].filter((w) => started(text, w) !== undefined)).toEqual(['a-x', 'a-y', 'b-x']);
    expect(started(text, '_other')).toBe('3');
  });
});

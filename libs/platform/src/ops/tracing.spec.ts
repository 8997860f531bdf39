import { describe, expect, it } from '@jest/globals';
import { RunStatus, type TaskJob } from '@weft/engine';
import { WeftTracing } from './tracing.js';

const job: TaskJob = { tenantId: 'b', runId: 'r-b', taskId: 't', nodeId: 'n', nodeType: 'HTTP', attempt: 0, queue: 'http', input: {}, notBefore: 0 };

describe('WeftTracing', () => {
  it('never gives a later span the trace id of a run span it wrote', async () => {
    // Nothing listens there: spans are only made, the exporter's failures are its own.
    const tracing = new WeftTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces', batchDelayMs: 60_000 });
    const trace = 'dddddddddddddddddddddddddddddddd';
    tracing.runFinished({
      tenantId: 'a',
      runId: 'r-a',
      workflowId: 'w',
      status: RunStatus.Succeeded,
      durationMs: 1,
      failedNodes: [],
      createdAt: new Date(0),
      finishedAt: new Date(1),
      traceparent: `00-${trace}-bbbbbbbbbbbbbbbb-01`,
      traceCallerSpan: 'cccccccccccccccc',
    });
    const attempt = tracing.attempt(job); // no trace context: a trace of its own
    expect(attempt.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(attempt.traceparent).not.toContain(trace);
    expect(attempt.traceparent).not.toContain('bbbbbbbbbbbbbbbb');
    attempt.end('succeeded');
    await tracing.shutdown().catch(() => undefined);
  });

  it('passes the run’s traceparent on when nothing is exported', async () => {
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const attempt = new WeftTracing().attempt({ ...job, traceparent: tp });
    expect(attempt.traceparent).toBe(tp);
    expect(await attempt.execute(async (t) => t)).toBe(tp);
  });
});

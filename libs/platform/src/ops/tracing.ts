import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import type { TaskJob } from '@weft/engine';
import type { RunFinishedNote } from '@weft/engine/coordinator';

/** Options of {@link WeftTracing}. */
export interface TracingOptions {
  /** Where spans go (OTLP over HTTP, JSON), the full URL of the traces endpoint; none: no spans. */
  tracesUrl?: string;
  /** `service.name` of the spans (default `weft`). */
  serviceName?: string;
  /** How long spans wait to be sent in a batch, ms (default 1 000). */
  batchDelayMs?: number;
}

/** The spans of one task attempt, as the worker goes through it. */
export interface AttemptTrace {
  /** What an HTTP node sends as `traceparent`: the execution's span, or the run's when nothing is exported. */
  readonly traceparent: string | undefined;
  /** Runs `fn` as the attempt's execution. */
  execute<T>(fn: (traceparent: string | undefined) => Promise<T>): Promise<T>;
  /** Runs `fn` as the attempt's report (its event transaction). */
  report<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends the attempt's span: `outcome` is `succeeded` or the failure's class. */
  end(outcome: string): void;
}

/**
 * Span ids chosen by Weft where it must: a run's span is written when the run ends, in whatever
 * process ends it, with the span id its attempts' spans already named as their parent (stored on
 * the run row when it started). The next id is set just before the synchronous `startSpan` that
 * takes it; every other span gets random ids.
 */
class PresetIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  nextSpan: string | undefined;
  nextTrace: string | undefined;

  generateTraceId(): string {
    const id = this.nextTrace ?? this.random.generateTraceId();
    this.nextTrace = undefined;
    return id;
  }

  generateSpanId(): string {
    const id = this.nextSpan ?? this.random.generateSpanId();
    this.nextSpan = undefined;
    return id;
  }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context whose parent span is `traceparent`'s, or the root context when it is absent or malformed. */
function parentContext(traceparent: string | undefined, spanId?: string): Context {
  const m = TRACEPARENT.exec(traceparent ?? '');
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: spanId ?? m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true });
}

function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${c.traceFlags.toString(16).padStart(2, '0')}`;
}

/**
 * OpenTelemetry traces of runs and task attempts, exported over OTLP/HTTP when a traces URL is
 * configured (`OTEL_EXPORTER_OTLP_ENDPOINT`), nothing otherwise. Spans:
 *
 * - `run <workflow>`: from the run's creation to its end, written when it ends; its parent is the
 *   span the run was started from (a `traceparent` header on `startRun`, or the parent run's span
 *   for a child run), else it starts a trace.
 * - `task <node>` per worker attempt, child of the run's span, with `execute` and `report` (the
 *   report's event transaction) under it. An HTTP node's request carries the `execute` span as
 *   its `traceparent` (the run's span when nothing is exported).
 *
 * Attributes: `weft.tenant_id`, `weft.run_id`, `weft.workflow_id`, `weft.task_id`, `weft.node_id`,
 * `weft.attempt` (1-based), `weft.queue`, `weft.node_type`, `weft.status`/`weft.outcome`. Nothing
 * is registered globally: each process (and each platform of a test) has its own provider.
 */
export class WeftTracing {
  private readonly provider: BasicTracerProvider | undefined;
  private readonly tracer: Tracer | undefined;
  private readonly ids = new PresetIds();

  constructor(opts: TracingOptions = {}) {
    if (!opts.tracesUrl) return;
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': opts.serviceName ?? 'weft' }),
      idGenerator: this.ids,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: opts.tracesUrl }), { scheduledDelayMillis: opts.batchDelayMs ?? 1_000 })],
    });
    this.tracer = this.provider.getTracer('weft');
  }

  /** True when spans are exported. */
  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /** Writes the span of a run that ended (nothing for a run without a trace, or when disabled). */
  runFinished(n: RunFinishedNote): void {
    const m = TRACEPARENT.exec(n.traceparent ?? '');
    if (!this.tracer || !m) return;
    const parent = n.traceCallerSpan ? parentContext(n.traceparent, n.traceCallerSpan) : ROOT_CONTEXT;
    this.ids.nextTrace = m[1];
    this.ids.nextSpan = m[2];
    const attributes: Attributes = { 'weft.tenant_id': n.tenantId, 'weft.run_id': n.runId, 'weft.workflow_id': n.workflowId, 'weft.status': n.status };
    if (n.failedNodes.length) attributes['weft.failed_nodes'] = n.failedNodes.slice(0, 20);
    let span: Span;
    try {
      span = this.tracer.startSpan(`run ${n.workflowId}`, { kind: SpanKind.INTERNAL, startTime: n.createdAt, attributes }, parent);
    } finally {
      // Never left for the next span: with a parent the SDK takes no trace id, and a stale one
      // would put another run's (another tenant's) trace on it.
      this.ids.nextTrace = this.ids.nextSpan = undefined;
    }
    if (n.status !== 'SUCCEEDED') span.setStatus({ code: SpanStatusCode.ERROR, message: n.reason ?? n.status });
    span.end(n.finishedAt);
  }

  /** The spans of one attempt of `job`. */
  attempt(job: TaskJob): AttemptTrace {
    const tracer = this.tracer;
    if (!tracer) {
      return { traceparent: job.traceparent, execute: (fn) => fn(job.traceparent), report: (fn) => fn(), end: () => undefined };
    }
    const attributes: Attributes = {
      'weft.tenant_id': job.tenantId,
      'weft.run_id': job.runId,
      'weft.task_id': job.taskId,
      'weft.node_id': job.nodeId,
      'weft.attempt': job.attempt + 1,
      'weft.queue': job.queue,
      'weft.node_type': job.nodeType,
    };
    const span = tracer.startSpan(`task ${job.nodeId}`, { kind: SpanKind.CONSUMER, attributes }, parentContext(job.traceparent));
    const inside = trace.setSpan(ROOT_CONTEXT, span);
    const child = async <T>(name: string, fn: (child: Span) => Promise<T>): Promise<T> => {
      const s = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, inside);
      try {
        return await fn(s);
      } catch (err) {
        // A sensitive node's error may quote what it resolved: the span says only that it failed.
        const message = job.sensitive ? 'failed' : err instanceof Error ? err.message.slice(0, 500) : String(err);
        s.setStatus({ code: SpanStatusCode.ERROR, message });
        throw err;
      } finally {
        s.end();
      }
    };
    return {
      traceparent: traceparentOf(span),
      execute: (fn) => child('execute', (s) => fn(traceparentOf(s))),
      report: (fn) => child('report', () => fn()),
      end: (outcome) => {
        span.setAttribute('weft.outcome', outcome);
        if (outcome !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        span.end();
      },
    };
  }

  /** Sends the spans still waiting and stops exporting. */
  async shutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}

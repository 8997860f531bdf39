import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { BoundedLabel, TenantBoundedLabel } from './bounded-label.js';

/** Options of {@link WeftMetrics}. */
export interface WeftMetricsOptions {
  /** Add a `tenant` label to run and task metrics (default off: one series per tenant and more). */
  tenantLabel?: boolean;
  /** Distinct workflows (and tenants) kept as label values per process before `_other` (default 200). */
  maxLabelValues?: number;
  /** Distinct workflows of one tenant kept as label values before its `_other` (default 20). */
  workflowsPerTenant?: number;
  /** Also collect Node's process metrics (`process_*`, `nodejs_*`; default on). */
  processMetrics?: boolean;
}

/** How one worker attempt went, as the worker saw it. */
export interface AttemptObservation {
  tenantId: string;
  queue: string;
  nodeType: string;
  /** 0-based, as in the task row: an attempt past the first is a retry. */
  attempt: number;
  /** From the job's due time to the start of its execution, ms; absent for an attempt taken at its predecessor's report. */
  dispatchMs?: number;
  executionMs: number;
  reportMs: number;
  /** `succeeded`, or the failure's class (see the worker's failure classes). */
  outcome: string;
}

/** Schedule lag: from on time to a backfill of old times (a day and more lands in +Inf). */
const LAG_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400];
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const RUN_SECONDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 86_400];

/**
 * The Prometheus metrics of one Weft process (prom-client), in a registry of its own so several
 * processes' worth can live in one test process. Label values are bounded: queues and node types
 * come from the deployment and the definition format, workflows are capped per tenant and in all
 * ({@link TenantBoundedLabel}), tenants (when `tenantLabel`) by {@link BoundedLabel}; never a
 * run, task or attempt id.
 */
export class WeftMetrics {
  readonly registry = new Registry();
  private readonly tenantLabel: boolean;
  private readonly workflows: TenantBoundedLabel;
  private readonly tenants: BoundedLabel;

  readonly runsStarted: Counter<string>;
  readonly runsFinished: Counter<string>;
  readonly runDuration: Histogram<string>;
  readonly attempts: Counter<string>;
  readonly retries: Counter<string>;
  readonly failures: Counter<string>;
  readonly dispatchSeconds: Histogram<string>;
  readonly executionSeconds: Histogram<string>;
  readonly reportSeconds: Histogram<string>;
  readonly leaseRecoveries: Counter<string>;
  readonly flowHeld: Counter<string>;
  readonly flowWait: Histogram<string>;
  readonly concurrencyCancelled: Counter<string>;
  readonly dispatched: Counter<string>;
  readonly timerLag: Histogram<string>;
  readonly apiRequests: Histogram<string>;
  /** Stored JSON values (and error texts) the API read from the database to answer GraphQL operations. */
  readonly storedValuesRead: Counter<string>;
  readonly scheduleFires: Counter<string>;
  readonly scheduleSkips: Counter<string>;
  readonly scheduleLag: Histogram<string>;
  readonly codeMemoryReserved: Gauge<string>;
  readonly codeMemoryWaiting: Gauge<string>;
  readonly definitionChecks: Counter<string>;
  readonly retentionDeleted: Counter<string>;
  readonly runsPaused: Counter<string>;
  readonly runsTimedOut: Counter<string>;
  readonly batchItems: Counter<string>;
  /** Webhook delivery attempts, by event and outcome (see the scheduler's webhook sender). */
  readonly webhookDeliveries: Counter<string>;

  constructor(opts: WeftMetricsOptions = {}) {
    this.tenantLabel = opts.tenantLabel ?? false;
    this.workflows = new TenantBoundedLabel(opts.workflowsPerTenant ?? 20, opts.maxLabelValues ?? 200);
    this.tenants = new BoundedLabel(opts.maxLabelValues ?? 200);
    const t = this.tenantLabel ? ['tenant'] : [];
    const registers = [this.registry];
    this.runsStarted = new Counter({
      name: 'weft_runs_started_total',
      help: 'Runs started (child runs included), by workflow.',
      labelNames: ['workflow', ...t],
      registers,
    });
    this.runsFinished = new Counter({
      name: 'weft_runs_finished_total',
      help: 'Runs finished, by workflow and final status.',
      labelNames: ['workflow', 'status', ...t],
      registers,
    });
    this.runDuration = new Histogram({
      name: 'weft_run_duration_seconds',
      help: "From a run's creation to its end, by final status.",
      labelNames: ['status', ...t],
      buckets: RUN_SECONDS,
      registers,
    });
    this.attempts = new Counter({
      name: 'weft_task_attempts_total',
      help: 'Worker task attempts executed, by queue and node type.',
      labelNames: ['queue', 'node_type', ...t],
      registers,
    });
    this.retries = new Counter({
      name: 'weft_task_retries_total',
      help: 'Worker task attempts past the first (retries), by queue and node type.',
      labelNames: ['queue', 'node_type', ...t],
      registers,
    });
    this.failures = new Counter({
      name: 'weft_task_failures_total',
      help: 'Worker task attempts that failed, by queue, node type and error class.',
      labelNames: ['queue', 'node_type', 'error_class', ...t],
      registers,
    });
    this.dispatchSeconds = new Histogram({
      name: 'weft_task_dispatch_seconds',
      help: 'From a queued attempt being due to its execution starting (attempts taken at a report are not counted).',
      labelNames: ['queue'],
      buckets: SECONDS,
      registers,
    });
    this.executionSeconds = new Histogram({
      name: 'weft_task_execution_seconds',
      help: 'Execution time of worker attempts, by queue, node type and outcome.',
      labelNames: ['queue', 'node_type', 'outcome'],
      buckets: SECONDS,
      registers,
    });
    this.reportSeconds = new Histogram({
      name: 'weft_task_report_seconds',
      help: "Time to commit a worker attempt's report (its event transaction, retries included).",
      labelNames: ['queue'],
      buckets: SECONDS,
      registers,
    });
    this.leaseRecoveries = new Counter({
      name: 'weft_lease_recoveries_total',
      help: 'Attempts whose lease expired with their job gone, re-dispatched by the lease sweep.',
      labelNames: ['queue'],
      registers,
    });
    this.flowHeld = new Counter({
      name: 'weft_flow_held_total',
      help: 'Runs and task attempts flow control held, by reason (CONCURRENCY_LIMIT, RATE_LIMIT).',
      labelNames: ['reason'],
      registers,
    });
    this.flowWait = new Histogram({
      name: 'weft_flow_wait_seconds',
      help: 'From a held run or a ready attempt to its start or admission, by the reason it waited.',
      labelNames: ['reason'],
      buckets: LAG_SECONDS,
      registers,
    });
    this.concurrencyCancelled = new Counter({
      name: 'weft_concurrency_cancelled_total',
      help: "Runs cancelled by their concurrency key's strategy, by strategy.",
      labelNames: ['strategy'],
      registers,
    });
    this.dispatched = new Counter({
      name: 'weft_dispatch_total',
      help: 'Worker attempts fair dispatch admitted to their queue, by queue.',
      labelNames: ['queue'],
      registers,
    });
    this.timerLag = new Histogram({
      name: 'weft_timer_lag_seconds',
      help: "From a timer's due time to the scheduler claiming it.",
      buckets: SECONDS,
      registers,
    });
    this.apiRequests = new Histogram({
      name: 'weft_api_request_duration_seconds',
      help: 'GraphQL operations, by root field, operation type and outcome (ok or an error code).',
      labelNames: ['field', 'type', 'outcome'],
      buckets: SECONDS,
      registers,
    });
    this.storedValuesRead = new Counter({
      name: 'weft_api_stored_values_read_total',
      help: 'Stored JSON values and error texts the API read to answer GraphQL operations (none for an operation refused by WEFT_MAX_RESPONSE_BYTES before its values are read).',
      registers,
    });
    this.scheduleFires = new Counter({
      name: 'weft_schedule_fires_total',
      help: 'Runs started by schedules, by source (clock, buffer, backfill, trigger).',
      labelNames: ['source', ...t],
      registers,
    });
    this.scheduleSkips = new Counter({
      name: 'weft_schedule_skips_total',
      help: 'Nominal fire times of schedules that started no run, by reason.',
      labelNames: ['reason', ...t],
      registers,
    });
    this.scheduleLag = new Histogram({
      name: 'weft_schedule_lag_seconds',
      help: "From a scheduled run's nominal time to its start, by source.",
      labelNames: ['source'],
      buckets: LAG_SECONDS,
      registers,
    });
    this.codeMemoryReserved = new Gauge({
      name: 'weft_code_memory_reserved_bytes',
      help: 'Memory reserved by the CODE executions a worker runs (its WEFT_CODE_MAX_TOTAL_MB total).',
      registers,
    });
    this.codeMemoryWaiting = new Gauge({
      name: 'weft_code_memory_waiting',
      help: "CODE executions waiting for their memory_mb to fit in the worker's total.",
      registers,
    });
    this.definitionChecks = new Counter({
      name: 'weft_definition_checks_total',
      help: "Published definitions, by how they were checked: identical (to the latest version, not validated again), inline (on the API's thread) or thread (on its validation thread).",
      labelNames: ['how'],
      registers,
    });
    this.retentionDeleted = new Counter({
      name: 'weft_retention_deleted_total',
      help: 'Runs deleted by run retention, every run of each tree counted (the top-level run and its child runs).',
      registers,
    });
    this.runsPaused = new Counter({
      name: 'weft_runs_paused_total',
      help: 'Runs paused (child runs included), by workflow and cause: operator (pauseRun), parent (its parent run was paused) or exhausted (a node with on_exhausted: pause ran out of attempts).',
      labelNames: ['workflow', 'cause', ...t],
      registers,
    });
    this.runsTimedOut = new Counter({
      name: 'weft_runs_timed_out_total',
      help: 'Runs that ended TIMED_OUT (their timeout_seconds passed), child runs included, by workflow.',
      labelNames: ['workflow', ...t],
      registers,
    });
    this.batchItems = new Counter({
      name: 'weft_batch_items_total',
      help: 'Runs bulk actions (createRunBatch) acted on, by action and outcome: APPLIED, SKIPPED (the action did not apply to the run) or FAILED.',
      labelNames: ['action', 'outcome'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'weft_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by event (run.failed, …) and outcome: delivered (a 2xx), retry (failed, tried again later) or failed (failed, no attempt left).',
      labelNames: ['event', 'outcome'],
      registers,
    });
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** A run started. */
  runStarted(tenantId: string, workflowId: string): void {
    this.runsStarted.inc(this.labels({ workflow: this.workflows.of(tenantId, workflowId) }, tenantId));
  }

  /** A run was paused, by `cause`. */
  runPaused(tenantId: string, workflowId: string, cause: string): void {
    this.runsPaused.inc(this.labels({ workflow: this.workflows.of(tenantId, workflowId), cause }, tenantId));
  }

  /** A run finished with `status` after `durationMs`. */
  runFinished(tenantId: string, workflowId: string, status: string, durationMs: number): void {
    this.runsFinished.inc(this.labels({ workflow: this.workflows.of(tenantId, workflowId), status }, tenantId));
    if (status === 'TIMED_OUT') this.runsTimedOut.inc(this.labels({ workflow: this.workflows.of(tenantId, workflowId) }, tenantId));
    this.runDuration.observe(this.labels({ status }, tenantId), durationMs / 1000);
  }

  /** A worker attempt executed and reported. */
  attempt(a: AttemptObservation): void {
    const base = this.labels({ queue: a.queue, node_type: a.nodeType }, a.tenantId);
    this.attempts.inc(base);
    if (a.attempt > 0) this.retries.inc(base);
    if (a.outcome !== 'succeeded') this.failures.inc({ ...base, error_class: a.outcome });
    if (a.dispatchMs !== undefined) this.dispatchSeconds.observe({ queue: a.queue }, Math.max(0, a.dispatchMs) / 1000);
    this.executionSeconds.observe({ queue: a.queue, node_type: a.nodeType, outcome: a.outcome === 'succeeded' ? 'succeeded' : 'failed' }, a.executionMs / 1000);
    this.reportSeconds.observe({ queue: a.queue }, a.reportMs / 1000);
  }

  /** A schedule started a run for a nominal time, `lagMs` after it. */
  scheduleFired(tenantId: string, source: string, lagMs: number): void {
    this.scheduleFires.inc(this.labels({ source }, tenantId));
    this.scheduleLag.observe({ source }, Math.max(0, lagMs) / 1000);
  }

  /** `count` nominal times of a schedule started no run, for `reason`. */
  scheduleSkipped(tenantId: string, reason: string, count: number): void {
    this.scheduleSkips.inc(this.labels({ reason }, tenantId), count);
  }

  /** A worker's CODE memory changed: `reservedMb` held by running executions, `waiting` executions waiting. */
  codeMemory(reservedMb: number, waiting: number): void {
    this.codeMemoryReserved.set(reservedMb * 1024 * 1024);
    this.codeMemoryWaiting.set(waiting);
  }

  /** The Prometheus text exposition of every metric. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }

  private labels<L extends Record<string, string>>(labels: L, tenantId: string): L & { tenant?: string } {
    return this.tenantLabel ? { ...labels, tenant: this.tenants.of(tenantId) } : labels;
  }
}

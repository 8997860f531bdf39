import { Logger } from '@nestjs/common';
import type {
  BatchItemNote,
  ConcurrencyCancelledNote,
  CoordinatorObserver,
  FlowDispatchedNote,
  FlowHeldNote,
  LeaseRecoveredNote,
  RunFinishedNote,
  RunPausedNote,
  RunStartedNote,
  RunsDeletedNote,
  ScheduleFiredNote,
  ScheduleSkippedNote,
  TimerFiredNote,
} from '@weft/engine/coordinator';
import type { WeftTracing } from './tracing.js';
import type { WeftMetrics } from './weft-metrics.js';

/** A timer claimed this late or later is logged as late (ms). */
export const LATE_TIMER_MS = 5_000;

/**
 * The coordinator's observer in a Weft process: counts into {@link WeftMetrics} and writes one
 * structured log record per run started and finished (and the run's span, see {@link WeftTracing}) (info), lease recovered (warn) and timer
 * fired late (warn, at {@link LATE_TIMER_MS} or more), each with the tenant, run, task and
 * attempt ids it concerns. Attempts in records are 1-based, as people count them.
 */
export class EngineTelemetry implements CoordinatorObserver {
  private readonly log = new Logger('runs');

  constructor(
    private readonly metrics: WeftMetrics,
    private readonly tracing?: WeftTracing,
  ) {}

  runStarted(n: RunStartedNote): void {
    this.metrics.runStarted(n.tenantId, n.workflowId);
    this.log.log({
      msg: `run started: ${n.workflowId} v${n.version}`,
      event: 'run.started',
      tenantId: n.tenantId,
      runId: n.runId,
      workflowId: n.workflowId,
      version: n.version,
      ...(n.parentRunId ? { parentRunId: n.parentRunId } : {}),
    });
  }

  runFinished(n: RunFinishedNote): void {
    this.metrics.runFinished(n.tenantId, n.workflowId, n.status, n.durationMs);
    this.tracing?.runFinished(n);
    const record = {
      msg: `run ${n.status.toLowerCase()}: ${n.workflowId} after ${n.durationMs} ms${n.failedNodes.length ? ` (failed: ${n.failedNodes.slice(0, 5).join(', ')}${n.failedNodes.length > 5 ? `, and ${n.failedNodes.length - 5} more` : ''})` : ''}`,
      event: 'run.finished',
      tenantId: n.tenantId,
      runId: n.runId,
      workflowId: n.workflowId,
      status: n.status,
      durationMs: n.durationMs,
      ...(n.failedNodes.length ? { failedNodes: n.failedNodes.slice(0, 20) } : {}),
      ...(n.reason ? { reason: n.reason } : {}),
    };
    if (n.status === 'SUCCEEDED') this.log.log(record);
    else this.log.warn(record);
  }

  leaseRecovered(n: LeaseRecoveredNote): void {
    this.metrics.leaseRecoveries.inc({ queue: n.queue });
    this.log.warn({
      msg: `lease recovered: node ${n.nodeId} attempt ${n.attempt + 1} (${n.status}) re-dispatched on queue ${n.queue}`,
      event: 'lease.recovered',
      tenantId: n.tenantId,
      runId: n.runId,
      taskId: n.taskId,
      nodeId: n.nodeId,
      attempt: n.attempt + 1,
      queue: n.queue,
    });
  }

  timerFired(n: TimerFiredNote): void {
    this.metrics.timerLag.observe(n.lateMs / 1000);
    if (n.lateMs < LATE_TIMER_MS) return;
    this.log.warn({
      msg: `timer fired late: node ${n.nodeId}, ${n.lateMs} ms after it was due`,
      event: 'timer.late',
      tenantId: n.tenantId,
      runId: n.runId,
      taskId: n.taskId,
      nodeId: n.nodeId,
      lateMs: n.lateMs,
    });
  }

  scheduleFired(n: ScheduleFiredNote): void {
    this.metrics.scheduleFired(n.tenantId, n.source, n.lagMs);
  }

  scheduleSkipped(n: ScheduleSkippedNote): void {
    this.metrics.scheduleSkipped(n.tenantId, n.reason, n.count);
  }

  flowHeld(n: FlowHeldNote): void {
    this.metrics.flowHeld.inc({ reason: n.reason }, n.count);
  }

  flowDispatched(n: FlowDispatchedNote): void {
    if (n.queue !== null) this.metrics.dispatched.inc({ queue: n.queue }, n.waits.length);
    for (const w of n.waits) this.metrics.flowWait.observe({ reason: w.reason }, w.seconds);
  }

  batchItem(n: BatchItemNote): void {
    this.metrics.batchItems.inc({ action: n.action, outcome: n.outcome });
  }

  runPaused(n: RunPausedNote): void {
    this.metrics.runPaused(n.tenantId, n.workflowId, n.cause);
  }

  runsDeleted(n: RunsDeletedNote): void {
    this.metrics.retentionDeleted.inc(n.runs);
    this.log.log({
      msg: `run retention deleted ${n.roots} run tree(s), ${n.runs} run(s) in all`,
      event: 'runs.deleted',
      tenantId: n.tenantId,
      roots: n.roots,
      runs: n.runs,
    });
  }

  concurrencyCancelled(n: ConcurrencyCancelledNote): void {
    this.metrics.concurrencyCancelled.inc({ strategy: n.strategy });
    this.log.log({
      msg: `run cancelled by its concurrency key (${n.strategy})`,
      event: 'run.concurrency_cancelled',
      tenantId: n.tenantId,
      runId: n.runId,
      strategy: n.strategy,
    });
  }
}

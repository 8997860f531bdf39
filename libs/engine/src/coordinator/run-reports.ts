import type { AttemptLogRecord } from '@weft/persistence';
import { MAX_ERROR_CHARS, type RunEvent } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { EventPipeline } from './event-pipeline.js';
import { reportField } from './input-checks.js';
import type { AttemptLogInput, FireTimerInput, ReportCompletedInput, ReportFailedInput, ReportResult } from './inputs.js';
import { describeJsonProblem, jsonProblem, sanitizeText, storableLog } from './storable.js';

/**
 * Workers' and the scheduler's reports, each turned into its event and handed to the event
 * pipeline (see {@link RunCommands} for what each does). A worker output PostgreSQL cannot hold
 * (NUL character or lone surrogate in a string or key, too deep, over `maxOutputBytes`) fails the
 * attempt instead; a worker's error text is sanitized and cut.
 *
 * A report's logs go with its event ({@link EventPipeline.report}), fenced by the attempt's
 * lease; a report without logs adds no write.
 */
export class RunReports {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly pipeline: EventPipeline,
  ) {}

  /** A worker's NodeCompleted, or the NodeFailed of an output that cannot be stored; see `RunCommands.reportCompleted`. */
  async reportCompleted(tenantId: string, r: ReportCompletedInput): Promise<ReportResult> {
    const bad = jsonProblem(r.output, this.ctx.maxOutputBytes);
    if (bad) return this.reportFailed(tenantId, { ...r, error: describeJsonProblem('output', bad, 'OUTPUT_TOO_LARGE') });
    const ev: RunEvent = { type: 'NodeCompleted', taskId: reportField(r.taskId), nodeId: reportField(r.nodeId), attempt: r.attempt, output: r.output };
    return this.pipeline.report(tenantId, r.runId, ev, r.leaseToken, r.takeFrom, this.logRecord(ev.taskId, r, null));
  }

  /** A worker's NodeFailed with its error text sanitized and cut at 8 KiB; see `RunCommands.reportFailed`. */
  async reportFailed(tenantId: string, r: ReportFailedInput): Promise<ReportResult> {
    const error = sanitizeText(typeof r.error === 'string' ? r.error : String(r.error), MAX_ERROR_CHARS);
    const ev: RunEvent = {
      type: 'NodeFailed',
      taskId: reportField(r.taskId),
      nodeId: reportField(r.nodeId),
      attempt: r.attempt,
      error,
      ...(r.retryable === undefined ? {} : { retryable: r.retryable !== false }),
    };
    return this.pipeline.report(tenantId, r.runId, ev, r.leaseToken, r.takeFrom, this.logRecord(ev.taskId, r, error));
  }

  /** The TimerFired of a WAITING task; see `RunCommands.fireTimer`. */
  async fireTimer(tenantId: string, t: FireTimerInput): Promise<ReportResult> {
    return this.pipeline.fireTimer(tenantId, t);
  }

  /** The report's logs as their row, when it has any (see {@link EventPipeline.report}, which writes them with its event). */
  private logRecord(taskId: string, r: { attempt: number; leaseToken?: string; log?: AttemptLogInput }, error: string | null): AttemptLogRecord | undefined {
    const log = r.log;
    if (!log || log.text === '') return undefined;
    return {
      taskId,
      attempt: r.attempt,
      ...(r.leaseToken === undefined ? {} : { leaseToken: r.leaseToken }),
      startedAt: validDate(log.startedAt),
      finishedAt: validDate(log.finishedAt),
      error,
      logs: storableLog(log.text),
    };
  }
}

/** `d` when it is a valid Date, else the coordinator's clock (a worker's bad clock value must not fail its report). */
function validDate(d: unknown): Date {
  return d instanceof Date && Number.isFinite(d.getTime()) ? d : new Date();
}

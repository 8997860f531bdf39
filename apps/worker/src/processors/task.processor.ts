import { Inject, Injectable, Logger } from '@nestjs/common';
import { RunCoordinator, type TaskJob } from '@weft/engine';
import { BullTaskQueues, WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { ExecutionError, type TaskExecutor } from '../executors/executor.js';
import { HttpExecutor } from '../executors/http.executor.js';
import { CodeExecutor } from '../executors/code.executor.js';

/** How often a report that could not be written is tried again before the job is given up. */
const REPORT_ATTEMPTS = 8;

/**
 * Consumes task jobs from the configured queues, runs them on the right executor and reports
 * the outcome through the coordinator. A job for an attempt that is no longer current (a
 * duplicate enqueue, a task cancelled meanwhile) is dropped without running.
 */
@Injectable()
export class TaskProcessor {
  private readonly log = new Logger('worker');
  private readonly http: HttpExecutor;
  private readonly code = new CodeExecutor();

  constructor(
    private readonly coordinator: RunCoordinator,
    private readonly queues: BullTaskQueues,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
  ) {
    this.http = new HttpExecutor({ allowPrivate: config.httpAllowPrivate, allowHosts: config.httpAllowHosts });
  }

  /** Starts consuming `queues` (default: the configured ones). */
  start(queues: string[] = this.config.queues): void {
    this.queues.consume(queues, this.config.workerConcurrency, (job) => this.process(job));
    this.log.log(`consuming queues ${queues.join(', ')} (concurrency ${this.config.workerConcurrency})`);
  }

  /** Runs one job end to end: claim, execute, report. */
  async process(job: TaskJob): Promise<void> {
    const current = await this.coordinator.markRunning(job.tenantId, job.taskId, job.attempt);
    if (!current) return;
    let outcome: { ok: true; output: unknown } | { ok: false; error: string; retryable: boolean };
    try {
      const output = await this.executorFor(job).execute(job.input, {
        taskId: job.taskId,
        nodeId: job.nodeId,
        attempt: job.attempt,
        runtime: job.runtime,
      });
      outcome = { ok: true, output };
    } catch (err) {
      const retryable = !(err instanceof ExecutionError) || err.retryable;
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err), retryable };
      this.log.warn(`run ${job.runId} node ${job.nodeId} attempt ${job.attempt + 1} failed${retryable ? '' : ' for good'}: ${outcome.error}`);
    }
    await this.report(job, outcome);
  }

  private executorFor(job: TaskJob): TaskExecutor {
    switch (job.nodeType) {
      case 'HTTP':
        return this.http;
      case 'CODE':
        return this.code;
      default:
        return {
          execute: async () => {
            throw new ExecutionError(`no executor for node type ${job.nodeType}`, false);
          },
        };
    }
  }

  /** Writes the outcome, retrying the report (never the task) while the database is unavailable. */
  private async report(
    job: TaskJob,
    outcome: { ok: true; output: unknown } | { ok: false; error: string; retryable: boolean },
  ): Promise<void> {
    const base = { runId: job.runId, taskId: job.taskId, nodeId: job.nodeId, attempt: job.attempt };
    for (let i = 1; ; i++) {
      try {
        if (outcome.ok) {
          await this.coordinator.reportCompleted(job.tenantId, { ...base, output: outcome.output as never });
        } else {
          await this.coordinator.reportFailed(job.tenantId, { ...base, error: outcome.error, retryable: outcome.retryable });
        }
        return;
      } catch (err) {
        if (i >= REPORT_ATTEMPTS) throw err;
        this.log.warn(`report for task ${job.taskId} attempt ${job.attempt} failed (${(err as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** i)));
      }
    }
  }
}

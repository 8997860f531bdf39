import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { RunCoordinator, jobId, type TaskJob } from '@weft/engine';
import { BullTaskQueues, WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { ExecutionError, type TaskExecutor } from '../executors/executor.js';
import { HttpExecutor } from '../executors/http.executor.js';
import { CodeExecutor, type CodeExecutorOptions } from '../executors/code.executor.js';

/** How often a report that could not be written is tried again before the job is given up. */
const REPORT_ATTEMPTS = 8;

/** Injection token of the optional {@link TaskProcessorOptions}. */
export const TASK_PROCESSOR_OPTIONS = Symbol('TASK_PROCESSOR_OPTIONS');

/** Tuning of {@link TaskProcessor}; every field has a default. */
export interface TaskProcessorOptions {
  /**
   * How often the attempts this worker is executing are checked for still being current, ms
   * (default 3 000; 0 turns the check off). One query covers all of them; an attempt that is no
   * longer current (run cancelled, node retried) is aborted and not reported.
   */
  currentCheckMs?: number;
  /** Options of the CODE executor. */
  code?: CodeExecutorOptions;
  /** First pause before a transient report failure is retried, ms (default 200, doubling, capped at 5 000). */
  reportBackoffMs?: number;
}

type Outcome = { ok: true; output: unknown } | { ok: false; error: string; retryable: boolean };

interface InFlight {
  job: TaskJob;
  controller: AbortController;
}

/**
 * Consumes task jobs from the configured queues, runs them on the right executor and reports
 * the outcome through the coordinator. A job for an attempt that is no longer current (a
 * duplicate enqueue, a task cancelled meanwhile) is dropped without running; one that stops being
 * current while it runs is aborted at the next check (`currentCheckMs`).
 */
@Injectable()
export class TaskProcessor {
  private readonly log = new Logger('worker');
  private readonly http: HttpExecutor;
  private readonly code: CodeExecutor;
  private readonly currentCheckMs: number;
  private readonly reportBackoffMs: number;
  private readonly inFlight = new Map<number, InFlight>();
  private nextSlot = 0;
  private watch: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly coordinator: RunCoordinator,
    private readonly queues: BullTaskQueues,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    @Optional() @Inject(TASK_PROCESSOR_OPTIONS) options: TaskProcessorOptions | null = null,
  ) {
    this.http = new HttpExecutor({ allowPrivate: config.httpAllowPrivate, allowHosts: config.httpAllowHosts });
    this.code = new CodeExecutor(options?.code);
    this.currentCheckMs = options?.currentCheckMs ?? 3_000;
    this.reportBackoffMs = options?.reportBackoffMs ?? 200;
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
    const slot = this.nextSlot++;
    const controller = new AbortController();
    this.inFlight.set(slot, { job, controller });
    this.watchInFlight();
    let outcome: Outcome;
    try {
      const output = await this.executorFor(job).execute(job.input, {
        taskId: job.taskId,
        nodeId: job.nodeId,
        attempt: job.attempt,
        runtime: job.runtime,
        signal: controller.signal,
      });
      outcome = { ok: true, output };
    } catch (err) {
      const retryable = !(err instanceof ExecutionError) || err.retryable;
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err), retryable };
    } finally {
      this.inFlight.delete(slot);
      if (this.inFlight.size === 0) this.stopWatching();
    }
    if (controller.signal.aborted) {
      // The coordinator would ignore the report as stale: the attempt was cancelled or replaced.
      this.log.log(`run ${job.runId} node ${job.nodeId} attempt ${job.attempt + 1} aborted: no longer current`);
      return;
    }
    if (!outcome.ok) {
      // Tenant code chooses this text: no NUL bytes in the log stream.
      this.log.warn(`run ${job.runId} node ${job.nodeId} attempt ${job.attempt + 1} failed${outcome.retryable ? '' : ' for good'}: ${outcome.error.replace(/\u0000/g, '\ufffd')}`);
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

  /**
   * Writes the outcome. A transient failure (database unavailable: code `TRANSIENT`) retries the
   * same report, with backoff, up to REPORT_ATTEMPTS times. A permanent one (the coordinator
   * refused the report — BAD_USER_INPUT, a database refusal, a bug) is not repeated: a refused
   * completion is reported as a failure of the attempt with the reason, so the node's retry
   * policy applies and the run cannot stay RUNNING; a refused failure report is given up.
   */
  private async report(job: TaskJob, outcome: Outcome): Promise<void> {
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
        const msg = err instanceof Error ? err.message : String(err);
        if (!isTransient(err)) {
          if (!outcome.ok) {
            this.log.error(`failure report for task ${job.taskId} attempt ${job.attempt} refused (${msg}); giving up`);
            throw err;
          }
          this.log.warn(`result of task ${job.taskId} attempt ${job.attempt} refused (${msg}); reporting the attempt failed`);
          outcome = { ok: false, error: `the result could not be reported: ${msg}`, retryable: true };
          i = 0;
          continue;
        }
        if (i >= REPORT_ATTEMPTS) throw err;
        this.log.warn(`report for task ${job.taskId} attempt ${job.attempt} failed (${msg}); retrying`);
        await new Promise((r) => setTimeout(r, Math.min(5000, this.reportBackoffMs * 2 ** (i - 1))));
      }
    }
  }

  /** Starts the periodic current-attempt check while jobs are in flight. */
  private watchInFlight(): void {
    if (this.watch || this.currentCheckMs <= 0) return;
    this.watch = setInterval(() => void this.abortStale(), this.currentCheckMs);
    this.watch.unref();
  }

  private stopWatching(): void {
    clearInterval(this.watch);
    this.watch = undefined;
  }

  /** One query for every in-flight attempt; aborts those no longer current. Errors only skip a round. */
  private async abortStale(): Promise<void> {
    if (this.checking || this.inFlight.size === 0) return;
    this.checking = true;
    try {
      const running = [...this.inFlight.values()];
      const current = await this.coordinator.currentAttempts(running.map((r) => r.job));
      for (const { job, controller } of running) {
        if (!current.has(jobId(job.taskId, job.attempt)) && !controller.signal.aborted) controller.abort();
      }
    } catch (err) {
      this.log.warn(`could not check in-flight attempts: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.checking = false;
    }
  }
}

/** A failure worth retrying the same report for: the database was unavailable. */
function isTransient(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'TRANSIENT';
}

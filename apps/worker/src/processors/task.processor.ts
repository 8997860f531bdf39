import { Inject, Injectable, Logger, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import { type TakenTask, type TaskJob } from '@weft/engine';
import { RunCoordinator, type AttemptLogInput, type ReportResult } from '@weft/engine/coordinator';
import { logStartLine, TaskQueues, WEFT_CONFIG, WeftMetrics, WeftTracing, type JobDelivery, type JobHandlerResult, type WeftConfig } from '@weft/platform';
import { ExecutionError, failureKind, type FailureKind, type TaskExecutor } from '../executors/executor.js';
import { HttpExecutor } from '../executors/http.executor.js';
import { redactInputs } from './redact-inputs.js';
import { attemptLogOf } from './attempt-logs.js';
import { AttemptLog } from '../executors/attempt-log.js';
import { CodeExecutor, type CodeExecutorOptions, type CodeMemoryEvent } from '../executors/code/code.executor.js';
import { WorkerRegistration } from '../registry/worker-registration.js';
import { Drain, handBack, type HeldExecution } from './drain.js';
import { pause, reportErrorKind, UNKNOWN_REPORT_ATTEMPTS } from './report-retry.js';

/** Injection token of the optional {@link TaskProcessorOptions}. */
export const TASK_PROCESSOR_OPTIONS = Symbol('TASK_PROCESSOR_OPTIONS');

/** Tuning of {@link TaskProcessor}; every field has a default. */
export interface TaskProcessorOptions {
  /**
   * How often the worker heartbeats the leases it holds, ms (default a third of
   * `WEFT_RUN_LEASE_MS`, i.e. 5 000; 0 turns heartbeats off). One query per tenant covers every
   * execution in flight; an execution whose lease is lost (run cancelled, node retried, attempt
   * claimed by another worker) is aborted and not reported.
   */
  heartbeatMs?: number;
  /** Another name of {@link heartbeatMs}, used when that is not given. */
  currentCheckMs?: number;
  /** Options of the CODE executor. */
  code?: CodeExecutorOptions;
  /** First pause before a transient report failure is retried, ms (default 200, doubling). */
  reportBackoffMs?: number;
  /** Longest pause between report retries, ms (default 5 000). */
  reportBackoffCapMs?: number;
  /**
   * Eager dispatch: how many attempts in a row one job's slot may take from its own reports
   * before the next goes through the queue again (default `WEFT_EAGER_DISPATCH`, 64; 0 turns it
   * off). See {@link TaskProcessor}.
   */
  eagerDispatch?: number;
  /** How long a stopping worker lets its executions finish before it hands them back, ms (default `WEFT_DRAIN_SECONDS`). */
  drainMs?: number;
}

type Outcome = ({ ok: true; output: unknown } | { ok: false; error: string; retryable: boolean; kind: FailureKind }) & { log?: AttemptLogInput };

/** An execution this worker holds a lease for. */
type Held = HeldExecution;

/** Where one executed attempt leaves its slot: the attempt its report took, or the job to hand back. */
type Step = { next?: TakenTask; handBack?: TaskJob };

/**
 * Consumes task jobs from the configured queues, runs them on the right executor and reports
 * the outcome through the coordinator:
 *
 * - A job starts with a lease claim ({@link TaskLeases.markRunning}); a job for an attempt
 *   that is no longer current (a duplicate enqueue, a task cancelled meanwhile) is dropped.
 * - While it executes and until its report is written, the lease is heartbeated every
 *   `heartbeatMs`; a lost lease aborts the execution and nothing is reported.
 * - The report carries the lease token (the coordinator ignores it if the attempt was
 *   re-dispatched). A report that cannot be written because the database is unavailable is
 *   retried with capped backoff for as long as the lease is held — the Bull job stays active
 *   (its lock renewed) and heartbeats continue meanwhile, so the task is neither redelivered nor
 *   re-dispatched — and given up only when the lease is lost or the worker shuts down.
 * - Eager dispatch: a report asks the coordinator for the next attempt it dispatches on the same
 *   queue (the next node of a chain), which the same transaction writes RUNNING under a new lease
 *   ({@link ReportCompletedInput.takeFrom}); the slot then executes it at once, with no claim,
 *   no Bull job and no outbox row. At most `eagerDispatch` attempts are taken in a row per slot,
 *   so queued jobs are not starved by long chains; none while the worker shuts down.
 * - Reserved queues: the claim reads the tenant's access to the task's queue; a queue reserved
 *   for other tenants is refused there: the attempt fails for good without being executed.
 * - Stopping ({@link beforeApplicationShutdown}): the worker drains. It takes no job and no eager
 *   attempt any more, lets the executions it holds finish for `drainMs`, then hands back those
 *   still running (their leases released, aborted, their jobs enqueued again for another worker),
 *   and deregisters.
 */
@Injectable()
export class TaskProcessor implements BeforeApplicationShutdown {
  private readonly log = new Logger('worker');
  private readonly http: HttpExecutor;
  private readonly code: CodeExecutor;
  private readonly heartbeatMs: number;
  private readonly reportBackoffMs: number;
  private readonly reportBackoffCapMs: number;
  private readonly eagerDispatch: number;
  private readonly held = new Map<number, Held>();
  private nextSlot = 0;
  private beat: NodeJS.Timeout | undefined;
  private beating = false;
  private stopping = false;
  private started = false;
  private readonly drain: Drain;
  /** Executions handed back by the drain while they waited for CODE memory (the drain's outcome counts those of its deadline). */
  private handedBackWaiting = 0;

  constructor(
    private readonly coordinator: RunCoordinator,
    private readonly queues: TaskQueues,
    @Inject(WEFT_CONFIG) private readonly config: WeftConfig,
    @Optional() @Inject(TASK_PROCESSOR_OPTIONS) options: TaskProcessorOptions | null = null,
    @Optional() @Inject(WeftMetrics) private readonly metrics: WeftMetrics | null = null,
    @Optional() @Inject(WeftTracing) private readonly tracing: WeftTracing | null = null,
    @Optional() @Inject(WorkerRegistration) private readonly registration: WorkerRegistration | null = null,
  ) {
    // The executors stop reading a result or body at a bound of their own; keep it above the
    // output limit (plus room for JSON escaping) so an allowed output is never cut short.
    const readLimit = Math.max(10 * 1024 * 1024, 2 * config.maxOutputBytes);
    this.http = new HttpExecutor({ allowPrivate: config.httpAllowPrivate, allowHosts: config.httpAllowHosts, maxResponseBytes: readLimit });
    this.code = new CodeExecutor({
      maxResultBytes: readLimit,
      allowUnconfined: config.codeUnconfined ?? false,
      maxProcesses: config.codeMaxProcesses,
      maxTotalMemoryMb: config.codeMaxTotalMb,
      onMemory: (event) => this.codeMemory(event),
      ...options?.code,
    });
    this.heartbeatMs = options?.heartbeatMs ?? options?.currentCheckMs ?? Math.round((config.runLeaseMs ?? 15_000) / 3);
    this.reportBackoffMs = options?.reportBackoffMs ?? 200;
    this.reportBackoffCapMs = options?.reportBackoffCapMs ?? 5_000;
    this.eagerDispatch = Math.max(0, options?.eagerDispatch ?? config.eagerDispatch ?? DEFAULT_EAGER_DISPATCH);
    this.drain = new Drain(options?.drainMs ?? (config.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000);
  }

  /** Starts consuming `queues` (default: the configured ones); resolves once the worker is registered. */
  start(queues: string[] = this.config.queues): Promise<void> {
    this.started = true;
    this.queues.consume(queues, this.config.workerConcurrency, (job, delivery) => this.process(job, delivery));
    logStartLine(
      this.log,
      this.config,
      `consuming queues ${queues.join(', ')} (concurrency ${this.config.workerConcurrency}, eager dispatch ${this.eagerDispatch === 0 ? 'off' : `up to ${this.eagerDispatch} in a row`})`,
    );
    void this.code.isolation().then(
      (isolation) => {
        if (isolation.confined) {
          this.log.log(`CODE isolation: confined (${isolation.parts.join(', ')})`);
          this.log.debug(`CODE isolation holds: ${isolation.holds.join('; ')}`);
        } else if (this.code.allowsUnconfined) this.log.warn(`CODE runs UNCONFINED (local development only): ${isolation.missing.join('; ')}`);
        else this.log.warn(`CODE refused: every CODE attempt fails until this is fixed: ${isolation.missing.join('; ')}. ${isolation.remedy}`);
      },
      (err: unknown) => this.log.error(`CODE isolation could not be set up: ${err instanceof Error ? err.message : String(err)}`),
    );
    return this.registration?.register(queues, this.config.workerConcurrency) ?? Promise.resolve();
  }

  /**
   * Stopping: drains (see the class), then deregisters. Reports still retrying at the deadline
   * give up (the lease sweep re-dispatches their tasks). Nest runs this before CoreModule's own
   * hook, which then waits for Bull to let go of the jobs and closes the connections.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) {
      this.stopping = true;
      return;
    }
    const inFlight = this.drain.inFlight;
    const drained = this.drain.run(() => this.handBackHeld());
    void this.handBackWaiting();
    this.log.log(`draining: taking no more jobs; ${inFlight} in flight get ${this.drain.deadlineMs / 1000} s to finish`);
    await Promise.all([this.queues.pauseConsuming(), this.registration?.draining()]);
    const outcome = await drained;
    this.stopping = true;
    await this.queues.stopConsuming();
    await this.registration?.deregister();
    const handedBack = outcome.handedBack + this.handedBackWaiting;
    this.log.log(`drained in ${outcome.tookMs} ms: ${outcome.inFlight - handedBack} finished, ${handedBack} handed back`);
  }

  /**
   * Runs one job end to end: claim the lease, execute, report; then, as long as a report hands
   * back an attempt it took (eager dispatch), execute and report that one. Resolves when done or
   * dropped, or with `{ handBack }` when a drain gives the job (or an attempt taken after it) back
   * to the queue.
   */
  process(job: TaskJob, delivery?: JobDelivery): Promise<JobHandlerResult> {
    return this.drain.track(this.handle(job, delivery));
  }

  private async handle(job: TaskJob, delivery?: JobDelivery): Promise<JobHandlerResult> {
    // The queue the job came from is the one it runs on (the claim checks the task's is the same)
    // and the one it goes back to.
    const first = delivery ? { ...job, queue: delivery.queue } : job;
    // A job delivered once the drain began goes back untouched, for another worker.
    if (this.drain.active) return { handBack: first };
    const claim = await this.coordinator.leases.claim(job.tenantId, job.taskId, job.attempt, delivery?.queue, job.runId);
    if (!claim) return;
    if (claim.refused) return this.refuse(first, claim.leaseToken);
    let next: TakenTask | undefined = { job: first, leaseToken: claim.leaseToken };
    for (let taken = 0; next; taken++) {
      // The drain began during the claim or the last report: nothing more starts here.
      if (this.drain.active) return this.handBackTaken(next);
      const dispatchMs = taken === 0 && delivery ? Date.now() - delivery.dueAt : undefined;
      const step = await this.execute(next.job, next.leaseToken, taken < this.eagerDispatch, dispatchMs);
      if (step.handBack) return { handBack: step.handBack };
      next = step.next;
    }
  }

  /**
   * A claim the database refused because the task's queue is reserved for other tenants: the
   * attempt is reported failed for good, without executing it, so the run does not wait on it.
   */
  private async refuse(job: TaskJob, token: string): Promise<void> {
    const error = `queue "${job.queue}" is reserved for other tenants: this tenant's tasks may not run on it; route node ${job.nodeId} to another queue, or ask the operator to reserve "${job.queue}" for this tenant too`;
    this.log.warn({
      msg: `run ${job.runId} node ${job.nodeId} attempt ${job.attempt + 1} refused: ${error}`,
      event: 'task.refused',
      tenantId: job.tenantId,
      runId: job.runId,
      taskId: job.taskId,
      queue: job.queue,
    });
    const held: Held = { job, token, lost: new AbortController(), reporting: true };
    await this.report(held, { ok: false, error, retryable: false, kind: 'reserved_queue' }, false);
  }

  /** An attempt claimed or taken after the drain began: its lease released and its job handed back at once. */
  private async handBackTaken(taken: TakenTask): Promise<JobHandlerResult> {
    await handBack(
      this.coordinator.leases,
      [{ job: taken.job, token: taken.leaseToken, lost: new AbortController() }],
      this.log,
      'claimed or taken after the drain began',
    );
    return { handBack: taken.job };
  }

  /**
   * The drain's deadline passed: reports still retrying give up, and every execution still
   * running is handed back ({@link handBack}; {@link execute} then returns its job to put back on
   * the queue). Reports under way are left to finish. Returns how many were handed back.
   */
  private handBackHeld(): Promise<number> {
    this.stopping = true;
    const running = [...this.held.values()].filter((h) => !h.reporting && !h.lost.signal.aborted);
    return handBack(this.coordinator.leases, running, this.log, 'still running at the drain deadline');
  }

  /**
   * A CODE execution waits for, reserves or releases its memory: the gauges, a log line when it
   * waits, and during a drain a waiting one (it has not started) is handed back at once.
   */
  private codeMemory(event: CodeMemoryEvent): void {
    this.metrics?.codeMemory(event.reservedMb, event.waiting);
    const held = [...this.held.values()].find((h) => h.job.taskId === event.taskId && h.job.attempt === event.attempt);
    if (event.type !== 'waiting') {
      if (held) held.waiting = false;
      return;
    }
    this.log.log({
      msg: `task ${event.taskId} attempt ${event.attempt + 1} waits for ${event.memoryMb} MB of CODE memory: running executions hold ${event.reservedMb} of ${event.totalMb} MB (WEFT_CODE_MAX_TOTAL_MB), ${event.waiting} waiting`,
      event: 'code.memory_wait',
      taskId: event.taskId,
    });
    if (!held) return;
    held.waiting = true;
    if (this.drain.active) void this.handBackWaiting();
  }

  /** The drain began: executions still waiting for CODE memory go back to the queue at once, for another worker. */
  private handBackWaiting(): Promise<number> {
    const waiting = [...this.held.values()].filter((h) => h.waiting && !h.reporting && !h.handedBack && !h.lost.signal.aborted);
    this.handedBackWaiting += waiting.length;
    return handBack(this.coordinator.leases, waiting, this.log, 'waiting for CODE memory when the drain began');
  }

  /**
   * Executes one attempt whose lease `token` this worker holds and reports it; with `take`, the
   * report may hand back the next attempt to execute.
   */
  private async execute(job: TaskJob, token: string, take: boolean, dispatchMs?: number): Promise<Step> {
    const held: Held = { job, token, lost: new AbortController() };
    const started = performance.now();
    const slot = this.nextSlot++;
    this.held.set(slot, held);
    this.startHeartbeats();
    const spans = (this.tracing ?? UNTRACED).attempt(job);
    let outcome: Outcome | undefined;
    const log = new AttemptLog();
    const startedAt = new Date();
    try {
      try {
        const output = await spans.execute((traceparent) =>
          this.executorFor(job).execute(job.input, {
            taskId: job.taskId,
            nodeId: job.nodeId,
            attempt: job.attempt,
            runtime: job.runtime,
            signal: held.lost.signal,
            ...(job.sensitive ? { sensitive: true } : {}),
            ...(job.nonRetryable ? { nonRetryable: job.nonRetryable } : {}),
            ...(traceparent ? { traceparent } : {}),
            log,
          }),
        );
        outcome = { ok: true, output };
      } catch (err) {
        const retryable = !(err instanceof ExecutionError) || err.retryable;
        outcome = { ok: false, error: failureText(job, err instanceof Error ? err.message : String(err)), retryable, kind: failureKind(err) };
      }
      const logged = attemptLogOf(job, log, startedAt, new Date());
      if (logged) outcome.log = logged;
      if (held.handedBack) return { handBack: job };
      if (held.lost.signal.aborted) {
        // The coordinator would ignore the report as stale: the attempt was cancelled or replaced.
        this.log.log(`run ${job.runId} node ${job.nodeId} attempt ${job.attempt + 1} aborted: its lease is lost`);
        return {};
      }
      held.reporting = true;
      if (!outcome.ok) {
        // Tenant code chooses this text: no NUL bytes in the log stream.
        this.log.warn({
          msg: `run ${job.runId} node ${job.nodeId} attempt ${job.attempt + 1} failed${outcome.retryable ? '' : ' for good'}: ${outcome.error.replace(/\u0000/g, '\ufffd')}`,
          event: 'task.failed',
          tenantId: job.tenantId,
          runId: job.runId,
          taskId: job.taskId,
          nodeId: job.nodeId,
          attempt: job.attempt + 1,
          queue: job.queue,
          errorClass: outcome.kind,
          retryable: outcome.retryable,
        });
      }
      const executed = performance.now();
      const reported = await spans.report(() => this.report(held, outcome!, take));
      this.metrics?.attempt({
        tenantId: job.tenantId,
        queue: job.queue,
        nodeType: job.nodeType,
        attempt: job.attempt,
        ...(dispatchMs === undefined ? {} : { dispatchMs }),
        executionMs: executed - started,
        reportMs: performance.now() - executed,
        outcome: outcome.ok ? 'succeeded' : outcome.kind,
      });
      return reported?.taken ? { next: reported.taken } : {};
    } finally {
      spans.end(outcome === undefined ? 'internal' : outcome.ok ? 'succeeded' : outcome.kind);
      this.held.delete(slot);
      if (this.held.size === 0) this.stopHeartbeats();
    }
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
   * Writes the outcome with the lease token. A transient failure (database unavailable: code
   * `TRANSIENT`) retries the same report, with backoff doubling from `reportBackoffMs` up to
   * `reportBackoffCapMs`, for as long as the lease is held (heartbeats go on meanwhile); it stops
   * when the lease is lost (nothing to report any more) or the worker shuts down (throws: the job
   * fails and the lease sweep re-dispatches the task). An error of no known kind is retried the
   * same way up to UNKNOWN_REPORT_ATTEMPTS times. A refusal (an error with any other code: the
   * coordinator or the database will never take it; an unknown error past its tries) is not repeated: a refused
   * completion is reported as a failure of the attempt with the reason, so the node's retry
   * policy applies and the run cannot stay RUNNING; a refused failure report is given up.
   */
  private async report(held: Held, outcome: Outcome, take: boolean): Promise<ReportResult | undefined> {
    const { job, token } = held;
    const base = {
      runId: job.runId,
      taskId: job.taskId,
      nodeId: job.nodeId,
      attempt: job.attempt,
      leaseToken: token,
      ...(outcome.log ? { log: outcome.log } : {}),
    };
    for (let i = 1; ; i++) {
      // Checked on every try: a draining worker takes nothing more.
      const takeFrom = take && !this.drain.active && !this.stopping ? { takeFrom: job.queue } : {};
      try {
        if (outcome.ok) {
          return await this.coordinator.runs.reportCompleted(job.tenantId, { ...base, ...takeFrom, output: outcome.output as never });
        }
        return await this.coordinator.runs.reportFailed(job.tenantId, { ...base, ...takeFrom, error: outcome.error, retryable: outcome.retryable });
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        const kind = reportErrorKind(err);
        // An error we cannot classify (a library's own error class after a lost connection, say)
        // is retried like a transient one, a bounded number of times, before it counts as a refusal.
        if (kind === 'refused' || (kind === 'unknown' && i >= UNKNOWN_REPORT_ATTEMPTS)) {
          if (!outcome.ok) {
            this.log.error(`failure report for task ${job.taskId} attempt ${job.attempt} refused (${msg}); giving up`);
            throw err;
          }
          this.log.warn(`result of task ${job.taskId} attempt ${job.attempt} refused (${msg}); reporting the attempt failed`);
          outcome = {
            ok: false,
            error: failureText(job, `the result could not be reported: ${msg}`),
            retryable: true,
            kind: 'internal',
            ...(outcome.log ? { log: outcome.log } : {}),
          };
          i = 0;
          continue;
        }
        if (this.stopping) {
          this.log.warn(`report for task ${job.taskId} attempt ${job.attempt} not written (${msg}); shutting down, the task will be re-dispatched`);
          throw err;
        }
        if (i === 1 || i % 10 === 0)
          this.log.warn(`report for task ${job.taskId} attempt ${job.attempt} failed ${i} time(s) (${msg}); retrying while the lease is held`);
        await pause(Math.min(this.reportBackoffCapMs, this.reportBackoffMs * 2 ** Math.min(i - 1, 20)), held.lost.signal);
        if (held.lost.signal.aborted) {
          this.log.warn(`report for task ${job.taskId} attempt ${job.attempt} dropped: its lease is lost`);
          return undefined;
        }
      }
    }
  }

  /** Starts heartbeating while executions are held. */
  private startHeartbeats(): void {
    if (this.beat || this.heartbeatMs <= 0) return;
    this.beat = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    this.beat.unref();
  }

  private stopHeartbeats(): void {
    clearInterval(this.beat);
    this.beat = undefined;
  }

  /**
   * One heartbeat for every held lease (one query per tenant); aborts the executions whose lease
   * is lost. An error (database unavailable) only skips a beat: the leases are kept.
   */
  private async heartbeat(): Promise<void> {
    if (this.beating || this.held.size === 0) return;
    this.beating = true;
    try {
      const held = [...this.held.values()].filter((h) => !h.lost.signal.aborted);
      const lost = await this.coordinator.leases.heartbeat(
        held.map((h) => ({ tenantId: h.job.tenantId, taskId: h.job.taskId, attempt: h.job.attempt, leaseToken: h.token })),
      );
      for (const h of held) if (lost.has(h.token)) h.lost.abort();
    } catch (err) {
      this.log.warn(`heartbeat failed, leases kept until the next one: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.beating = false;
    }
  }
}

/**
 * A failure's text as it leaves the worker (report and log): a sensitive node's without any of
 * its resolved input values ({@link redactInputs}), whatever its executor or code wrote.
 */
function failureText(job: TaskJob, message: string): string {
  return job.sensitive ? redactInputs(message, job.input) : message;
}

/** The spans of a worker built without the platform's tracing (tests): none, the run's traceparent passed on. */
const UNTRACED = new WeftTracing();

/** Attempts one slot takes in a row from its own reports when nothing else is configured. */
export const DEFAULT_EAGER_DISPATCH = 64;

/** Seconds a stopping worker lets its executions finish when nothing else is configured. */
const DEFAULT_DRAIN_SECONDS = 25;

import type { LoggerService } from '@nestjs/common';
import type { TaskJob } from '@weft/engine';
import type { TaskLeases } from '@weft/engine/coordinator';

/** What a drain did: how many jobs were in flight when it began, and how many it handed back. */
export interface DrainOutcome {
  inFlight: number;
  handedBack: number;
  /** Milliseconds from its start until every job it waited for had settled (or it gave up on them). */
  tookMs: number;
}

/**
 * A worker's drain when it stops: from {@link run} on, the worker takes nothing new (the
 * processor asks {@link active} before it claims a job or asks a report for the next attempt);
 * the jobs in flight get until the deadline to finish; those still running then are handed back
 * by the caller's `handBack` (their leases released, their executions aborted, their jobs put
 * back on the queue), and the drain waits a short grace for them to settle.
 *
 * The processor registers each job it handles with {@link track}, from delivery to the end of
 * its report and of any attempt its reports took, so the drain knows when nothing is left.
 */
export class Drain {
  private readonly jobs = new Set<Promise<unknown>>();
  private started: number | undefined;

  /**
   * @param deadlineMs how long the jobs in flight may run on once the drain starts, ms
   * @param graceMs how long handed-back executions get to settle after their abort, ms
   */
  constructor(
    readonly deadlineMs: number,
    private readonly graceMs = 5_000,
  ) {}

  /** True once the drain began: take no job and no eager attempt any more. */
  get active(): boolean {
    return this.started !== undefined;
  }

  /** How many jobs are in flight. */
  get inFlight(): number {
    return this.jobs.size;
  }

  /** Counts `job` as in flight until it settles; returns it. */
  track<T>(job: Promise<T>): Promise<T> {
    this.jobs.add(job);
    const done = () => this.jobs.delete(job);
    job.then(done, done);
    return job;
  }

  /**
   * Begins the drain and resolves once every job in flight settled: by itself before the
   * deadline, or after `handBack` (called once, at the deadline, if any job is left; it resolves
   * to how many executions it handed back) and at most the grace period more. Calling it again
   * waits for the same drain.
   */
  run(handBack: () => Promise<number>): Promise<DrainOutcome> {
    return (this.running ??= this.drain(handBack));
  }

  private running: Promise<DrainOutcome> | undefined;

  private async drain(handBack: () => Promise<number>): Promise<DrainOutcome> {
    const started = (this.started = Date.now());
    const inFlight = this.jobs.size;
    let handedBack = 0;
    if (!(await this.settledWithin(this.deadlineMs))) {
      handedBack = await handBack();
      await this.settledWithin(this.graceMs);
    }
    return { inFlight, handedBack, tookMs: Date.now() - started };
  }

  /** True when every tracked job (those added meanwhile included) settled within `ms`. */
  private async settledWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const settled = (async () => {
      while (this.jobs.size > 0) await Promise.allSettled([...this.jobs]);
      return true as const;
    })();
    try {
      return await Promise.race([settled, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** An execution a worker holds a lease for; `lost` is aborted when the lease is gone or the execution is handed back. */
export interface HeldExecution {
  job: TaskJob;
  token: string;
  lost: AbortController;
  /** Set once the execution is over and its outcome is being reported. */
  reporting?: boolean;
  /** Set when a drain handed the execution back: its job goes back on the queue. */
  handedBack?: boolean;
  /** Set while the execution waits for memory, before it started: a drain hands it back at once. */
  waiting?: boolean;
}

/**
 * Hands back `executions`: marks them handed back, releases their leases in one statement per
 * tenant (each task PENDING again, its token cleared, its lease ended: see `TaskLeases.release`),
 * then aborts them. A release that fails is logged and changes nothing else: the job the worker
 * puts back is claimed by another worker all the same, which supersedes the old lease. Resolves
 * to how many there were.
 */
export async function handBack(leases: Pick<TaskLeases, 'release'>, executions: readonly HeldExecution[], log: LoggerService, why: string): Promise<number> {
  if (executions.length === 0) return 0;
  for (const h of executions) h.handedBack = true;
  await leases
    .release(executions.map((h) => ({ tenantId: h.job.tenantId, taskId: h.job.taskId, attempt: h.job.attempt, leaseToken: h.token })))
    .catch((err: unknown) => log.warn(`leases not released (${err instanceof Error ? err.message : String(err)}); the claims of other workers supersede them`));
  for (const h of executions) {
    log.log(`run ${h.job.runId} node ${h.job.nodeId} attempt ${h.job.attempt + 1} handed back: ${why}`);
    h.lost.abort();
  }
  return executions.length;
}

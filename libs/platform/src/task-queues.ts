import type { JobProbe, TaskDispatcher, TaskJob } from '@weft/engine';

/** How a job reached its worker. */
export interface JobDelivery {
  /** When the job became due (added, plus its delay), epoch ms of the enqueuing process's clock. */
  dueAt: number;
  /** The queue it was delivered on. */
  queue: string;
}

/**
 * What a consumer's handler resolves to: nothing when it is done with the job, or a job to put
 * back on its queue once the transport has let go of the delivered one (a draining worker handing
 * back an attempt it will not finish).
 */
export type JobHandlerResult = void | { handBack: TaskJob };

/**
 * The task transport every role shares, as one Nest token: the coordinator enqueues through it,
 * the scheduler's lease sweep probes it, a worker consumes it. Two adapters: BullTaskQueues (Redis,
 * any number of processes) and InProcessTaskQueues (`weft dev` without Redis, one process).
 * PostgreSQL stays the source of truth under both: a job the transport loses is found by the
 * lease sweep and dispatched again.
 */
export abstract class TaskQueues implements TaskDispatcher, JobProbe {
  /** See TaskDispatcher.enqueue: idempotent by job id, delayed by `notBefore` minus `now`, `ahead` before the waiting jobs. */
  abstract enqueue(jobs: TaskJob[], now?: Date, opts?: { ahead?: boolean }): Promise<void>;
  /** See JobProbe.hasJob: true while the job waits, is delayed or is being handled. */
  abstract hasJob(queue: string, jobId: string, opts?: { due?: boolean }): Promise<boolean>;
  /**
   * Runs `handler` for every job of each queue in `names`, `concurrency` at a time per queue. A
   * handler that throws drops its job (the lease sweep owns recovery); `{ handBack }` puts a job
   * back at the head of its queue once the delivered one is gone.
   */
  abstract consume(names: string[], concurrency: number, handler: (job: TaskJob, delivery: JobDelivery) => Promise<JobHandlerResult>): void;
  /** Stops taking jobs at once, without waiting for those in flight. */
  abstract pauseConsuming(): Promise<void>;
  /** Stops taking jobs; resolves once those in flight finished and those handed back are queued again. */
  abstract stopConsuming(): Promise<void>;
  /** Resolves when the transport answers (readiness); rejects otherwise. */
  abstract ping(): Promise<void>;
  /** Closes every queue and connection. */
  abstract close(): Promise<void>;
}

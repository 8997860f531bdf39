import Queue from 'bull';
import type { Job } from 'bull';
import { Redis, type RedisOptions } from 'ioredis';
import { jobId, type TaskJob } from '@weft/engine';
import type { JobDelivery, JobHandlerResult, TaskQueues } from './task-queues.js';
import { databaseNameOf } from './urls.js';

/**
 * Bull key prefix for the queues of the Weft installation whose database is at `databaseUrl`:
 * `weft:<database name>`, so two installations (a test database and `weft dev`) sharing one
 * Redis never take each other's jobs. Braces in the name become `_`, so the prefix never holds a
 * Redis Cluster hash tag of its own ({@link bullQueueName} adds the queue's).
 */
export function queuePrefix(databaseUrl: string): string {
  return `weft:${databaseNameOf(databaseUrl, 'weft').replace(/[{}]/g, '_')}`;
}

/**
 * The Bull queue behind Weft queue `name`: the name, percent-encoded, in braces — a Redis
 * Cluster hash tag. Bull keeps a queue in several keys (`<prefix>:<queue>:wait`, `…:active`,
 * `…:delayed`, one per job, …) that its Lua scripts touch together, which a cluster allows only
 * when they hash to one slot; Redis hashes just the part in the first braces, so every key of a
 * queue lands on the slot of its name, and different queues spread over the cluster's shards.
 * On a single Redis the braces are part of the key names and change nothing else.
 */
export function bullQueueName(name: string): string {
  return `{${encodeURIComponent(name)}}`;
}

/** Options of {@link BullTaskQueues}; every field has a default. */
export interface BullTaskQueuesOptions {
  /**
   * Bull's `lockDuration`, ms (default 15 000, `WEFT_JOB_LOCK_MS`): how long a worker's lock on an
   * active job lasts without renewal. The other stalled-job settings derive from it (see the
   * class docs).
   */
  jobLockMs?: number;
  /** Where Bull's own errors go (lost locks after Redis was flushed, connection errors); default console.warn. */
  onError?: (message: string) => void;
}

/**
 * The one file that knows Bull (Bull is in maintenance mode; moving to BullMQ should be this file
 * only). Holds one Bull queue per queue name over shared Redis connections, enqueues task jobs
 * idempotently (job id `taskId:attempt`) and lets a worker consume them.
 *
 * Not `@nestjs/bull`: its queues are registered by name when the modules are built
 * (`registerQueue`, `@Processor('name')`), while here the API, the scheduler and a worker's eager
 * dispatch enqueue on whatever queue a node names, created on first use, and a worker consumes
 * the queues of its runtime configuration (`WEFT_QUEUES`), all over shared connections.
 *
 * Retries are the engine's business, so every job has `attempts: 1` and is removed when it
 * completes or fails; a job's `delay` is its `notBefore` (retry backoff, database clock) minus
 * the database time the coordinator passes. Redis is only a transport: PostgreSQL's task leases
 * and the scheduler's lease sweep re-dispatch whatever Redis loses.
 *
 * Worker crashes — Bull's stalled-job handling, with `jobLockMs` = L (default 15 s):
 * - `lockDuration` L: a worker holds a lock on each active job; a SIGKILLed worker's locks lapse
 *   at most L after their last renewal. 15 s instead of Bull's 30 s so a crashed worker's job is
 *   redelivered in well under half a minute; still far above any event-loop pause of a worker,
 *   whose CODE runs in child processes and HTTP is asynchronous.
 * - `lockRenewTime` L/3 (5 s): two renewals may fail (a Redis hiccup) before the lock lapses.
 * - `stalledInterval` L/3 (5 s): how often each worker process looks for active jobs whose lock
 *   lapsed and moves them back to waiting. One small Lua script per queue and process every 5 s.
 *   A crashed worker's job is redelivered after about L + 2 × L/3 (~25 s) at worst.
 * - `maxStalledCount` 2: a job is redelivered after two stalls; a third stall fails it (and it is
 *   removed). Nothing is lost then: the task's lease expires and the lease sweep re-dispatches
 *   it under the same job id.
 * - `retryProcessDelay` 1 s: after Bull itself fails (e.g. a job's lock vanished with a Redis
 *   flush), the consumer resumes after 1 s instead of Bull's 5 s.
 * The lock and the engine's lease are independent: the lease fences reports (a redelivered job
 * claims a new lease, the old execution's report is ignored), the lock drives redelivery.
 */
export class BullTaskQueues implements TaskQueues {
  private readonly queues = new Map<string, Queue.Queue<TaskJob>>();
  private readonly consumed = new Set<string>();
  /** Jobs to enqueue again once Bull has finished the delivered job, by `queue/job id`. */
  private readonly handBacks = new Map<string, TaskJob>();
  /** Hand-back enqueues under way. */
  private readonly handingBack = new Set<Promise<void>>();
  private readonly shared: Redis[] = [];
  private client?: Redis;
  private subscriber?: Redis;
  private readonly jobLockMs: number;
  private readonly onError: (message: string) => void;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix = 'weft',
    opts: BullTaskQueuesOptions = {},
  ) {
    this.jobLockMs = opts.jobLockMs ?? 15_000;
    this.onError = opts.onError ?? ((m) => console.warn(m));
  }

  /** The Bull queue for `name`, created on first use. */
  queue(name: string): Queue.Queue<TaskJob> {
    let q = this.queues.get(name);
    if (!q) {
      const third = Math.max(1, Math.round(this.jobLockMs / 3));
      q = new Queue<TaskJob>(bullQueueName(name), {
        prefix: this.prefix,
        createClient: (type) => this.connection(type),
        settings: {
          lockDuration: this.jobLockMs,
          lockRenewTime: third,
          stalledInterval: third,
          maxStalledCount: 2,
          retryProcessDelay: 1_000,
        },
      });
      q.on('error', (err: unknown) => this.onError(`queue ${name}: ${err instanceof Error ? err.message : String(err)}`));
      this.queues.set(name, q);
    }
    return q;
  }

  /**
   * Adds each job to its queue, delayed by `notBefore` minus `now` (the database time the
   * coordinator read; default the process clock); a job whose id already exists is left alone by
   * Bull.
   */
  async enqueue(jobs: TaskJob[], now: Date = new Date(), opts: { ahead?: boolean } = {}): Promise<void> {
    const at = now.getTime();
    await Promise.all(jobs.map((job) => this.add(job, Math.max(0, job.notBefore - at), false, opts.ahead === true)));
  }

  /**
   * Adds one job under its idempotent id; `first` puts it at the head of the waiting list (a job
   * handed back); `ahead` gives it Bull's priority 1, so it is taken before every job without a
   * priority and after the earlier ones with it (Bull keeps prioritized jobs in order).
   */
  private add(job: TaskJob, delay: number, first: boolean, ahead = false): Promise<unknown> {
    return this.queue(job.queue).add(job, {
      jobId: jobId(job.taskId, job.attempt),
      delay,
      attempts: 1,
      removeOnComplete: true,
      removeOnFail: true,
      ...(first ? { lifo: true } : {}),
      ...(ahead ? { priority: 1 } : {}),
    });
  }

  /**
   * True while job `id` is on queue `name` and not finished (waiting, delayed, active, paused).
   * A finished (failed or completed) job left behind, or a job in no list at all (`stuck`, as
   * after a partial loss of Redis keys), is removed, so that enqueuing the same attempt again
   * adds a fresh job instead of being a no-op. With `due`, a delayed job is promoted to waiting.
   */
  async hasJob(name: string, id: string, opts: { due?: boolean } = {}): Promise<boolean> {
    const job = await this.queue(name).getJob(id);
    if (!job) return false;
    let state = await job.getState();
    // getState reads the lists one after another: a job moving between them can look `stuck`.
    if (state === 'stuck') state = await job.getState();
    if (state === 'delayed' && opts.due) await job.promote().catch(() => undefined);
    if (state !== 'failed' && state !== 'completed' && state !== 'stuck') return true;
    await job.remove().catch(() => undefined);
    return false;
  }

  /**
   * Runs `handler` for every job of each queue in `names`, `concurrency` at a time per queue.
   * A handler that throws leaves the job failed (and removed); the engine's lease sweep owns
   * recovery. The job stays active, its lock renewed, for as long as the handler runs.
   *
   * A handler resolving `{ handBack: job }` asks for `job` to be enqueued again: that happens once
   * Bull has removed the delivered job (its `completed` event), since a job whose id is still in
   * Redis cannot be added again. It goes to the head of the queue (it was delivered before the
   * jobs waiting now), so another worker of the queue takes it next.
   */
  consume(names: string[], concurrency: number, handler: (job: TaskJob, delivery: JobDelivery) => Promise<JobHandlerResult>): void {
    for (const name of names) {
      if (this.consumed.has(name)) continue;
      this.consumed.add(name);
      const q = this.queue(name);
      const settle = (job: Job<TaskJob>) => {
        const key = `${name}/${String(job.id)}`;
        const again = this.handBacks.get(key);
        if (!again) return;
        this.handBacks.delete(key);
        this.handBack(again);
      };
      q.on('completed', settle);
      q.on('failed', settle);
      q.process(concurrency, async (job: Job<TaskJob>) => {
        const result = await handler(job.data, { dueAt: job.timestamp + (job.opts.delay ?? 0), queue: name });
        if (result) this.handBacks.set(`${name}/${String(job.id)}`, result.handBack);
      }).catch((err: unknown) => this.onError(`queue ${name}: consumer stopped: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  /**
   * Stops fetching jobs on every queue this process consumes, at once, without waiting for the
   * jobs in flight (they go on and finish); {@link stopConsuming} then waits for them.
   */
  async pauseConsuming(): Promise<void> {
    await Promise.allSettled([...this.consumed].map((name) => this.queue(name).pause(true, true)));
  }

  /**
   * Stops taking jobs on every queue this process consumes and resolves once the jobs in flight
   * finished and the jobs handed back are enqueued again, as {@link close} does first; the queues
   * still enqueue until closed.
   */
  async stopConsuming(): Promise<void> {
    await Promise.allSettled([...this.consumed].map((name) => this.queue(name).pause(true)));
    // A delivered job Bull could not move (its lock lost with Redis): enqueued anyway, a no-op
    // while the old job lingers, and the task's lease covers it then.
    for (const job of this.handBacks.values()) this.handBack(job);
    this.handBacks.clear();
    await Promise.allSettled([...this.handingBack]);
  }

  /** Enqueues a handed-back job at the head of its queue: it was delivered before those waiting now. */
  private handBack(job: TaskJob): void {
    const p = this.add(job, 0, true).then(
      () => undefined,
      (err: unknown) =>
        this.onError(
          `queue ${job.queue}: job ${jobId(job.taskId, job.attempt)} not handed back (${err instanceof Error ? err.message : String(err)}); its lease sweep re-dispatches it`,
        ),
    );
    this.handingBack.add(p);
    void p.finally(() => this.handingBack.delete(p));
  }

  /** One PING on the queues' shared connection. @throws when Redis does not answer (the caller bounds the wait). */
  async ping(): Promise<void> {
    await this.connection('client').ping();
  }

  /** Closes every queue and connection. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    this.consumed.clear();
    for (const c of this.shared) c.disconnect();
    this.shared.length = 0;
    this.client = this.subscriber = undefined;
  }

  private connection(type: 'client' | 'subscriber' | 'bclient'): Redis {
    const opts: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: false };
    if (type === 'bclient') {
      const c = new Redis(this.redisUrl, opts);
      this.shared.push(c);
      return c;
    }
    if (type === 'client') return (this.client ??= this.track(new Redis(this.redisUrl, opts)));
    return (this.subscriber ??= this.track(new Redis(this.redisUrl, opts)));
  }

  private track(c: Redis): Redis {
    this.shared.push(c);
    // ioredis prints an error without a listener on stderr (not as a log record) and retries.
    c.on('error', (err: Error) => this.onError(`Redis connection: ${err.message}`));
    return c;
  }
}

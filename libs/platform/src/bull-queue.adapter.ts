import Queue from 'bull';
import type { Job } from 'bull';
import { Redis, type RedisOptions } from 'ioredis';
import { jobId, type JobProbe, type TaskDispatcher, type TaskJob } from '@weft/engine';

/**
 * Bull key prefix for the queues of the Weft installation whose database is at `databaseUrl`:
 * `weft:<database name>`, so two installations (a test database and `weft dev`) sharing one
 * Redis never take each other's jobs.
 */
export function queuePrefix(databaseUrl: string): string {
  let db = 'weft';
  try {
    db = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || db;
  } catch {
    // keep the default
  }
  return `weft:${db}`;
}

/**
 * The one file that knows Bull (STACK: Bull is in maintenance mode; moving to BullMQ should be
 * this file only). Holds one Bull queue per queue name over shared Redis connections, enqueues
 * task jobs idempotently (job id `taskId:attempt`, DESIGN §4) and lets a worker consume them.
 *
 * Retries are the engine's business, so every job has `attempts: 1`; a job's `delay` is its
 * `notBefore` (retry backoff) minus now. Bull's stalled-job check (lock 30 s, checked every
 * 30 s, one redelivery) redelivers the job of a worker that died mid-task.
 */
export class BullTaskQueues implements TaskDispatcher, JobProbe {
  private readonly queues = new Map<string, Queue.Queue<TaskJob>>();
  private readonly shared: Redis[] = [];
  private client?: Redis;
  private subscriber?: Redis;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix = 'weft',
  ) {}

  /** The Bull queue for `name`, created on first use. */
  queue(name: string): Queue.Queue<TaskJob> {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue<TaskJob>(name, { prefix: this.prefix, createClient: (type) => this.connection(type) });
      this.queues.set(name, q);
    }
    return q;
  }

  /** Adds each job to its queue; a job whose id already exists is left alone by Bull. */
  async enqueue(jobs: TaskJob[]): Promise<void> {
    const now = Date.now();
    await Promise.all(
      jobs.map((job) =>
        this.queue(job.queue).add(job, {
          jobId: jobId(job.taskId, job.attempt),
          delay: Math.max(0, job.notBefore - now),
          attempts: 1,
          removeOnComplete: true,
          removeOnFail: true,
        }),
      ),
    );
  }

  /**
   * True while job `id` is on queue `name` and not finished (waiting, delayed, active, paused).
   * A finished (failed or completed) job left behind is removed, so that enqueuing the same
   * attempt again adds a fresh job instead of being a no-op.
   */
  async hasJob(name: string, id: string): Promise<boolean> {
    const job = await this.queue(name).getJob(id);
    if (!job) return false;
    const state = await job.getState();
    if (state !== 'failed' && state !== 'completed') return true;
    await job.remove().catch(() => undefined);
    return false;
  }

  /**
   * Runs `handler` for every job of each queue in `names`, `concurrency` at a time per queue.
   * A handler that throws leaves the job failed; the engine's lease sweep owns recovery.
   */
  consume(names: string[], concurrency: number, handler: (job: TaskJob) => Promise<void>): void {
    for (const name of names) {
      void this.queue(name).process(concurrency, (job: Job<TaskJob>) => handler(job.data));
    }
  }

  /** Closes every queue and connection. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
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
    return c;
  }
}

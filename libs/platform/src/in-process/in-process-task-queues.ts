import { jobId, type TaskJob } from '@weft/engine';
import { TaskQueues, type JobDelivery, type JobHandlerResult } from '../task-queues.js';

/** A job this process holds: waiting, delayed (its timer set) or being handled. */
interface Held {
  job: TaskJob;
  id: string;
  state: 'waiting' | 'delayed' | 'active';
  /** Goes before the jobs waiting without it (fair dispatch's `ahead`). */
  ahead: boolean;
  /** When it became due, epoch ms. */
  dueAt: number;
  timer?: NodeJS.Timeout;
}

type Handler = (job: TaskJob, delivery: JobDelivery) => Promise<JobHandlerResult>;

/** One queue: its jobs by id, the waiting ones in order, and its consumer. */
class LocalQueue {
  readonly jobs = new Map<string, Held>();
  readonly waiting: Held[] = [];
  readonly inFlight = new Set<Promise<void>>();
  consumer?: { concurrency: number; handler: Handler };
  paused = false;
}

/**
 * {@link TaskQueues} in this process's memory, for `weft dev` without Redis: the coordinator, the
 * worker and the scheduler's lease sweep share one instance, so it serves exactly one process.
 * It keeps Bull's contract as the engine relies on it:
 *
 * - a job id (`taskId:attempt`) waiting, delayed or being handled is enqueued once; once handled
 *   (done, failed or handed back) it is forgotten, so the same attempt may be enqueued again;
 * - a job with a delay waits on a timer; `hasJob(…, { due: true })` makes a delayed job due now;
 * - `ahead` jobs go before every job waiting without it, in the order they came; a handed-back
 *   job goes first of all;
 * - each consumed queue runs at most `concurrency` handlers at once; a handler starts on a later
 *   turn of the event loop, never inside the call that enqueued its job.
 *
 * Nothing survives the process: after a restart the jobs are gone, and the scheduler's lease
 * sweep finds the tasks whose lease expired without a job and puts them back in their queue's
 * backlog, from which fair dispatch enqueues them again (PostgreSQL holds every task).
 */
export class InProcessTaskQueues extends TaskQueues {
  private readonly queues = new Map<string, LocalQueue>();
  private closed = false;

  constructor(private readonly onError: (message: string) => void = (m) => console.warn(m)) {
    super();
  }

  async enqueue(jobs: TaskJob[], now: Date = new Date(), opts: { ahead?: boolean } = {}): Promise<void> {
    const at = now.getTime();
    for (const job of jobs) this.add(job, Math.max(0, job.notBefore - at), { ahead: opts.ahead === true });
  }

  async hasJob(queue: string, id: string, opts: { due?: boolean } = {}): Promise<boolean> {
    const q = this.queues.get(queue);
    const held = q?.jobs.get(id);
    if (!q || !held) return false;
    if (held.state === 'delayed' && opts.due) this.promote(q, queue, held);
    return true;
  }

  consume(names: string[], concurrency: number, handler: Handler): void {
    for (const name of names) {
      const q = this.queue(name);
      if (q.consumer) continue;
      q.consumer = { concurrency, handler };
      this.pump(name, q);
    }
  }

  async pauseConsuming(): Promise<void> {
    for (const q of this.queues.values()) if (q.consumer) q.paused = true;
  }

  async stopConsuming(): Promise<void> {
    await this.pauseConsuming();
    // A handler's hand-back is queued as it settles, before its promise here resolves.
    await Promise.allSettled([...this.queues.values()].flatMap((q) => [...q.inFlight]));
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('the in-process queues are closed');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.queues.values()) {
      for (const held of q.jobs.values()) clearTimeout(held.timer);
      q.jobs.clear();
      q.waiting.length = 0;
      q.consumer = undefined;
    }
    this.queues.clear();
  }

  /** Jobs held now per queue (waiting, delayed, active), for tests and logs. */
  counts(): Record<string, { waiting: number; delayed: number; active: number }> {
    const out: Record<string, { waiting: number; delayed: number; active: number }> = {};
    for (const [name, q] of this.queues) {
      const c = { waiting: 0, delayed: 0, active: 0 };
      for (const held of q.jobs.values()) c[held.state]++;
      out[name] = c;
    }
    return out;
  }

  private queue(name: string): LocalQueue {
    let q = this.queues.get(name);
    if (!q) this.queues.set(name, (q = new LocalQueue()));
    return q;
  }

  /** Holds one job unless its id is held already; `first` puts it at the head (a hand-back). */
  private add(job: TaskJob, delay: number, opts: { ahead?: boolean; first?: boolean }): void {
    if (this.closed) throw new Error('the in-process queues are closed');
    const q = this.queue(job.queue);
    const id = jobId(job.taskId, job.attempt);
    if (q.jobs.has(id)) return;
    const held: Held = { job, id, state: 'delayed', ahead: opts.ahead === true, dueAt: Date.now() + delay };
    q.jobs.set(id, held);
    if (delay > 0) {
      held.timer = setTimeout(() => this.promote(q, job.queue, held), delay);
      held.timer.unref();
      return;
    }
    this.wait(q, held, opts.first === true);
    this.pump(job.queue, q);
  }

  private promote(q: LocalQueue, name: string, held: Held): void {
    if (held.state !== 'delayed' || q.jobs.get(held.id) !== held) return;
    clearTimeout(held.timer);
    held.timer = undefined;
    this.wait(q, held, false);
    this.pump(name, q);
  }

  private wait(q: LocalQueue, held: Held, first: boolean): void {
    held.state = 'waiting';
    if (first) q.waiting.unshift(held);
    else if (held.ahead) {
      const after = q.waiting.findIndex((w) => !w.ahead);
      q.waiting.splice(after === -1 ? q.waiting.length : after, 0, held);
    } else q.waiting.push(held);
  }

  /** Starts handlers (on a later turn) while the queue has a consumer, room and waiting jobs. */
  private pump(name: string, q: LocalQueue): void {
    const c = q.consumer;
    if (!c || q.paused) return;
    while (q.inFlight.size < c.concurrency && q.waiting.length > 0) {
      const held = q.waiting.shift()!;
      held.state = 'active';
      const run: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => c.handler(held.job, { dueAt: held.dueAt, queue: name }))
        .then(
          (result) => {
            q.jobs.delete(held.id);
            if (result && !this.closed) this.add(result.handBack, 0, { first: true });
          },
          (err: unknown) => {
            q.jobs.delete(held.id);
            this.onError(`queue ${name}: job ${held.id} failed: ${err instanceof Error ? err.message : String(err)}`);
          },
        )
        .finally(() => {
          q.inFlight.delete(run);
          if (!this.closed) this.pump(name, q);
        });
      q.inFlight.add(run);
    }
  }
}

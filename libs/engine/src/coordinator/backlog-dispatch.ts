import { backlogQueues, byTenant, dispatchBacklog, OutboxRepository, type AdmittedAttempt } from '@weft/persistence';
import { jobId, RunStatus, type TaskJob } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { FlowHoldReason } from './coordinator-options.js';
import { message } from './error-mapping.js';
import { jobOf, nodeFieldsOfTasks } from './jobs.js';

/** Attempts one pass admits at most; a full pass asks for another at once. */
const PASS_SIZE = 200;
/** Jobs of this process's own commits kept for their admission, at most (older ones are read back instead). */
const KNOWN_JOBS = 10_000;
/** The longest a pass waits for a hold's end on its own timer; the scheduler's poll covers longer holds. */
const MAX_WAKE_MS = 60_000;

/** A queue's dispatch passes in this process: the one under way, the one asked for after it, and the timer of its next hold. */
interface QueueState {
  current?: Promise<void>;
  next?: Promise<void>;
  timer?: NodeJS.Timeout;
  timerAt?: number;
}

/**
 * This process's side of fair dispatch. The decision is the database's (`weft_dispatch`: which
 * backlog rows go to workers next, across every tenant and process); this class decides only when
 * to ask, and enqueues the jobs of what was admitted:
 *
 * - after a commit that put attempts in a queue's backlog ({@link offer}), after a worker's claim
 *   freed a place in the queue's window, after the lease sweep put an attempt back, and when the
 *   earliest hold of the queue is over (a timer on the database's clock);
 * - the scheduler's poll ({@link poll}) passes over every queue with ready work, so nothing waits
 *   for a process that died or a timer that was lost.
 *
 * Passes of one queue never overlap in this process; a request during a pass runs another pass
 * right after it, so no commit is missed. A failed enqueue is logged: the admitted task is
 * PENDING with a dispatch lease, and the lease sweep puts it back in the backlog when that expires.
 */
export class BacklogDispatch {
  private readonly known = new Map<string, TaskJob>();
  /** Jobs of {@link offer}s whose passes have not ended yet: their commits publish their runs' updates. */
  private readonly fresh = new Set<string>();
  private readonly queues = new Map<string, QueueState>();
  private closed = false;

  constructor(private readonly ctx: CoordinatorContext) {}

  /**
   * Jobs this process just committed to their queues' backlogs: kept for their admission, and
   * their queues asked for a pass; resolves once those passes ran. Never rejects.
   */
  async offer(jobs: readonly TaskJob[]): Promise<void> {
    const ids = jobs.map((j) => jobId(j.taskId, j.attempt));
    for (const [i, job] of jobs.entries()) {
      if (this.known.size >= KNOWN_JOBS) this.known.delete(this.known.keys().next().value!);
      this.known.set(ids[i]!, job);
      this.fresh.add(ids[i]!);
    }
    try {
      await Promise.all([...new Set(jobs.map((j) => j.queue))].map((queue) => this.request(queue)));
    } finally {
      for (const id of ids) this.fresh.delete(id);
    }
  }

  /**
   * Asks for a pass over `queue` (see the class); resolves once a pass that began after the
   * request ended. Never rejects: a failed pass is logged, and the scheduler's poll tries again.
   */
  request(queue: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    const state = this.state(queue);
    if (state.next) return state.next;
    if (!state.current) return (state.current = this.passOnce(queue, state));
    state.next = state.current.then(() => {
      state.next = undefined;
      return (state.current = this.passOnce(queue, state));
    });
    return state.next;
  }

  /**
   * The scheduler's pass over every queue with a ready backlog row or a hold that is over;
   * resolves how many attempts were admitted.
   */
  async poll(max = PASS_SIZE): Promise<number> {
    const { ctx } = this;
    const now = ctx.testNow();
    let admitted = 0;
    for (const queue of await backlogQueues(ctx.ds, now)) admitted += await this.pass(queue, max);
    return admitted;
  }

  /** One pass over `queue` now: admits, enqueues, and sets the timer of its next hold; resolves how many were admitted. */
  async pass(queue: string, max = PASS_SIZE): Promise<number> {
    const { ctx } = this;
    const result = await ctx.retrying('dispatch', () =>
      dispatchBacklog(ctx.ds, { queue, now: ctx.testNow(), max, windowFloor: ctx.dispatchWindowFloor, leaseMs: ctx.dispatchLeaseMs }),
    );
    if (result.nextAt) this.wakeAt(queue, Math.min(result.nextAt.getTime() - result.dbNow.getTime(), MAX_WAKE_MS));
    for (const reason of new Set(result.held)) {
      const count = result.held.filter((r) => r === reason).length;
      ctx.observe((o) => o.flowHeld?.({ reason: reason as FlowHoldReason, count }));
    }
    if (!result.admitted.length) return 0;
    const waits = result.admitted.map((a) => ({ reason: a.reason as FlowHoldReason, seconds: a.waitedMs / 1000 }));
    ctx.observe((o) => o.flowDispatched?.({ queue, waits }));
    const jobs = await this.jobsOf(result.admitted);
    const ahead = new Set(result.admitted.filter((a) => a.ahead).map((a) => jobId(a.taskId, a.attempt)));
    const isAhead = (j: TaskJob) => ahead.has(jobId(j.taskId, j.attempt));
    try {
      if (ahead.size) await ctx.dispatcher.enqueue(jobs.filter(isAhead), result.dbNow, { ahead: true });
      const rest = jobs.filter((j) => !isAhead(j));
      if (rest.length) await ctx.dispatcher.enqueue(rest, result.dbNow);
    } catch (err) {
      ctx.log.warn(`queue ${queue}: enqueue of ${jobs.length} admitted job(s) failed; the lease sweep puts them back in the backlog: ${message(err)}`);
    }
    // The tasks left QUEUED and its wait reason outside any event of their runs: a watcher reads
    // the run again. Not for those the pass of their own commit admitted: that commit's update follows.
    const runs = new Map(jobs.filter((j) => !this.fresh.has(jobId(j.taskId, j.attempt))).map((j) => [`${j.tenantId}/${j.runId}`, j]));
    for (const j of runs.values()) {
      await ctx.publisher
        .publish({ tenantId: j.tenantId, runId: j.runId, status: RunStatus.Running })
        .catch((err: unknown) => ctx.log.warn(`run ${j.runId}: update not published: ${message(err)}`));
    }
    return result.admitted.length;
  }

  /** Stops asking: clears the timers; passes under way finish. */
  close(): void {
    this.closed = true;
    for (const state of this.queues.values()) clearTimeout(state.timer);
  }

  /** One pass as {@link request} runs it: it clears itself from `state` when done, and asks for another when it was full. */
  private passOnce(queue: string, state: QueueState): Promise<void> {
    const done: Promise<void> = this.pass(queue).then(
      (admitted) => {
        if (admitted >= PASS_SIZE) void this.request(queue);
      },
      (err: unknown) => this.ctx.log.warn(`queue ${queue}: dispatch pass failed, the scheduler's poll tries again: ${message(err)}`),
    );
    void done.finally(() => {
      if (state.current === done) state.current = undefined;
    });
    return done;
  }

  /** The jobs of `admitted`: those this process committed from memory, the others read back per tenant. */
  private async jobsOf(admitted: readonly AdmittedAttempt[]): Promise<TaskJob[]> {
    const { ctx } = this;
    const jobs: TaskJob[] = [];
    const unknown: AdmittedAttempt[] = [];
    for (const a of admitted) {
      const id = jobId(a.taskId, a.attempt);
      const job = this.known.get(id);
      if (job) {
        this.known.delete(id);
        jobs.push(job);
      } else unknown.push(a);
    }
    for (const [tenantId, rows] of byTenant(unknown)) {
      const read = await ctx.inTenant('admitted jobs', tenantId, async (m) => {
        const found = await new OutboxRepository(m).jobs(
          tenantId,
          rows.map((r) => r.outboxId),
        );
        const fields = await nodeFieldsOfTasks(ctx, m, tenantId, found);
        return found.filter((j) => j.taskAttempt === j.attempt).map((j) => jobOf(j, fields.get(j.taskId) ?? { sensitive: true }));
      });
      jobs.push(...read);
    }
    return jobs;
  }

  /** Asks for a pass over `queue` in `delayMs` (at least 1), unless one is already timed earlier. */
  private wakeAt(queue: string, delayMs: number): void {
    if (this.closed) return;
    const state = this.state(queue);
    const at = Date.now() + Math.max(1, delayMs);
    if (state.timer && state.timerAt !== undefined && state.timerAt <= at) return;
    clearTimeout(state.timer);
    state.timerAt = at;
    state.timer = setTimeout(
      () => {
        state.timer = undefined;
        state.timerAt = undefined;
        void this.request(queue);
      },
      Math.max(1, delayMs),
    );
    state.timer.unref?.();
  }

  private state(queue: string): QueueState {
    let state = this.queues.get(queue);
    if (!state) this.queues.set(queue, (state = {}));
    return state;
  }
}

import { v4 as uuidv4 } from 'uuid';
import { byTenant, isUuid, TaskLeaseRepository } from '@weft/persistence';
import { RunStatus } from '../index.js';
import type { BacklogDispatch } from './backlog-dispatch.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { isAttempt } from './input-checks.js';
import type { HeldLease } from './inputs.js';
import { snapshotNodes } from './snapshot-cache.js';

/**
 * The worker's side of a task attempt's lease: the claim when it picks up the attempt's job and
 * the heartbeats while it executes and reports. No event, no history: a lease only decides whose
 * report of an attempt counts.
 */
export class TaskLeases {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly backlog: BacklogDispatch,
  ) {}

  /**
   * A worker picked up the job of (`taskId`, `attempt`) and claims its lease: in one fenced UPDATE
   * the task becomes RUNNING with a fresh random `lease_token` (UUIDv4) and `lease_expires_at` =
   * the database's now + `runLeaseMs`. Returns the token, which the worker sends with its
   * heartbeats and its report; null when the worker must drop the job (unknown task, another
   * attempt, finished or cancelled, malformed ids). {@link claim} also checks the queue.
   *
   * A claim of an attempt that is already RUNNING (Bull redelivered a stalled job, the lease
   * sweep re-dispatched it) succeeds and supersedes the previous execution's lease: that
   * execution learns it at its next heartbeat, and its report is ignored as stale.
   * @throws WeftError TRANSIENT when the database stays unavailable.
   */
  async markRunning(tenantId: string, taskId: string, attempt: number): Promise<string | null> {
    return (await this.claim(tenantId, taskId, attempt))?.leaseToken ?? null;
  }

  /**
   * {@link markRunning} for a job delivered on `queue`: the claim matches only a task routed to
   * that queue (a job put on another queue than its task's is dropped: it is not the task's job),
   * and reads in the same statement the tenant's access to the queue. `refused` is true when the
   * queue is reserved for other tenants: the worker holds the lease only to report the attempt
   * failed for good, without executing it. Null when the job must be dropped.
   *
   * With `runId` (the job's run), when reports may take the fenced path and this process holds
   * no state of that run, the claim reads the run's state in the same statement and keeps it
   * (the snapshot cache): the attempt's report can then be decided from memory and written by
   * the step committer, like the reports after it, instead of locking the run first.
   * @throws WeftError TRANSIENT when the database stays unavailable.
   */
  async claim(tenantId: string, taskId: string, attempt: number, queue?: string, runId?: string): Promise<{ leaseToken: string; refused: boolean } | null> {
    if (!isUuid(tenantId) || !isUuid(taskId) || !isAttempt(attempt)) return null;
    const token = uuidv4();
    const { ctx } = this;
    const withState = ctx.fencedSteps && runId !== undefined && isUuid(runId) && !ctx.snapshots.has(tenantId, runId.toLowerCase());
    const claimed = await ctx.retrying('markRunning', () =>
      new TaskLeaseRepository(ctx.ds).claim(tenantId, taskId, attempt, token, ctx.runLeaseMs, ctx.testNow(), queue ?? null, withState),
    );
    if (claimed === null) return null;
    const state = claimed.state;
    // Kept only when no event of this process put a newer state meanwhile (its seq would be higher).
    if (state && state.run.status === RunStatus.Running && !ctx.snapshots.has(tenantId, claimed.runId)) {
      ctx.snapshots.put(tenantId, claimed.runId, state.run.eventSeq, snapshotNodes(state.tasks), state.run, state.at);
    }
    // The claim made room in the queue's window of admitted jobs: the backlog may fill it.
    void this.backlog.request(claimed.queue);
    // The task became RUNNING outside any event of its run: a watcher of the run reads it again.
    if (ctx.publisher.watchingRun?.(tenantId, claimed.runId)) {
      void ctx.publisher.publish({ tenantId, runId: claimed.runId, status: RunStatus.Running }).catch(() => undefined);
    }
    return { leaseToken: token, refused: claimed.access === 'denied' };
  }

  /**
   * A draining worker hands back executions it will not finish: one UPDATE per tenant puts each
   * task still RUNNING at that attempt with that token back to PENDING, clears its token and ends
   * its lease now (see `TaskLeaseRepository.release`). The caller enqueues the attempts' jobs again
   * so that another worker takes them at once. Returns the tokens handed back; a lease lost
   * meanwhile is not among them.
   * @throws WeftError TRANSIENT when the database stays unavailable (the leases then expire and
   * the lease sweep re-dispatches the tasks).
   */
  async release(leases: readonly HeldLease[]): Promise<Set<string>> {
    const { ctx } = this;
    const released = new Set<string>();
    const valid = leases.filter((l) => isUuid(l.tenantId) && isUuid(l.taskId) && isAttempt(l.attempt) && isUuid(l.leaseToken));
    const repo = new TaskLeaseRepository(ctx.ds);
    for (const [tenantId, group] of byTenant(valid)) {
      const done = await ctx.retrying('release', () => repo.release(tenantId, group, ctx.testNow()));
      for (const l of group) if (done.has(l.leaseToken.toLowerCase())) released.add(l.leaseToken);
    }
    return released;
  }

  /**
   * A worker's heartbeat over the leases it holds (executing or still reporting), across
   * tenants: one UPDATE per tenant extends each lease whose task is still RUNNING at that attempt
   * with that token to the database's now + `runLeaseMs`. Returns the lease tokens of the leases
   * it lost — superseded by another claim, re-dispatched, task finished, cancelled or reset, or
   * malformed — whose executions the worker aborts and does not report.
   * @throws WeftError TRANSIENT when the database stays unavailable (the worker keeps its leases
   * and tries again at the next beat).
   */
  async heartbeat(leases: readonly HeldLease[]): Promise<Set<string>> {
    const { ctx } = this;
    const lost = new Set(leases.map((l) => l.leaseToken));
    const valid = leases.filter((l) => isUuid(l.tenantId) && isUuid(l.taskId) && isAttempt(l.attempt) && isUuid(l.leaseToken));
    const repo = new TaskLeaseRepository(ctx.ds);
    for (const [tenantId, group] of byTenant(valid)) {
      const held = await ctx.retrying('heartbeat', () => repo.extend(tenantId, group, ctx.runLeaseMs, ctx.testNow()));
      for (const l of group) if (held.has(l.leaseToken.toLowerCase())) lost.delete(l.leaseToken);
    }
    return lost;
  }
}

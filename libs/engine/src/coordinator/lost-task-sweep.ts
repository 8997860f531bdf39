import { byTenant, claimLostTasks, TaskLeaseRepository, type ClaimedLostTask } from '@weft/persistence';
import { isWithWorker, jobId, type JobProbe } from '../index.js';
import type { BacklogDispatch } from './backlog-dispatch.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';

/** The scheduler's lost-task sweep: worker attempts whose lease expired and whose Bull job is gone go back to their backlog. */
export class LostTaskSweep {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly backlog: BacklogDispatch,
  ) {}

  /**
   * Puts back in their queue's backlog up to `limit` worker tasks whose lease expired and whose
   * Bull job is not live — Redis flushed or restarted empty, a job Bull failed and removed after
   * its worker died more often than `maxStalledCount`, a job a worker dropped, an admitted job
   * whose enqueue failed — and returns how many it put back.
   *
   * Candidates, across tenants, earliest expiry first: PENDING or RUNNING tasks with a queue
   * whose `lease_expires_at` passed by the database's clock (an admitted attempt: its admission +
   * `dispatchLeaseMs`; a claimed one: the last heartbeat + `runLeaseMs`; a QUEUED one has no
   * lease). They are
   * claimed through the `weft_claim_lost_tasks` function (`FOR UPDATE SKIP LOCKED`), which moves
   * their lease `dispatchLeaseMs` ahead, hiding them from other scheduler replicas. Then, per
   * tenant, each task is read back in the tenant's transaction and its job probed:
   *
   * - live (waiting, delayed, active — e.g. a worker holding it whose heartbeats cannot reach the
   *   database, or a backlog): nothing more; the pushed lease means it is probed again only after
   *   `dispatchLeaseMs`. A live job still delayed although the attempt is due by the database's
   *   clock is promoted (another process's clock measured its delay);
   * - not live: unless a new claim replaced its lease meanwhile, the task becomes QUEUED again
   *   with no lease or token (the previous execution's late report is ignored as stale, and the
   *   node slot it held is free) and its backlog row is ready, so fair dispatch admits it again in
   *   the same order as any other. A RUNNING task put back is executed again (at least once; the
   *   lease token fences its reports).
   *
   * A probe or enqueue failure is logged and tried again after `dispatchLeaseMs`.
   */
  async sweep(limit: number, probe: JobProbe): Promise<number> {
    const { ctx } = this;
    const claimed = await claimLostTasks(ctx.ds, { now: ctx.testNow(), limit, leaseMs: ctx.dispatchLeaseMs });
    let redispatched = 0;
    for (const [tenantId, claims] of byTenant(claimed)) {
      try {
        redispatched += await this.sweepTenant(tenantId, claims, probe);
      } catch (err) {
        ctx.log.warn(`lease sweep of tenant ${tenantId} failed for ${claims.length} task(s), retrying after ${ctx.dispatchLeaseMs} ms: ${message(err)}`);
      }
    }
    return redispatched;
  }

  /** One tenant's part of {@link sweep}; returns how many jobs it re-enqueued. */
  private async sweepTenant(tenantId: string, claims: readonly ClaimedLostTask[], probe: JobProbe): Promise<number> {
    const { ctx } = this;
    const { tasks, now } = await ctx.inTenant('lost-task sweep', tenantId, async (m) => {
      const now = await ctx.clock(m, tenantId);
      return {
        tasks: await new TaskLeaseRepository(m).swept(
          tenantId,
          claims.map((c) => c.taskId),
          now,
        ),
        now,
      };
    });
    const byId = new Map(tasks.map((r) => [r.taskId, r]));
    const leases = new TaskLeaseRepository(ctx.ds);
    let redispatched = 0;
    for (const claim of claims) {
      const r = byId.get(claim.taskId);
      if (!r || r.attempt !== claim.attempt || !isWithWorker(r.status) || !r.queue) continue;
      const id = jobId(r.taskId, r.attempt);
      try {
        if (await probe.hasJob(r.queue, id, { due: r.notBefore.getTime() <= now.getTime() })) continue;
        const queue = await ctx.retrying('lost-task sweep', () => leases.requeue(tenantId, r.taskId, r.attempt, r.leaseToken, ctx.testNow()));
        if (queue === null) continue;
        await this.backlog.request(queue);
        redispatched++;
        ctx.observe((o) => o.leaseRecovered({ tenantId, runId: r.runId, taskId: r.taskId, nodeId: r.nodeId, attempt: r.attempt, queue, status: r.status }));
        ctx.log.warn(
          `run ${r.runId}: lease of ${r.status} task ${r.nodeId} (job ${id}) expired and its job is gone from queue ${r.queue}; back in the queue's backlog`,
        );
      } catch (err) {
        ctx.log.warn(`run ${r.runId}: job ${id} not checked or put back in the backlog, retrying after ${ctx.dispatchLeaseMs} ms: ${message(err)}`);
      }
    }
    return redispatched;
  }
}

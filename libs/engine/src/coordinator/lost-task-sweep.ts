import { byTenant, claimLostTasks, TaskLeaseRepository, type ClaimedLostTask } from '@weft/persistence';
import { isWithWorker, jobId, type JobProbe } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';
import { jobOf, sensitiveTasks } from './jobs.js';

/** The scheduler's lost-task sweep: worker attempts whose lease expired and whose Bull job is gone. */
export class LostTaskSweep {
  constructor(private readonly ctx: CoordinatorContext) {}

  /**
   * Re-dispatches up to `limit` worker tasks whose lease expired and whose Bull job is not live —
   * Redis flushed or restarted empty, a job Bull failed and removed after its worker died more
   * often than `maxStalledCount`, a job a worker dropped — and returns how many it re-enqueued.
   *
   * Candidates, across tenants, earliest expiry first: PENDING, QUEUED or RUNNING tasks with a
   * queue whose `lease_expires_at` passed by the database's clock (a dispatched attempt: its
   * `not_before` + `dispatchLeaseMs`; a claimed one: the last heartbeat + `runLeaseMs`). They are
   * claimed through the `weft_claim_lost_tasks` function (`FOR UPDATE SKIP LOCKED`), which moves
   * their lease `dispatchLeaseMs` ahead, hiding them from other scheduler replicas. Then, per
   * tenant, each task is read back in the tenant's transaction and its job probed:
   *
   * - live (waiting, delayed, active — e.g. a worker holding it whose heartbeats cannot reach the
   *   database, or a backlog): nothing more; the pushed lease means it is probed again only after
   *   `dispatchLeaseMs`. A live job still delayed although the attempt is due by the database's
   *   clock is promoted (another process's clock measured its delay);
   * - not live: enqueued again under the same job id `taskId:attempt` (a concurrent duplicate is
   *   a no-op), its outbox row marked enqueued, and a RUNNING task's `lease_token` cleared unless
   *   a new claim already replaced it — the previous execution's lease is revoked, so its late
   *   report is ignored as stale. A RUNNING task re-dispatched is executed again (at least once;
   *   the lease token fences its reports).
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
    const { tasks, sensitive, now } = await ctx.inTenant('lost-task sweep', tenantId, async (m) => {
      const now = await ctx.clock(m, tenantId);
      const tasks = await new TaskLeaseRepository(m).swept(tenantId, claims.map((c) => c.taskId), now);
      return { tasks, now, sensitive: await sensitiveTasks(ctx, m, tenantId, tasks) };
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
        await ctx.dispatcher.enqueue([jobOf(r, sensitive.has(r.taskId))], now);
        redispatched++;
        const queue = r.queue;
        ctx.observe((o) => o.leaseRecovered({ tenantId, runId: r.runId, taskId: r.taskId, nodeId: r.nodeId, attempt: r.attempt, queue, status: r.status }));
        ctx.log.warn(`run ${r.runId}: lease of ${r.status} task ${r.nodeId} (job ${id}) expired and its job is gone from queue ${r.queue}; re-dispatched`);
      } catch (err) {
        ctx.log.warn(`run ${r.runId}: job ${id} not checked or re-dispatched, retrying after ${ctx.dispatchLeaseMs} ms: ${message(err)}`);
        continue;
      }
      await ctx
        .retrying('lost-task sweep', () => leases.revoke(tenantId, r.taskId, r.attempt, r.leaseToken, ctx.testNow()))
        .catch((err) => ctx.log.warn(`run ${r.runId}: job ${id} re-dispatched but its lease not revoked: ${message(err)}`));
    }
    return redispatched;
  }
}

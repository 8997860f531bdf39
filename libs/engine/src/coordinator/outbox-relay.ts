import { byTenant, claimOutbox, OutboxRepository, type ClaimedOutboxRow, type OutboxMark } from '@weft/persistence';
import type { TaskJob } from '../index.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';
import { jobOf, sensitiveTasks } from './jobs.js';

/** The scheduler's outbox relay: task attempts committed with their event but never enqueued. */
export class OutboxRelay {
  constructor(private readonly ctx: CoordinatorContext) {}

  /**
   * Enqueues up to `limit` outbox rows that were committed but never enqueued (a crash between
   * commit and enqueue, Redis down) once they are older than the grace period; returns how many
   * jobs it enqueued. Rows are claimed across tenants through the `weft_claim_outbox` function
   * (`FOR UPDATE SKIP LOCKED`, and a lease), then handled tenant by tenant inside the tenant's
   * transaction: jobs built from the task rows; rows whose task moved on (another attempt,
   * finished, cancelled, deleted) are marked done without a job. Idempotent: the job id is
   * `taskId:attempt`. Ages are by the database's clock.
   */
  async relay(limit: number): Promise<number> {
    const { ctx } = this;
    const claimed = await claimOutbox(ctx.ds, { now: ctx.testNow(), graceMs: ctx.outboxGraceMs, leaseMs: ctx.outboxLeaseMs, limit });
    let enqueued = 0;
    for (const [tenantId, rows] of byTenant(claimed)) {
      try {
        enqueued += await this.relayTenant(tenantId, rows);
      } catch (err) {
        ctx.log.warn(`outbox relay of tenant ${tenantId} failed for ${rows.length} row(s), retrying after the lease: ${message(err)}`);
      }
    }
    return enqueued;
  }

  /** Enqueues one tenant's claimed outbox rows whose task still waits for that attempt; marks them all done. */
  private async relayTenant(tenantId: string, rows: readonly ClaimedOutboxRow[]): Promise<number> {
    const { ctx } = this;
    const { found, sensitive, now } = await ctx.inTenant('outboxJobs', tenantId, async (m) => {
      const now = await ctx.clock(m, tenantId);
      const jobs = await new OutboxRepository(m).jobs(tenantId, rows.map((x) => x.outboxId));
      return { found: new Map(jobs.map((j) => [j.outboxId, j])), sensitive: await sensitiveTasks(ctx, m, tenantId, jobs), now };
    });
    const jobs: TaskJob[] = [];
    const live: OutboxMark[] = [];
    const stale: OutboxMark[] = [];
    for (const r of rows) {
      const row = found.get(r.outboxId);
      const current = row !== undefined && row.taskAttempt === r.attempt && (row.status === 'PENDING' || row.status === 'QUEUED');
      if (!current) {
        stale.push({ id: r.outboxId, attempt: r.attempt });
        continue;
      }
      live.push({ id: r.outboxId, attempt: r.attempt });
      jobs.push(jobOf(row, sensitive.has(row.taskId)));
    }
    let done = stale;
    if (jobs.length) {
      try {
        await ctx.dispatcher.enqueue(jobs, now);
        done = [...stale, ...live];
      } catch (err) {
        ctx.log.warn(`outbox relay could not enqueue ${jobs.length} job(s), retrying after the lease: ${message(err)}`);
        jobs.length = 0;
      }
    }
    if (done.length) {
      await new OutboxRepository(ctx.ds)
        .markRelayed(tenantId, done, ctx.testNow())
        .catch((err) => ctx.log.warn(`outbox rows enqueued but not marked (will be relayed again, harmlessly): ${message(err)}`));
    }
    return jobs.length;
  }
}

import { claimDueTimers } from '@weft/persistence';
import type { TimerFiring } from './after-commit.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';

/** The scheduler's due timers: WAIT wake-ups, WAIT_FOR_EVENT timeouts, SUBWORKFLOW wake-ups and retries. */
export class DueTimers {
  /** `timers` applies one TimerFired, as the run commands do. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly timers: TimerFiring,
  ) {}

  /**
   * Fires up to `limit` due timers across tenants and returns how many it fired. Claims them in
   * one short transaction (`FOR UPDATE SKIP LOCKED`, moving `wake_at` a lease ahead so another
   * scheduler replica skips them), then applies TimerFired per task in its tenant's transaction.
   * A timer whose event fails transiently is logged and fires again when the lease ends; one
   * fired twice (lease expired mid-way) is ignored by fencing. "Due" is by the database's clock.
   */
  async fireDue(limit: number): Promise<number> {
    const { ctx } = this;
    const claimed = await claimDueTimers(ctx.ds, ctx.testNow(), limit, ctx.timerLeaseMs);
    let fired = 0;
    for (const t of claimed) {
      try {
        await this.timers.fireTimer(t.tenantId, { runId: t.runId, taskId: t.taskId, nodeId: t.nodeId });
        fired++;
        ctx.observe((o) =>
          o.timerFired({
            tenantId: t.tenantId,
            runId: t.runId,
            taskId: t.taskId,
            nodeId: t.nodeId,
            lateMs: Math.max(0, t.claimedAt.getTime() - t.dueAt.getTime()),
          }),
        );
      } catch (err) {
        ctx.log.error(`timer of task ${t.taskId} (run ${t.runId}) not fired: ${message(err)}`);
      }
    }
    return fired;
  }
}

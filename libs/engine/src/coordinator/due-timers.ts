import { claimDueDeadlines, claimDueTimers, claimStartDeadlines } from '@weft/persistence';
import type { TimerFiring } from './after-commit.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { message } from './error-mapping.js';

/** Applies the time-out of a run whose deadline passed, as the run commands apply events. */
export interface RunTimeOuts {
  /** Applies RunTimedOut to run `runId` of tenant `tenantId`; resolves once it is committed and followed. */
  timeOut(tenantId: string, runId: string): Promise<unknown>;
  /** Applies StartTimedOut to the attempt `t` of run `runId`; resolves once it is committed and followed. */
  startTimedOut(tenantId: string, runId: string, t: { taskId: string; nodeId: string; attempt: number }): Promise<unknown>;
}

/**
 * The scheduler's due times: task timers (WAIT wake-ups, WAIT_FOR_EVENT timeouts, SUBWORKFLOW
 * wake-ups and retries), run deadlines (`timeout_seconds`) and the schedule-to-start deadlines of
 * attempts (`schedule_to_start_seconds`).
 */
export class DueTimers {
  /** `timers` applies one TimerFired, and one RunTimedOut, as the run commands do. */
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly timers: TimerFiring & RunTimeOuts,
  ) {}

  /**
   * Fires up to `limit` due timers across tenants, then up to `limit` due run deadlines, then
   * up to `limit` due schedule-to-start deadlines, and returns how many it fired in all. Claims them in one short transaction each (`FOR UPDATE
   * SKIP LOCKED`, moving `wake_at` or `deadline_lease` a lease ahead so another scheduler replica
   * skips them), then applies TimerFired per task, RunTimedOut per run, in its tenant's
   * transaction. One whose event fails transiently is logged and fires again when the lease
   * ends; one fired twice (lease expired mid-way) is ignored by the machine. "Due" is by the
   * database's clock.
   */
  async fireDue(limit: number): Promise<number> {
    return (await this.fireTimers(limit)) + (await this.fireDeadlines(limit)) + (await this.fireStartDeadlines(limit));
  }

  private async fireStartDeadlines(limit: number): Promise<number> {
    const { ctx } = this;
    const claimed = await claimStartDeadlines(ctx.ds, ctx.testNow(), limit, ctx.timerLeaseMs);
    let fired = 0;
    for (const d of claimed) {
      try {
        await this.timers.startTimedOut(d.tenantId, d.runId, { taskId: d.taskId, nodeId: d.nodeId, attempt: d.attempt });
        fired++;
      } catch (err) {
        ctx.log.error(`schedule-to-start deadline of task ${d.taskId} (run ${d.runId}) not applied: ${message(err)}`);
      }
    }
    return fired;
  }

  private async fireTimers(limit: number): Promise<number> {
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

  private async fireDeadlines(limit: number): Promise<number> {
    const { ctx } = this;
    const claimed = await claimDueDeadlines(ctx.ds, ctx.testNow(), limit, ctx.timerLeaseMs);
    let fired = 0;
    for (const d of claimed) {
      try {
        await this.timers.timeOut(d.tenantId, d.runId);
        fired++;
      } catch (err) {
        ctx.log.error(`deadline of run ${d.runId} not applied: ${message(err)}`);
      }
    }
    return fired;
  }
}
